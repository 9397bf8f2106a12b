// tests/cli/partition_test.cpp — `dblock exec` when the network to the database goes
// silent (a partition, made by dblock_test_relay between the holder and the server): the
// cut-off holder stops its command before a second client is granted the lock, exits 74
// in bounded time, still obeys SIGTERM, and reports a release that failed after its command
// succeeded (76). The commands are the relay binary's ticker mode, which appends
// CLOCK_REALTIME timestamps to a file every millisecond, so "the old holder's last action
// precedes the new holder's first" is checked on real timestamps.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "support/process.hpp"
#include "support/relay.hpp"
#include "support/servers.hpp"
#include "support/temp_dir.hpp"

namespace dblock::test {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

struct backend_case {
  const char* name;
  const char* url_env;
};

// What a ticker wrote: its pid (first line) and its timestamps (ns, CLOCK_REALTIME).
struct tick_log {
  pid_t pid = -1;
  std::vector<long long> ns;
};

tick_log read_ticks(const std::filesystem::path& p) {
  tick_log log;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no '\n' yet: a line still being written
    if (line.rfind("pid=", 0) == 0) {
      log.pid = std::stoi(line.substr(4));
      continue;
    }
    long long v = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
    if (ec == std::errc() && end == line.data() + line.size()) log.ns.push_back(v);
  }
  return log;
}

// Waits (at most `limit`) until the ticker at `p` wrote its first timestamp.
bool wait_for_ticks(const std::filesystem::path& p, std::chrono::milliseconds limit) {
  const auto until = clock_type::now() + limit;
  while (clock_type::now() < until) {
    if (!read_ticks(p).ns.empty()) return true;
    std::this_thread::sleep_for(10ms);  // polling a file, not a timing claim
  }
  return false;
}

long long realtime_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

// Running (a zombie waiting for its parent counts as gone).
bool process_running(pid_t pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto paren = s.rfind(')');
  return paren == std::string::npos || paren + 2 >= s.size() || s[paren + 2] != 'Z';
}

// Kills a ticker that outlived its dblock (a failing run must not leave it ticking).
struct ticker_guard {
  std::filesystem::path file;
  ~ticker_guard() {
    const pid_t pid = read_ticks(file).pid;
    if (process_running(pid)) ::kill(pid, SIGKILL);
  }
};

double ms_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

int trial_count() {
  const char* v = std::getenv("DBLOCK_PARTITION_TRIALS");
  const int n = v ? std::atoi(v) : 0;
  return n > 0 ? n : 3;
}

class ExecPartition : public ::testing::TestWithParam<backend_case> {
 protected:
  void SetUp() override {
    auto url = env_url(GetParam().url_env);
    if (!url) {
      if (require_all()) FAIL() << GetParam().url_env << " is not set";
      GTEST_SKIP() << GetParam().url_env << " is not set";
    }
    url_ = *url;
    auto m = run_process(dblock({"migrate"}, url_, 60s));
    ASSERT_EQ(m.exit_code, 0) << m.err;
  }

  // dblock --url URL ARGS in the test's folder, DBLOCK_URL unset, killed after `timeout`
  // (counted from the start of wait()).
  process_options dblock(std::vector<std::string> args, const std::string& url, std::chrono::milliseconds timeout) {
    process_options o;
    o.argv = {DBLOCK_BINARY, "--url", url};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.env["DBLOCK_URL"] = std::nullopt;
    o.cwd = dir_.path();
    o.timeout = timeout;
    return o;
  }

  static void expect_one_dblock_line(const process_result& r) {
    EXPECT_TRUE(r.err.starts_with("dblock: ")) << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
  }

  temp_dir dir_{"dblock-partition"};
  std::string url_;
};

