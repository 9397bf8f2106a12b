// tests/faults/failover_test.cpp — PostgreSQL primary + streaming standby on loopback
// (scripts/servers with DBLOCK_SERVERS_PG_STANDBY, a pair of the test's own: a failover
// ends its primary), clients on the pair's multi-host URL:
//   - fences stay increasing across a promotion that lost the last grants;
//   - the replication check reports an asynchronous standby (warning, counter, refusal)
//     and stays silent on a synchronous one;
//   - the fault workload with the primary crashed and the standby promoted mid-run:
//     synchronous, no violation at all; asynchronous, fences never go backwards (the
//     overlap asynchronous replication allows is reported, the documented limit).
// The workload runs are short for CI (8 s, one failover each); for a soak set
// DBLOCK_TEST_FAILOVER_SECONDS (length of each run) and DBLOCK_TEST_FAILOVER_ROUNDS (runs per
// test, each on a fresh pair with one failover; default 1). Skipped without DBLOCK_TEST_PG_URL (no PostgreSQL on this machine),
// failed then under DBLOCK_TEST_REQUIRE_ALL=1.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <pqxx/pqxx>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "dblock/dblock.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace dblock::faults {
namespace {

using json = nlohmann::json;

constexpr std::int64_t timeline_unit = std::int64_t{1} << 40;

std::optional<std::string> env(const char* var) {
  const char* v = std::getenv(var);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

bool require_all() { return env("DBLOCK_TEST_REQUIRE_ALL") == "1"; }

session_options with_policy(replication_policy p, std::chrono::milliseconds ttl = std::chrono::seconds(30)) {
  session_options o;
  o.ttl = ttl;
  o.replication = p;
  return o;
}

// A primary + standby of the test's own, stopped and removed at the end.
class pg_pair {
 public:
  explicit pg_pair(const std::string& mode) : dir_("dblock-ha") {
    run("start", {{"DBLOCK_SERVERS_ONLY", "pg"}, {"DBLOCK_SERVERS_PG_STANDBY", mode}});
    std::ifstream in(dir_.path() / "env");
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("export ")) continue;
      auto eq = line.find('=');
      std::string value = line.substr(eq + 1), clean;
      for (char c : value)
        if (c != '\\') clean += c;  // the env file is %q-quoted
      vars_[line.substr(7, eq - 7)] = clean;
    }
  }
  ~pg_pair() {
    try {
      run("stop");
    } catch (...) {
    }
  }
  pg_pair(const pg_pair&) = delete;
  pg_pair& operator=(const pg_pair&) = delete;

  [[nodiscard]] std::string primary() const { return vars_.at("DBLOCK_TEST_PG_URL"); }
  [[nodiscard]] std::string standby() const { return vars_.at("DBLOCK_TEST_PG_STANDBY_URL"); }
  [[nodiscard]] std::string multi() const { return vars_.at("DBLOCK_TEST_PG_MULTI_URL"); }
  [[nodiscard]] std::string dir() const { return dir_.path().string(); }

  // scripts/servers COMMAND DIR; throws with its output on failure.
  void run(const std::string& command, std::map<std::string, std::optional<std::string>> extra = {}) const {
    test::process_options o;
    o.argv = {"/bin/bash", DBLOCK_SERVERS_SCRIPT, command, dir()};
    o.env = std::move(extra);
    o.timeout = std::chrono::milliseconds(120'000);
    auto r = test::run_process(o);
    if (r.exit_code != 0) throw std::runtime_error("scripts/servers " + command + " failed:\n" + r.err);
  }

 private:
  test::temp_dir dir_;
  std::map<std::string, std::string> vars_;
};

class Failover : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!env("DBLOCK_TEST_PG_URL")) {
      if (require_all()) FAIL() << "DBLOCK_TEST_PG_URL is not set (no PostgreSQL servers)";
      GTEST_SKIP() << "DBLOCK_TEST_PG_URL is not set: PostgreSQL is not available here";
    }
  }
};

