// tests/unit/wake_file_test.cpp — lib/core/wake_file.hpp without a database: the record a
// release leaves is taken only by the ticket and owner it names, a sleeper wakes on a post
// from another process and not without one, a hand-off wakes only the ticket it names,
// and a file that is not a wake file is never used.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/wake_file.hpp"

namespace dblock::test {
namespace {

using namespace std::chrono_literals;
using detail::wake_file;

class WakeFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dblock-wake-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    db_ = dir_ + "/app.db";
    std::ofstream(db_) << "";  // the database file: the wake file takes its permissions
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_, db_;
};

TEST_F(WakeFile, ARecordIsTakenOnlyByTheTicketAndOwnerItNames) {
  auto w = wake_file::for_database(db_);
  ASSERT_TRUE(w);
  EXPECT_TRUE(std::filesystem::exists(db_ + "-dblock-wake"));
  const std::string owner = "0123456789abcdef0123456789abcdef";
  const auto before = w->generation("jobs");
  w->post("jobs", owner, 42, 7);
  EXPECT_EQ(w->generation("jobs"), before + 1);
  EXPECT_EQ(w->handed("jobs", owner, 42), 7);
  EXPECT_FALSE(w->handed("jobs", owner, 43)) << "another ticket";
  EXPECT_FALSE(w->handed("jobs", "0123456789abcdef0123456789abcdee", 42)) << "another owner";
  EXPECT_FALSE(w->handed("jobs", owner.substr(0, 31), 42)) << "a prefix of the owner";
  EXPECT_FALSE(w->handed("other", owner, 42)) << "another name";
  // A plain release (no hand-off) leaves the record but says nothing new; a later hand-off
  // of the slot replaces it.
  w->post("jobs", {}, 0, 0);
  EXPECT_EQ(w->handed("jobs", owner, 42), 7);
  w->post("jobs", owner, 44, 8);
  EXPECT_FALSE(w->handed("jobs", owner, 42));
  EXPECT_EQ(w->handed("jobs", owner, 44), 8);
  // An owner token too long for the slot gets no record: its waiter reads its grant.
  const std::string long_owner(wake_file::max_owner + 1, 'x');
  w->post("jobs", long_owner, 45, 9);
  EXPECT_FALSE(w->handed("jobs", long_owner, 45));
}

TEST_F(WakeFile, EverySessionOfAProcessSharesOneMappingAndOtherProcessesSeeIt) {
  auto a = wake_file::for_database(db_);
  auto b = wake_file::for_database(db_);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a.get(), b.get());
  const auto seen = a->generation("n");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto w = wake_file::for_database(db_);  // inherited mapping, same file
    if (!w) ::_exit(2);
    w->post("n", "abc", 5, 11);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(a->generation("n"), seen + 1);
  EXPECT_EQ(a->handed("n", "abc", 5), 11);
}

TEST_F(WakeFile, ASleeperWakesOnAPostFromAnotherProcessAndNotWithoutOne) {
  auto w = wake_file::for_database(db_);
  ASSERT_TRUE(w);
  // Without a post the sleep lasts until its bound.
  auto seen = w->generation("q");
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(w->wait("q", seen, t0 + 100ms));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 100ms);
  // A post made before the sleep: no sleep at all.
  w->post("q", {}, 0, 0);
  EXPECT_TRUE(w->wait("q", seen, std::chrono::steady_clock::now() + 10s));
  // A post from another process 200 ms into a sleep bounded at 20 s ends it.
  seen = w->generation("q");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::this_thread::sleep_for(200ms);
    wake_file::for_database(db_)->post("q", {}, 0, 0);
    ::_exit(0);
  }
  t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(w->wait("q", seen, t0 + 20s));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s) << "the post did not wake the sleeper";
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
}

// A hand-off wakes the waiter it made the holder, not the rest of the line; a release that
// hands nothing wakes every waiter. Ticket 5 sleeps for up to 20 s while another process
// hands the name to ticket 6 (its bit differs) and then to ticket 5.
TEST_F(WakeFile, AHandOffWakesOnlyTheTicketItHandedTheName) {
  auto w = wake_file::for_database(db_);
  ASSERT_TRUE(w);
  auto seen = w->generation("line");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto c = wake_file::for_database(db_);
    std::this_thread::sleep_for(200ms);
    c->post("line", "other", 6, 10);
    (void)!::write(ready[1], "x", 1);
    std::this_thread::sleep_for(300ms);
    c->post("line", "mine", 5, 11);
    ::_exit(0);
  }
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(w->wait("line", seen, t0 + 20s, 5));
  const auto slept = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(w->generation("line"), seen + 2) << "woken by the hand-off to ticket 6";
  EXPECT_GE(slept, 450ms) << "woken by the hand-off to ticket 6";
  EXPECT_LT(slept, 10s);
  EXPECT_EQ(w->handed("line", "mine", 5), 11);
  char x;
  ASSERT_EQ(::read(ready[0], &x, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  // A plain release wakes a ticket's sleeper too.
  seen = w->generation("line");
  const pid_t second = ::fork();
  ASSERT_GE(second, 0);
  if (second == 0) {
    std::this_thread::sleep_for(200ms);
    wake_file::for_database(db_)->post("line", {}, 0, 0);
    ::_exit(0);
  }
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_TRUE(w->wait("line", seen, t1 + 20s, 7));
  EXPECT_LT(std::chrono::steady_clock::now() - t1, 10s);
  ASSERT_EQ(::waitpid(second, &status, 0), second);
}

TEST_F(WakeFile, NoWakeFileForAMemoryDatabaseARelativePathOrAForeignFile) {
  EXPECT_FALSE(wake_file::for_database(""));
  EXPECT_FALSE(wake_file::for_database("app.db"));
  EXPECT_FALSE(wake_file::for_database(dir_ + "/missing.db")) << "no database file: nothing to wake";
  const std::string other = dir_ + "/other.db";
  std::ofstream(other) << "";
  {
    std::ofstream f(other + "-dblock-wake");
    f << std::string(200, 'z');  // not zeroes, not our magic
  }
  EXPECT_FALSE(wake_file::for_database(other));
}

}  // namespace
}  // namespace dblock::test