// The holder's network goes silent; a second client waits on the same name directly. The
// holder must stop its command before the second runs, and exit 74 in bounded time.
TEST_P(ExecPartition, PartitionTrials) {
  const int trials = trial_count();
  std::vector<double> gaps_ms;
  double max_exit_after_cut_ms = 0;
  for (int t = 0; t < trials; ++t) {
    SCOPED_TRACE("trial " + std::to_string(t));
    const std::string name = "partition_" + random_hex(6);
    const auto ticks = dir_.path() / ("holder_" + std::to_string(t));
    const auto second_ticks = dir_.path() / ("second_" + std::to_string(t));
    ticker_guard guard{ticks};
    relay r(relay::target_of(url_));

    auto holder = start_process(dblock({"exec", "--name", name, "--ttl", "2s", "--grace", "200ms", "--",
                                        DBLOCK_RELAY, "--tick", ticks.string()},
                                       r.url_through(url_), 10s));
    ASSERT_TRUE(wait_for_ticks(ticks, 15s)) << "the holder never started its command";
    std::this_thread::sleep_for(700ms);  // renewals go through the relay meanwhile
    ASSERT_GE(r.connections(), 1) << "the holder does not talk through the relay";

    r.pause();
    const auto cut = clock_type::now();
    auto second = start_process(dblock({"exec", "--name", name, "--wait", "15s", "--", DBLOCK_RELAY, "--tick",
                                        second_ticks.string(), "--once"},
                                       url_, 30s));
    const auto h = holder.wait();
    const double exit_after_cut = ms_between(cut, clock_type::now());
    const auto s = second.wait();
    r.resume();

    EXPECT_EQ(s.exit_code, 0) << s.err;
    EXPECT_EQ(h.exit_code, 74) << h.err;
    expect_one_dblock_line(h);
    EXPECT_LT(exit_after_cut, 2000 + 200 + 5000) << "TTL + grace + 5 s after the cut";
    max_exit_after_cut_ms = std::max(max_exit_after_cut_ms, exit_after_cut);

    const auto first_log = read_ticks(ticks);
    const auto second_log = read_ticks(second_ticks);
    ASSERT_FALSE(first_log.ns.empty());
    ASSERT_EQ(second_log.ns.size(), 1u) << "the second client's command did not run once";
    EXPECT_FALSE(process_running(first_log.pid)) << "the cut-off holder's command still runs";
    const double gap = static_cast<double>(second_log.ns[0] - first_log.ns.back()) / 1e6;
    EXPECT_GT(gap, 0.0) << "the new holder acted before the cut-off holder's last action";
    gaps_ms.push_back(gap);
  }
  if (gaps_ms.empty()) return;
  std::sort(gaps_ms.begin(), gaps_ms.end());
  std::printf(
      "partition: backend=%s trials=%zu min_gap_ms=%.1f median_gap_ms=%.1f max_gap_ms=%.1f "
      "max_exit_after_cut_ms=%.0f\n",
      GetParam().name, gaps_ms.size(), gaps_ms.front(), gaps_ms[gaps_ms.size() / 2], gaps_ms.back(),
      max_exit_after_cut_ms);
  std::fflush(stdout);
}

// SIGTERM always ends `dblock exec`, even while every database call hangs.
TEST_P(ExecPartition, ExecEndsOnSignalDuringPartition) {
  const std::string name = "partition_sig_" + random_hex(6);
  const auto ticks = dir_.path() / "holder";
  ticker_guard guard{ticks};
  relay r(relay::target_of(url_));
  auto holder = start_process(dblock(
      {"exec", "--name", name, "--ttl", "10s", "--grace", "200ms", "--", DBLOCK_RELAY, "--tick", ticks.string()},
      r.url_through(url_), 5s));
  ASSERT_TRUE(wait_for_ticks(ticks, 15s)) << "the holder never started its command";
  const pid_t ticker = read_ticks(ticks).pid;
  ASSERT_GT(ticker, 0);
  std::this_thread::sleep_for(300ms);
  r.pause();
  // Long enough for a renewal to be stuck in the silent network, well before the lease
  // (10 s) could run out locally.
  std::this_thread::sleep_for(3s);
  ASSERT_EQ(::kill(holder.pid(), SIGTERM), 0);
  const auto sent = clock_type::now();
  const auto h = holder.wait();  // killed and reported as timed out after 5 s
  const double took = ms_between(sent, clock_type::now());
  EXPECT_FALSE(h.timed_out) << "dblock exec ignored SIGTERM during the partition";
  EXPECT_TRUE(h.exit_code == 74 || h.exit_code == 128 + SIGTERM) << h.exit_code << " " << h.err;
  EXPECT_LT(took, 5000.0);
  RecordProperty("exit_after_sigterm_ms", static_cast<int>(took));
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !process_running(ticker);
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone) << "the command outlived dblock exec";
}