// Keeps acquiring until the new primary answers (the multi-host URL finds it).
template <typename F>
auto until_it_answers(F&& f) -> decltype(f()) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    try {
      return f();
    } catch (const connection_error&) {
      if (std::chrono::steady_clock::now() > deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

// The standby stops receiving WAL (its primary_conninfo emptied), grants go on on the
// primary, then the primary crashes and the standby is promoted: the new primary's
// sequence is behind fences already handed out. The timeline keeps fences increasing.
TEST_F(Failover, FencesIncreaseAcrossAPromotionThatLostGrants) {
  pg_pair pair("async");
  {
    pqxx::connection c(pair.primary());
    EXPECT_EQ(pqxx::nontransaction(c).exec("SELECT 1").size(), 1u);
  }
  auto db = dblock::open(pair.multi());
  (void)db.migrate({.replication = replication_policy::ignore});
  session s(db, with_policy(replication_policy::ignore, std::chrono::seconds(5)));
  std::int64_t before = 0;
  for (int i = 0; i < 5; ++i) {
    auto l = s.try_acquire("ha-fence");
    ASSERT_TRUE(l);
    EXPECT_GT(l->fence(), before);
    before = l->fence();
    l->release();
  }
  EXPECT_EQ(before / timeline_unit, 1) << "a fresh cluster runs on timeline 1";

  // Cut the standby off (a replication lag that never catches up), then grant more.
  pair.run("detach-pg-standby");
  std::int64_t lost = before;
  // More than 32 grants: a sequence logs 32 values ahead, which a standby replays.
  for (int i = 0; i < 100; ++i) {
    auto l = s.try_acquire("ha-fence-" + std::to_string(i % 3));
    ASSERT_TRUE(l);
    EXPECT_GT(l->fence(), lost / timeline_unit * timeline_unit);
    lost = std::max(lost, l->fence());
    l->release();
  }

  pair.run("failover-pg");
  auto db2 = dblock::open(pair.multi());
  session s2(db2, with_policy(replication_policy::ignore, std::chrono::seconds(5)));
  // Waits: the last release may not have reached the standby (releases do not wait for
  // their WAL flush), and then the old row is back until it expires.
  auto l = std::optional<lease>(until_it_answers([&] { return s2.acquire("ha-fence", std::chrono::seconds(15)); }));
  std::cout << "[ failover ] last fence before: " << lost << " (timeline " << lost / timeline_unit << ", sequence "
            << lost % timeline_unit << "), first after: " << l->fence() << " (timeline " << l->fence() / timeline_unit
            << ", sequence " << l->fence() % timeline_unit << ")\n";
  EXPECT_GT(l->fence(), lost) << "a fence went backwards across the promotion";
  EXPECT_EQ(l->fence() / timeline_unit, 2) << "the promoted standby runs on timeline 2";
  // The loss really happened: the new primary's sequence is not past the lost grants.
  EXPECT_LE(l->fence() % timeline_unit, lost % timeline_unit) << "no grant was lost: the test proves nothing";
}

TEST_F(Failover, AsynchronousStandbyIsReported) {
  pg_pair pair("async");
  auto db = dblock::open(pair.primary());
  std::vector<std::string> warnings;
  std::mutex mu;
  on_warning([&](const std::string& line) {
    std::lock_guard lock(mu);
    warnings.push_back(line);
  });
  const auto before = metrics()[counter::replication_unsafe];
  (void)db.migrate();
  auto rep = check_replication(db);
  EXPECT_TRUE(rep.can_lose_grants);
  EXPECT_EQ(rep.standbys, 1);
  ASSERT_FALSE(rep.reasons.empty());
  EXPECT_NE(rep.reasons[0].find("asynchronously"), std::string::npos) << rep.reasons[0];
  {
    session s(db);  // the migrate above already warned for this handle
  }
  auto db2 = dblock::open(pair.primary());
  {
    session s(db2);  // the first session on a new handle warns
  }
  EXPECT_EQ(metrics()[counter::replication_unsafe] - before, 2u);
  {
    std::lock_guard lock(mu);
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_NE(warnings[0].find("(migrate)"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[1].find("(session start)"), std::string::npos) << warnings[1];
    EXPECT_EQ(warnings[1].find("dblock_pw"), std::string::npos) << "a warning shows the password";
  }
  on_warning({});
  EXPECT_THROW([&] { session s(db2, with_policy(replication_policy::refuse)); }(), unsafe_replication);
  EXPECT_THROW((void)db2.migrate({.replication = replication_policy::refuse}), unsafe_replication);
  EXPECT_NO_THROW([&] { session s(db2, with_policy(replication_policy::ignore)); }());

  // The command prints the warning on stderr, and migrates all the same.
  test::process_options o;
  o.argv = {DBLOCK_CLI, "--url", pair.primary(), "migrate"};
  auto r = test::run_process(o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("dblock: warning: replication of"), std::string::npos) << r.err;
  // --replication refuse: one error line, a failure exit; ignore: silence.
  o.argv = {DBLOCK_CLI, "--url", pair.primary(), "--replication", "refuse", "migrate"};
  r = test::run_process(o);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("refused (replication_policy::refuse)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("dblock_pw"), std::string::npos) << "the error shows the password";
  o.argv = {DBLOCK_CLI, "--url", pair.primary(), "--replication", "ignore", "migrate"};
  r = test::run_process(o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

TEST_F(Failover, SynchronousStandbyIsNotReported) {
  pg_pair pair("sync");
  auto db = dblock::open(pair.multi());
  (void)db.migrate({.replication = replication_policy::refuse});
  auto rep = check_replication(db);
  EXPECT_FALSE(rep.can_lose_grants) << (rep.reasons.empty() ? "" : rep.reasons[0]);
  EXPECT_EQ(rep.standbys, 1);
  EXPECT_NO_THROW([&] { session s(db, with_policy(replication_policy::refuse)); }());
}

// The primary crashes and nothing is promoted for longer than the lease: the holder's
// renewals find no writable server, so it must be told its lease is lost by its local
// deadline. Once the standby is promoted (synchronous: the grant is there), the name is
// granted again only after the lease and its lock delay ran out, with a larger fence.
TEST_F(Failover, HolderWithoutAWritablePrimaryIsToldItsLeaseIsLost) {
  pg_pair pair("sync");
  auto db = dblock::open(pair.multi());
  (void)db.migrate({.replication = replication_policy::refuse});
  std::atomic<int> lost{0};
  session_options o = with_policy(replication_policy::refuse, std::chrono::milliseconds(1500));
  o.lock_delay = std::chrono::milliseconds(500);
  o.on_lost = [&](const lost_lease&) { ++lost; };
  session s(db, o);
  auto l = s.try_acquire("ha-lost");
  ASSERT_TRUE(l);
  const auto fence = l->fence();
  pair.run("crash-pg");
  const auto deadline = l->trusted_until();  // no renewal can move it any more
  // Nothing writable answers: by the local deadline the lease is no longer trusted.
  while (std::chrono::steady_clock::now() < deadline + std::chrono::milliseconds(200) && l->is_held())
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto noticed = std::chrono::steady_clock::now();
  EXPECT_FALSE(l->is_held()) << "still trusted after its local deadline without a primary";
  EXPECT_LE(noticed, deadline + std::chrono::milliseconds(200));
  const auto wait_callback = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (lost.load() == 0 && std::chrono::steady_clock::now() < wait_callback)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(lost.load(), 1) << "the lost-lease callback did not fire";
  std::cout << "[ failover ] without a primary, the lease stopped being trusted "
            << std::chrono::duration_cast<std::chrono::milliseconds>(noticed - deadline).count()
            << " ms after its local deadline (polled every 10 ms); reason: " << l->lost_reason() << "\n";

  pair.run("promote-pg-standby");
  auto db2 = dblock::open(pair.multi());
  session s2(db2, with_policy(replication_policy::ignore, std::chrono::seconds(5)));
  auto again = until_it_answers([&] { return s2.acquire("ha-lost", std::chrono::seconds(10)); });
  EXPECT_GT(again.fence(), fence);
  EXPECT_EQ(again.fence() / timeline_unit, 2);
}

// ------------------------------------------------------------------ workload runs

double run_seconds() {
  auto v = env("DBLOCK_TEST_FAILOVER_SECONDS");
  return v ? std::stod(*v) : 8.0;
}

int rounds() {
  auto v = env("DBLOCK_TEST_FAILOVER_ROUNDS");
  return v ? std::max(1, std::stoi(*v)) : 1;
}

// The fault workload on the pair's multi-host URL with one failover mid-run.
json failover_run(pg_pair& pair, const std::string& scheme_prefix, int lag_ms) {
  test::temp_dir dir("dblock-failover");
  const double seconds = run_seconds();
  test::process_options o;
  o.argv = {DBLOCK_WORKLOAD, "run", "--url", scheme_prefix + pair.multi(), "--dir", dir.path().string(),
            "--duration-s", std::to_string(seconds), "--faults", "failover", "--fault-interval-ms",
            std::to_string(static_cast<int>(seconds * 1000 / 2)), "--servers-dir", pair.dir(), "--seed",
            std::to_string(::getpid()), "--failover-lag-ms", std::to_string(lag_ms)};
  o.timeout = std::chrono::milliseconds(static_cast<long long>(seconds * 1000) + 150'000);
  auto r = test::run_process(o);
  EXPECT_FALSE(r.timed_out) << "dblock_workload did not finish";
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << "dblock_workload failed (exit " << r.exit_code << "):\n"
                                                     << r.out << r.err;
  const auto path = dir.path() / "summary.json";
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << "no summary.json; output:\n" << r.out << r.err;
    return nullptr;
  }
  std::ifstream in(path);
  json s = json::parse(in);
  auto kind = [&](const char* k) {
    return s.contains("violations_by_kind") ? s["violations_by_kind"].value(k, 0) : 0;
  };
  std::cout << "[ failover ] " << scheme_prefix << "postgresql: " << s.value("operations", 0) << " operations, grants "
            << s.value("grants", 0) << ", faults " << s["faults"].dump() << ", leases lost "
            << s.value("leases_lost", 0) << ", overlapping_holders " << kind("overlapping_holders")
            << ", fence_not_increasing " << kind("fence_not_increasing") << ", duplicate_fence "
            << kind("duplicate_fence") << ", violations " << s.value("violations", 0) << " "
            << (s.contains("violations_by_kind") ? s["violations_by_kind"].dump() : "{}") << "\n";
  return s;
}

int violations_of(const json& s, const char* kind) {
  return s.contains("violations_by_kind") ? s["violations_by_kind"].value(kind, 0) : 0;
}

// rounds() runs, each on a new pair of `mode`; the summaries added up (null on a failed run).
json failover_runs(const std::string& mode, const std::string& scheme_prefix, int lag_ms = 0) {
  json total = {{"operations", 0}, {"grants", 0}, {"violations", 0}, {"worker_unexpected_exits", 0},
                {"faults", {{"failover", 0}}}, {"violations_by_kind", json::object()},
                {"violation_details", json::array()}};
  for (int i = 0; i < rounds(); ++i) {
    pg_pair pair(mode);
    json s = failover_run(pair, scheme_prefix, lag_ms);
    if (s.is_null()) return nullptr;
    for (const char* k : {"operations", "grants", "violations", "worker_unexpected_exits"})
      total[k] = total[k].get<int>() + s.value(k, 0);
    total["faults"]["failover"] = total["faults"]["failover"].get<int>() + s["faults"].value("failover", 0);
    if (s.contains("violations_by_kind"))
      for (auto& [k, v] : s["violations_by_kind"].items())
        total["violations_by_kind"][k] = total["violations_by_kind"].value(k, 0) + v.get<int>();
    if (s.contains("violation_details"))
      for (auto& d : s["violation_details"]) total["violation_details"].push_back(d);
  }
  if (rounds() > 1)
    std::cout << "[ failover ] " << rounds() << " " << mode << " runs: grants " << total["grants"] << ", failovers "
              << total["faults"]["failover"] << ", violations " << total["violations_by_kind"].dump() << "\n";
  return total;
}

TEST_F(Failover, WorkloadPromoteSynchronousStandbyMidRun) {
  auto s = failover_runs("sync", "");
  ASSERT_FALSE(s.is_null());
  EXPECT_EQ(s["faults"].value("failover", 0), rounds());
  EXPECT_EQ(s.value("violations", -1), 0) << s["violation_details"].dump(2);
  EXPECT_EQ(s.value("worker_unexpected_exits", -1), 0);
  EXPECT_GE(s.value("grants", 0), 20 * rounds());
}

TEST_F(Failover, WorkloadPromoteSynchronousStandbyMidRunSoci) {
  auto s = failover_runs("sync", "soci+");
  ASSERT_FALSE(s.is_null());
  EXPECT_EQ(s["faults"].value("failover", 0), rounds());
  EXPECT_EQ(s.value("violations", -1), 0) << s["violation_details"].dump(2);
  EXPECT_GE(s.value("grants", 0), 20 * rounds());
}

// Asynchronous replication: grants the standby had not received are lost with the primary
// (the standby stops receiving WAL 1.5 s before the crash: a lag). Fences never go
// backwards nor repeat; an overlap of holders (and lost writes) is what asynchronous
// replication allows (docs/operations.md, "Deployment topologies"), reported, not failed.
TEST_F(Failover, WorkloadPromoteAsynchronousStandbyMidRunKnownLimit) {
  auto s = failover_runs("async", "", 1500);
  ASSERT_FALSE(s.is_null());
  EXPECT_EQ(s["faults"].value("failover", 0), rounds());
  EXPECT_EQ(violations_of(s, "fence_not_increasing"), 0) << s["violation_details"].dump(2);
  EXPECT_EQ(violations_of(s, "duplicate_fence"), 0) << s["violation_details"].dump(2);
  // The lag really lost committed work (else the run proves nothing about lost grants).
  EXPECT_GT(violations_of(s, "lost_committed_write") + violations_of(s, "lost_committed_outcome"), 0)
      << "the standby lagged 1.5 s but nothing committed was lost";
  EXPECT_EQ(s.value("worker_unexpected_exits", -1), 0);
  EXPECT_GE(s.value("grants", 0), 20 * rounds());
}

}  // namespace
}  // namespace dblock::faults
