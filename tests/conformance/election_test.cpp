// tests/conformance/election_test.cpp — leader election (dblock/election.hpp) on every
// combination: one leader at a time over many threads in two processes (leaders counted,
// must never exceed one; leader() must name the one campaigning; lost updates counted),
// resign and expiry hand over, observe() sees each change, and loss of leadership goes
// through on_lost.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "conformance/fixture.hpp"
#include "dblock/election.hpp"

namespace dblock::test {
namespace {

class ElectionConformance : public conformance {};

TEST_P(ElectionConformance, LeaderAgreesAndResignHandsOver) {
  auto db = open();
  session a(db, quick()), b(open(), quick());
  const auto name = unique_name("e");
  election ea(a, name), eb(b, name);
  EXPECT_FALSE(ea.leader());
  auto lead = ea.campaign("node-a", 0ms);
  EXPECT_TRUE(lead.is_held());
  auto seen = eb.leader();
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->value, "node-a");
  EXPECT_EQ(seen->fence, lead.fence());
  EXPECT_GT(seen->expires_in.count(), 0);
  EXPECT_FALSE(eb.try_campaign("node-b")) << "two leaders";
  auto waiting = std::async(std::launch::async, [&] { return eb.campaign("node-b", 30s); });
  lead.resign();
  EXPECT_FALSE(lead.is_held());
  auto next = waiting.get();
  auto now = ea.leader();
  ASSERT_TRUE(now);
  EXPECT_EQ(now->value, "node-b");
  EXPECT_EQ(now->fence, next.fence());
  EXPECT_GT(next.fence(), lead.fence());
  auto by_url = current_leader(db, name);
  ASSERT_TRUE(by_url);
  EXPECT_EQ(by_url->value, "node-b");
  next.resign();
  EXPECT_FALSE(ea.leader());
}

TEST_P(ElectionConformance, ACampaignTimesOutNamingTheLeaderAndBadValuesAreRefused) {
  auto db = open();
  session a(db, quick()), b(open(), quick());
  const auto name = unique_name("e");
  election ea(a, name), eb(b, name);
  auto lead = ea.campaign("node-a", 0ms);
  try {
    (void)eb.campaign("node-b", 100ms);
    ADD_FAILURE() << "became a second leader";
  } catch (const timeout_error& e) {
    EXPECT_NE(std::string(e.what()).find("node-a"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)eb.campaign(std::string(4097, 'v'), 0ms), invalid_argument);
  EXPECT_THROW((void)eb.campaign("\xff", 0ms), invalid_argument);
  EXPECT_THROW(election(a, ""), invalid_argument);
}

// A leader that stops renewing (its process exits without resigning) is replaced once its
// lease runs out, by the server's clock.
TEST_P(ElectionConformance, ExpiryHandsOver) {
  const auto name = unique_name("e");
  const auto u = url();
  { auto migrated = open(); }  // the child opens the same database
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    try {
      auto cdb = dblock::open(u);
      session_options o;
      o.ttl = 300ms;
      o.lock_delay = 0ms;
      session s(cdb, o);
      election e(s, name);
      auto lead = e.campaign("crashed", 0ms);
      const std::int64_t f = lead.fence();
      (void)!::write(fds[1], &f, sizeof f);
      ::_exit(0);  // no resign, no release: a crash
    } catch (...) {
      ::_exit(2);
    }
  }
  ::close(fds[1]);
  std::int64_t old_fence = 0;
  EXPECT_EQ(::read(fds[0], &old_fence, sizeof old_fence), static_cast<ssize_t>(sizeof old_fence));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto db = open();
  session s(db, quick());
  election e(s, name);
  auto lead = e.campaign("survivor", 30s);
  EXPECT_GT(lead.fence(), old_fence);
  auto now = e.leader();
  ASSERT_TRUE(now);
  EXPECT_EQ(now->value, "survivor");
}

TEST_P(ElectionConformance, LostLeadershipGoesThroughOnLost) {
  auto db = open();
  std::mutex mu;
  std::condition_variable cv;
  std::vector<lost_lease> lost;
  auto o = quick(600ms);
  o.on_lost = [&](const lost_lease& l) {
    std::lock_guard g(mu);
    lost.push_back(l);
    cv.notify_all();
  };
  session s(db, o);
  const auto name = unique_name("e");
  election e(s, name);
  auto lead = e.campaign("v", 0ms);
  auto other = open();
  raw_query(other, "DELETE FROM dblock_locks WHERE name = $1", {name});
  {
    std::unique_lock g(mu);
    EXPECT_TRUE(cv.wait_for(g, 30s, [&] { return !lost.empty(); })) << "on_lost never fired";
    ASSERT_FALSE(lost.empty());
    EXPECT_EQ(lost.front().name, name);
    EXPECT_EQ(lost.front().fence, lead.fence());
  }
  EXPECT_FALSE(lead.is_held());
  EXPECT_FALSE(e.leader());
  EXPECT_THROW(lead.resign(), lock_lost);
}

TEST_P(ElectionConformance, ObserveSeesEachChange) {
  auto db = open();
  session a(db, quick()), b(open(), quick()), watcher(open(), quick());
  const auto name = unique_name("e");
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> events;  // value, or "-" for no leader
  election w(watcher, name);
  auto obs = w.observe(
      [&](const std::optional<leader_info>& l) {
        std::lock_guard g(mu);
        events.push_back(l ? l->value : "-");
        cv.notify_all();
      },
      observe_options{50ms});
  auto saw = [&](const std::string& v) {
    std::unique_lock g(mu);
    return cv.wait_for(g, 30s, [&] { return !events.empty() && events.back() == v; });
  };
  EXPECT_TRUE(saw("-"));
  election ea(a, name), eb(b, name);
  auto la = ea.campaign("a", 0ms);
  EXPECT_TRUE(saw("a"));
  la.resign();
  EXPECT_TRUE(saw("-"));
  auto lb = eb.campaign("b", 0ms);
  EXPECT_TRUE(saw("b"));
  obs.stop();
  std::lock_guard g(mu);
  for (std::size_t i = 1; i < events.size(); ++i) EXPECT_NE(events[i], events[i - 1]) << "a repeated event";
}

// Threads in two processes, each its own session, campaign in turn; a leader counts itself
// in a shared counter row under its leadership (read, then write) and checks that leader()
// names it. Violations: leader() naming someone else or nobody, an error or timeout; a
// counter behind the number of leaderships is two leaders at once.
TEST_P(ElectionConformance, OneLeaderAtATimeAcrossThreadsAndProcesses) {
  const int threads = 5, rounds = kind() == dialect::sqlite ? 8 : 15;
  const auto name = unique_name("e");
  const auto table = unique_name("ctr");
  {
    auto db = open();
    raw_exec(db, "CREATE TABLE " + table + " (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)");
    raw_query(db, "INSERT INTO " + table + " (id, v) VALUES (1, 0)");
  }
  auto work = [&](int proc) -> int {
    std::atomic<int> violations{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        try {
          auto db = open();
          session s(db, quick());
          election e(s, name);
          const std::string me = std::to_string(proc) + ":" + std::to_string(t);
          for (int r = 0; r < rounds; ++r) {
            auto lead = e.campaign(me, 60s);
            auto l = e.leader();
            if (!l || l->value != me || l->fence != lead.fence()) ++violations;
            auto v = query_int(db, "SELECT v FROM " + table + " WHERE id = 1");
            std::this_thread::yield();
            raw_query(db, "UPDATE " + table + " SET v = $1 WHERE id = 1", {v + 1});
            lead.resign();
          }
        } catch (const std::exception& ex) {
          ++violations;
          std::fprintf(stderr, "worker: %s\n", ex.what());
        }
      });
    for (auto& th : ts) th.join();
    return violations.load();
  };
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(work(2) == 0 ? 0 : 1);
  EXPECT_EQ(work(1), 0) << "violations in this process";
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "violations in the child";
  auto db = open();
  EXPECT_EQ(query_int(db, "SELECT v FROM " + table + " WHERE id = 1"), 2 * threads * rounds) << "two leaders at once";
  raw_exec(db, "DROP TABLE " + table);
}

}  // namespace

DBLOCK_CONFORMANCE_SUITE(ElectionConformance);

}  // namespace dblock::test