// The command is a shell that runs the ticker in the background and waits: when the lease
// is lost, everything the command started is stopped, not only the shell (the command runs
// in a process group of its own).
TEST_P(ExecPartition, WhatTheCommandStartedIsStoppedWithIt) {
  const std::string name = "partition_grp_" + random_hex(6);
  const auto ticks = dir_.path() / "holder";
  ticker_guard guard{ticks};
  relay r(relay::target_of(url_));
  auto holder = start_process(dblock({"exec", "--name", name, "--ttl", "2s", "--grace", "200ms", "--", "sh", "-c",
                                      "\"$0\" --tick \"$1\" & wait", DBLOCK_RELAY, ticks.string()},
                                     r.url_through(url_), 15s));
  ASSERT_TRUE(wait_for_ticks(ticks, 15s)) << "the holder never started its command";
  const pid_t grandchild = read_ticks(ticks).pid;
  ASSERT_GT(grandchild, 0);
  std::this_thread::sleep_for(500ms);
  r.pause();
  const auto h = holder.wait();
  EXPECT_EQ(h.exit_code, 74) << h.err;
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !process_running(grandchild);
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone) << "a process the command started outlived the lease";
}

// The command succeeds, then the release cannot reach the database: exit 76, one line.
TEST_P(ExecPartition, ReleaseFailureAfterSuccessExits76) {
  const std::string name = "partition_rel_" + random_hex(6);
  const auto ticks = dir_.path() / "holder";
  ticker_guard guard{ticks};
  relay r(relay::target_of(url_));
  // TTL 5 s: the lease cannot run out locally before the 1 s command ends.
  auto holder = start_process(dblock({"exec", "--name", name, "--ttl", "5s", "--grace", "200ms", "--", DBLOCK_RELAY,
                                      "--tick", ticks.string(), "--sleep-ms", "1000"},
                                     r.url_through(url_), 15s));
  ASSERT_TRUE(wait_for_ticks(ticks, 15s)) << "the holder never started its command";
  std::this_thread::sleep_for(450ms);
  r.pause();
  const long long cut_ns = realtime_ns();
  const auto cut = clock_type::now();
  const auto h = holder.wait();
  const double took = ms_between(cut, clock_type::now());
  const auto log = read_ticks(ticks);
  ASSERT_FALSE(log.ns.empty());
  ASSERT_GT(log.ns.back(), cut_ns) << "precondition: the network went silent before the command ended";
  EXPECT_GE(log.ns.back() - log.ns.front(), 900'000'000LL) << "the command was stopped instead of finishing";
  EXPECT_EQ(h.exit_code, 76) << h.err;
  expect_one_dblock_line(h);
  EXPECT_NE(h.err.find("releas"), std::string::npos) << h.err;
  EXPECT_LT(took, 10'000.0);
  RecordProperty("exit_after_cut_ms", static_cast<int>(took));
}

INSTANTIATE_TEST_SUITE_P(Databases, ExecPartition,
                         ::testing::Values(backend_case{"postgresql", pg_url_env},
                                           backend_case{"mariadb", mysql_url_env}),
                         [](const ::testing::TestParamInfo<backend_case>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace dblock::test
