// tests/faults/faults_test.cpp — short runs of the fault-injection workload
// (dblock_workload run, docs/correctness.md): one per fault kind x database, each
// asserting that the checker found no violation and that the faults were really
// injected; and the planted bugs, each asserting that the checker catches it.
//
// Databases come from DBLOCK_TEST_PG_URL / DBLOCK_TEST_MYSQL_URL (skipped when unset,
// failed with DBLOCK_TEST_REQUIRE_ALL=1); SQLite needs nothing. Every run makes its own
// database (CREATE DATABASE dblock_t_<random>, dropped afterwards), so runs in parallel do
// not see each other, and the connection kills only hit the run's own connections.
// Tests that restart a server (scripts/servers, DBLOCK_TEST_SERVERS_DIR) have
// "ServerRestart" in their name and run alone (tests/faults/CMakeLists.txt).
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "faults/history.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace dblock::faults {
namespace {

// mysql8, soci_mysql8: MySQL 8.0's dialect forced on the MariaDB server (?dialect=mysql8).
enum class db { postgresql, mariadb, sqlite, soci_postgresql, soci_mariadb, mysql8, soci_mysql8 };

const char* name_of(db d) {
  switch (d) {
    case db::postgresql: return "PostgreSQL (libpqxx)";
    case db::mariadb: return "MariaDB (Connector/C++)";
    case db::sqlite: return "SQLite (SOCI)";
    case db::soci_postgresql: return "PostgreSQL (SOCI)";
    case db::soci_mariadb: return "MariaDB (SOCI)";
    case db::mysql8: return "MariaDB, dialect mysql8 (Connector/C++)";
    case db::soci_mysql8: return "MariaDB, dialect mysql8 (SOCI)";
  }
  return "?";
}

bool require_all() {
  const char* v = std::getenv("DBLOCK_TEST_REQUIRE_ALL");
  return v && std::string_view(v) == "1";
}

std::optional<std::string> env(const char* var) {
  const char* v = std::getenv(var);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

struct run_spec {
  db database = db::sqlite;
  std::string faults;           // "kill", "pause", ... or "" for none
  std::string bug = "none";
  double seconds = 8;
  std::vector<std::string> extra;  // more dblock_workload options
};

run_spec spec(db d, std::string faults, std::string bug = "none", double seconds = 8,
              std::vector<std::string> extra = {}) {
  run_spec s;
  s.database = d;
  s.faults = std::move(faults);
  s.bug = std::move(bug);
  s.seconds = seconds;
  s.extra = std::move(extra);
  return s;
}

class Faults : public ::testing::Test {
 protected:
  // The URL for `d`, or nullopt after skipping (or failing, under DBLOCK_TEST_REQUIRE_ALL=1).
  std::optional<std::string> url_for(db d) {
    const char* var = nullptr;
    std::string prefix, suffix;
    switch (d) {
      case db::sqlite: return std::string("sqlite");
      case db::postgresql: var = "DBLOCK_TEST_PG_URL"; break;
      case db::mariadb: var = "DBLOCK_TEST_MYSQL_URL"; break;
      case db::soci_postgresql: var = "DBLOCK_TEST_PG_URL"; prefix = "soci+"; break;
      case db::soci_mariadb: var = "DBLOCK_TEST_MYSQL_URL"; prefix = "soci+"; break;
      case db::mysql8: var = "DBLOCK_TEST_MYSQL_URL"; suffix = "dialect=mysql8"; break;
      case db::soci_mysql8: var = "DBLOCK_TEST_MYSQL_URL"; prefix = "soci+"; suffix = "dialect=mysql8"; break;
    }
    auto u = env(var);
    if (!u) {
      missing_ = std::string(var) + " is not set";
      return std::nullopt;
    }
    if (!suffix.empty()) *u += (u->find('?') == std::string::npos ? "?" : "&") + suffix;
    return prefix + *u;
  }

  // Runs the workload; the summary JSON, or null after a failed assertion.
  json run(const run_spec& s) {
    auto url = url_for(s.database);
    if (!url) return nullptr;
    dir_ = std::make_unique<test::temp_dir>("dblock-faults");
    test::process_options o;
    o.argv = {DBLOCK_WORKLOAD, "run", "--url", *url, "--dir", dir_->path().string(),
              "--duration-s", std::to_string(s.seconds), "--faults", s.faults.empty() ? "none" : s.faults,
              "--bug", s.bug, "--seed", std::to_string(::getpid())};
    o.argv.insert(o.argv.end(), s.extra.begin(), s.extra.end());
    o.timeout = std::chrono::milliseconds(static_cast<long long>(s.seconds * 1000) + 150'000);
    auto r = test::run_process(o);
    output_ = r.out + r.err;
    EXPECT_FALSE(r.timed_out) << "dblock_workload did not finish";
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << "dblock_workload failed to run (exit " << r.exit_code
                                                       << "):\n" << output_;
    const auto path = dir_->path() / "summary.json";
    if (!std::filesystem::exists(path)) {
      ADD_FAILURE() << "no summary.json; output:\n" << output_;
      return nullptr;
    }
    json summary = json::parse(test::read_file(path));
    std::cout << "[ workload ] " << name_of(s.database) << ", faults '" << s.faults << "', bug " << s.bug << ": "
              << summary.value("operations", 0) << " operations, faults " << summary["faults"].dump() << ", grants "
              << summary.value("grants", 0) << ", leases lost " << summary.value("leases_lost", 0)
              << ", unfenced actions " << summary.value("unfenced_actions", 0) << ", outcomes unknown "
              << summary.value("indeterminate", 0) << " (commit_unknown " << summary.value("commit_unknown", 0)
              << "), violations " << summary.value("violations", 0) << "\n";
    return summary;
  }

  // The checks every fault run makes: no violation, no worker dying by itself, real work
  // done, and the fault injected at least `min_faults` times.
  void expect_clean(const json& s, const std::string& fault, int min_faults) {
    ASSERT_FALSE(s.is_null());
    EXPECT_EQ(s.value("violations", -1), 0) << "violations: " << s["violation_details"].dump(2) << "\n" << output_;
    EXPECT_EQ(s.value("worker_unexpected_exits", -1), 0) << output_;
    EXPECT_GE(s.value("operations", 0), 200) << output_;
    EXPECT_GE(s.value("grants", 0), 20) << output_;
    EXPECT_GE(s.value("writes_accepted", 0), 20) << output_;
    EXPECT_GE(s.value("unfenced_actions", 0), 20) << output_;
    if (s.value("idempotency", false)) {
      EXPECT_GE(s.value("keys_answered", 0), 5) << output_;
    }
    if (!fault.empty()) {
      EXPECT_GE(s["faults"].value(fault, 0), min_faults) << "faults injected: " << s["faults"].dump();
    }
  }

  static int count(const json& s, const char* kind) {
    if (!s.contains("violations_by_kind")) return 0;
    return s["violations_by_kind"].value(kind, 0);
  }

  // The planted lock bugs need a pause to land on a holder while another worker wants the
  // same name: an unlucky interleaving, not a certainty within one run. On an idle machine
  // the first run catches it; with the rest of the suite running in parallel, runs with no
  // violation at all were seen three times in a row. Runs again (up to five times) until the
  // checker reports one of `kinds`; the test then asserts it did.
  json run_until_caught(const run_spec& spec_, std::initializer_list<const char*> kinds) {
    json s;
    for (int attempt = 0; attempt < 5; ++attempt) {
      s = run(spec_);
      if (s.is_null()) return s;
      int seen = 0;
      for (const char* k : kinds) seen += count(s, k);
      if (seen > 0) break;
    }
    return s;
  }

  void skip_or_fail_if_missing() {
    if (missing_.empty()) return;
    if (require_all()) FAIL() << missing_ << " (DBLOCK_TEST_REQUIRE_ALL=1)";
    GTEST_SKIP() << missing_;
  }

  std::unique_ptr<test::temp_dir> dir_;
  std::string output_;
  std::string missing_;
};

// Runs spec and applies the standard checks. A macro so that skips return from the test.
#define DBLOCK_FAULT_RUN(spec, fault, min_faults)   \
  do {                                              \
    auto summary_ = run(spec);                      \
    skip_or_fail_if_missing();                      \
    if (IsSkipped() || HasFatalFailure()) return;   \
    expect_clean(summary_, fault, min_faults);      \
    last_ = summary_;                               \
  } while (0)

class FaultRuns : public Faults {
 protected:
  json last_;
};

// ------------------------------------------------------------------ PostgreSQL (libpqxx)
TEST_F(FaultRuns, PostgresqlKill) { DBLOCK_FAULT_RUN(spec(db::postgresql, "kill"), "kill", 3); }
TEST_F(FaultRuns, PostgresqlPause) {
  DBLOCK_FAULT_RUN(spec(db::postgresql, "pause"), "pause", 2);
}
TEST_F(FaultRuns, PostgresqlConnKill) { DBLOCK_FAULT_RUN(spec(db::postgresql, "connkill"), "connkill", 3); }
TEST_F(FaultRuns, PostgresqlClockJump) {
  DBLOCK_FAULT_RUN(spec(db::postgresql, "clock", "none", 8, {"--fault-interval-ms", "1000"}), "clock", 3);
  EXPECT_GE(last_.value("clock_jumps_observed", 0), 1) << "no worker saw its wall clock jump";
}
TEST_F(FaultRuns, PostgresqlServerRestart) {
  if (!env("DBLOCK_TEST_SERVERS_DIR")) {
    if (require_all()) FAIL() << "DBLOCK_TEST_SERVERS_DIR is not set";
    GTEST_SKIP() << "DBLOCK_TEST_SERVERS_DIR is not set (scripts/servers start writes it)";
  }
  DBLOCK_FAULT_RUN(spec(db::postgresql, "restart", "none", 10, {"--fault-interval-ms", "1000"}), "restart", 2);
}

// Network partitions: each worker reaches the server through a relay of its own
// (dblock_test_relay), which the driver cuts. 12 s runs: a one-worker partition lasts
// 2.5-3.5 s (longer than TTL + lock delay), so a shorter run sees too few.
TEST_F(FaultRuns, PostgresqlPartition) {
  DBLOCK_FAULT_RUN(spec(db::postgresql, "partition", "none", 12), "partition", 2);
  EXPECT_GE(last_.value("leases_lost", 0), 1) << "no holder was cut off long enough to lose its lease";
}
TEST_F(FaultRuns, PostgresqlReplyLoss) {
  DBLOCK_FAULT_RUN(spec(db::postgresql, "reply-loss", "none", 12), "reply-loss", 2);
}
TEST_F(FaultRuns, PostgresqlPartitionAll) {
  DBLOCK_FAULT_RUN(spec(db::postgresql, "partition-all", "none", 12), "partition-all", 2);
}

// ------------------------------------------------------------------ MariaDB (Connector/C++)
TEST_F(FaultRuns, MariadbKill) { DBLOCK_FAULT_RUN(spec(db::mariadb, "kill"), "kill", 3); }
TEST_F(FaultRuns, MariadbPause) { DBLOCK_FAULT_RUN(spec(db::mariadb, "pause"), "pause", 2); }
TEST_F(FaultRuns, MariadbConnKill) { DBLOCK_FAULT_RUN(spec(db::mariadb, "connkill"), "connkill", 3); }
TEST_F(FaultRuns, MariadbClockJump) {
  DBLOCK_FAULT_RUN(spec(db::mariadb, "clock", "none", 8, {"--fault-interval-ms", "1000"}), "clock", 3);
  EXPECT_GE(last_.value("clock_jumps_observed", 0), 1) << "no worker saw its wall clock jump";
}
TEST_F(FaultRuns, MariadbServerRestart) {
  if (!env("DBLOCK_TEST_SERVERS_DIR")) {
    if (require_all()) FAIL() << "DBLOCK_TEST_SERVERS_DIR is not set";
    GTEST_SKIP() << "DBLOCK_TEST_SERVERS_DIR is not set (scripts/servers start writes it)";
  }
  DBLOCK_FAULT_RUN(spec(db::mariadb, "restart", "none", 10, {"--fault-interval-ms", "1000"}), "restart", 2);
}

TEST_F(FaultRuns, MariadbPartition) {
  DBLOCK_FAULT_RUN(spec(db::mariadb, "partition", "none", 12), "partition", 2);
  EXPECT_GE(last_.value("leases_lost", 0), 1) << "no holder was cut off long enough to lose its lease";
}
TEST_F(FaultRuns, MariadbReplyLoss) { DBLOCK_FAULT_RUN(spec(db::mariadb, "reply-loss", "none", 12), "reply-loss", 2); }
TEST_F(FaultRuns, MariadbPartitionAll) {
  DBLOCK_FAULT_RUN(spec(db::mariadb, "partition-all", "none", 12), "partition-all", 2);
}

// ------------------------------------------------------------------ MySQL 8.0's dialect on MariaDB
// The dialect's own statements (the fence drawn in three statements, the claim read apart)
// under the faults that cut a statement sequence short; restart and clock are the server's
// and the session's, the same as MariaDB's runs above.
TEST_F(FaultRuns, Mysql8KillPauseConnKill) {
  DBLOCK_FAULT_RUN(spec(db::mysql8, "kill,pause,connkill", "none", 8, {"--fault-interval-ms", "600"}), "", 0);
  EXPECT_GE(last_["faults"].value("kill", 0) + last_["faults"].value("pause", 0) + last_["faults"].value("connkill", 0), 2);
}
TEST_F(FaultRuns, Mysql8Partition) {
  DBLOCK_FAULT_RUN(spec(db::mysql8, "partition", "none", 12), "partition", 2);
  EXPECT_GE(last_.value("leases_lost", 0), 1) << "no holder was cut off long enough to lose its lease";
}
TEST_F(FaultRuns, Mysql8ReplyLoss) { DBLOCK_FAULT_RUN(spec(db::mysql8, "reply-loss", "none", 12), "reply-loss", 2); }
TEST_F(FaultRuns, SociMysql8KillPauseConnKill) {
  DBLOCK_FAULT_RUN(spec(db::soci_mysql8, "kill,pause,connkill", "none", 8, {"--fault-interval-ms", "600"}), "", 0);
  EXPECT_GE(last_["faults"].value("kill", 0) + last_["faults"].value("pause", 0) + last_["faults"].value("connkill", 0), 2);
}

// ------------------------------------------------------------------ SOCI on the servers
TEST_F(FaultRuns, SociPostgresqlKillPauseConnKill) {
  // A pause holds the injector for 1.5-2.5 TTLs: inject often, require at least two.
  DBLOCK_FAULT_RUN(spec(db::soci_postgresql, "kill,pause,connkill", "none", 8, {"--fault-interval-ms", "600"}),
                   "", 0);
  EXPECT_GE(last_["faults"].value("kill", 0) + last_["faults"].value("pause", 0) + last_["faults"].value("connkill", 0), 2);
}
TEST_F(FaultRuns, SociMariadbKillPauseConnKill) {
  // A pause holds the injector for 1.5-2.5 TTLs: inject often, require at least two.
  DBLOCK_FAULT_RUN(spec(db::soci_mariadb, "kill,pause,connkill", "none", 8, {"--fault-interval-ms", "600"}),
                   "", 0);
  EXPECT_GE(last_["faults"].value("kill", 0) + last_["faults"].value("pause", 0) + last_["faults"].value("connkill", 0), 2);
}

// ------------------------------------------------------------------ SQLite (SOCI)
TEST_F(FaultRuns, SqliteKill) { DBLOCK_FAULT_RUN(spec(db::sqlite, "kill"), "kill", 3); }
TEST_F(FaultRuns, SqlitePause) { DBLOCK_FAULT_RUN(spec(db::sqlite, "pause"), "pause", 2); }
// No server to restart: every worker process is SIGKILLed at the same instant (mid-
// transaction, mid-commit), then all start again on the same file.
TEST_F(FaultRuns, SqliteCrashAllWorkers) { DBLOCK_FAULT_RUN(spec(db::sqlite, "restart"), "restart", 2); }

// SQLite has no server: its clock is the wall clock of whichever process runs the
// statement, so a client whose wall clock jumps DOES break lease expiry and idempotency
// retention there (docs/correctness.md, "Known limitation"). This test pins that down: the
// checker must see it. If dblock's SQLite dialect stops using the client's wall clock,
// turn this into a zero-violation test like the others.
TEST_F(FaultRuns, SqliteClockJumpBreaksSqliteExpiryKnownLimitation) {
  auto s = run(spec(db::sqlite, "clock", "none", 8, {"--fault-interval-ms", "700"}));
  ASSERT_FALSE(s.is_null());
  EXPECT_GE(s["faults"].value("clock", 0), 3);
  EXPECT_GE(s.value("clock_jumps_observed", 0), 1);
  EXPECT_GT(s.value("violations", 0), 0) << "a wall-clock jump of a SQLite client no longer breaks expiry: "
                                            "update docs/correctness.md and make this a zero-violation test";
}

// ------------------------------------------------------------------ planted bugs
// Each runs the workload with a deliberately broken client and asserts the checker
// reports the violation that bug causes. Bugs of the plain lease lock run only lock cycles
// (no read-write, semaphore or lead cycles), so that each run gives them enough chances.
class PlantedBug : public Faults {};

// Release without the owner check (DELETE ... WHERE name = ?), and holders paused past
// their TTL: a late release deletes the next holder's row, a third one is granted while
// the second still holds.
TEST_F(PlantedBug, UnsafeReleaseIsCaughtSqlite) {
  auto s = run_until_caught(
      spec(db::sqlite, "pause", "unsafe-release", 10, {"--family-share", "0", "--elect-share", "0", "--fault-interval-ms", "600", "--cs-sleep-ms", "150"}),
      {"overlapping_holders", "lost_before_deadline"});
  ASSERT_FALSE(s.is_null());
  EXPECT_GT(count(s, "overlapping_holders") + count(s, "lost_before_deadline"), 0) << s.dump(2);
}
TEST_F(PlantedBug, UnsafeReleaseIsCaughtPostgresql) {
  auto s = run_until_caught(
      spec(db::postgresql, "pause", "unsafe-release", 10, {"--family-share", "0", "--elect-share", "0", "--fault-interval-ms", "600", "--cs-sleep-ms", "150"}),
      {"overlapping_holders", "lost_before_deadline"});
  skip_or_fail_if_missing();
  if (IsSkipped()) return;
  ASSERT_FALSE(s.is_null());
  EXPECT_GT(count(s, "overlapping_holders") + count(s, "lost_before_deadline"), 0) << s.dump(2);
}

// A holder that never re-checks is_held() and writes without the fence condition: after
// a pause longer than the TTL its write lands after the next holder's.
// The pause (1.5-2.5 x TTL) must outlast TTL + lock delay for a takeover to happen while
// the holder is stopped: these runs set the lock delay to 0.
TEST_F(PlantedBug, UnfencedWriteAfterLostLeaseIsCaughtSqlite) {
  auto s = run_until_caught(
      spec(db::sqlite, "pause", "unfenced-write", 10,
           {"--family-share", "0", "--elect-share", "0", "--fault-interval-ms", "600", "--cs-sleep-ms", "150", "--lock-delay-ms", "0"}),
      {"stale_write_accepted"});
  ASSERT_FALSE(s.is_null());
  EXPECT_GT(count(s, "stale_write_accepted"), 0) << s.dump(2);
}
TEST_F(PlantedBug, UnfencedWriteAfterLostLeaseIsCaughtPostgresql) {
  auto s = run_until_caught(
      spec(db::postgresql, "pause", "unfenced-write", 10,
           {"--family-share", "0", "--elect-share", "0", "--fault-interval-ms", "600", "--cs-sleep-ms", "150", "--lock-delay-ms", "0"}),
      {"stale_write_accepted"});
  skip_or_fail_if_missing();
  if (IsSkipped()) return;
  ASSERT_FALSE(s.is_null());
  EXPECT_GT(count(s, "stale_write_accepted"), 0) << s.dump(2);
}

// A holder that acts (an unfenced side effect: nothing downstream checks a token) without
// checking is_held() first: once cut off past its TTL it acts after the next holder was
// granted the lock. SQLite: the holder is paused (1.5-2.5 x TTL, which must outlast TTL +
// lock delay for the next grant to come first: lock delay 0 here); PostgreSQL: its network
// is cut.
TEST_F(PlantedBug, UncheckedActionAfterLostLeaseIsCaughtSqlite) {
  auto s = run_until_caught(
      spec(db::sqlite, "pause", "unchecked-action", 10,
           {"--family-share", "0", "--elect-share", "0", "--fault-interval-ms", "600", "--cs-sleep-ms", "150", "--lock-delay-ms", "0"}),
      {"late_unfenced_action"});
  ASSERT_FALSE(s.is_null());
  EXPECT_GT(count(s, "late_unfenced_action"), 0) << s.dump(2);
}
TEST_F(PlantedBug, UncheckedActionAfterLostLeaseIsCaughtPostgresqlPartition) {
  auto s = run_until_caught(
      spec(db::postgresql, "partition", "unchecked-action", 10, {"--family-share", "0", "--elect-share", "0", "--fault-interval-ms", "600", "--cs-sleep-ms", "150"}),
      {"late_unfenced_action"});
  skip_or_fail_if_missing();
  if (IsSkipped()) return;
  ASSERT_FALSE(s.is_null());
  EXPECT_GT(count(s, "late_unfenced_action"), 0) << s.dump(2);
}

// An election without the fence check: a leader that never re-checks is_held() and writes
// as leader without the fence condition. Paused past its TTL (and lock delay: 0 here), it
// writes after the next leader did - two leaders at once in the leaders' write log.
TEST_F(PlantedBug, ElectionWithoutTheFenceCheckIsCaughtSqlite) {
  auto s = run_until_caught(
      spec(db::sqlite, "pause", "unfenced-election", 10,
           {"--fault-interval-ms", "600", "--cs-sleep-ms", "150", "--lock-delay-ms", "0"}),
      {"two_leaders"});
  ASSERT_FALSE(s.is_null());
  EXPECT_GT(count(s, "two_leaders"), 0) << s.dump(2);
}
TEST_F(PlantedBug, ElectionWithoutTheFenceCheckIsCaughtPostgresql) {
  auto s = run_until_caught(
      spec(db::postgresql, "pause", "unfenced-election", 10,
           {"--fault-interval-ms", "600", "--cs-sleep-ms", "150", "--lock-delay-ms", "0"}),
      {"two_leaders"});
  skip_or_fail_if_missing();
  if (IsSkipped()) return;
  ASSERT_FALSE(s.is_null());
  EXPECT_GT(count(s, "two_leaders"), 0) << s.dump(2);
}

// begin(), the side effect in a transaction of its own, complete(): a pause longer than
// the idempotency lease lets a retry take the attempt over and charge again.
TEST_F(PlantedBug, IdempotentSideEffectOutsideTheTransactionIsCaughtSqlite) {
  json s;
  for (int round = 0; round < 3; ++round) {  // see the PostgreSQL twin below
    s = run(spec(db::sqlite, "", "idem-no-tx", 8, {"--pause-prob", "0.3", "--lock-share", "0.3"}));
    ASSERT_FALSE(s.is_null());
    if (count(s, "double_side_effect") > 0) break;
  }
  ASSERT_TRUE(s.value("idempotency", false)) << "dblock_workload was built without dblock/idempotency.hpp: "
                                                 "no idempotency keys were exercised";
  EXPECT_GT(count(s, "double_side_effect"), 0) << s.dump(2);
}
TEST_F(PlantedBug, IdempotentSideEffectOutsideTheTransactionIsCaughtPostgresql) {
  // The planted double side effect needs an unlucky interleaving: run again (up to three
  // times) until the checker has something to catch; it must catch it then.
  json s;
  for (int round = 0; round < 3; ++round) {
    s = run(spec(db::postgresql, "", "idem-no-tx", 8, {"--pause-prob", "0.3", "--lock-share", "0.3"}));
    skip_or_fail_if_missing();
    if (IsSkipped()) return;
    ASSERT_FALSE(s.is_null());
    if (count(s, "double_side_effect") > 0) break;
  }
  ASSERT_TRUE(s.value("idempotency", false)) << "dblock_workload was built without dblock/idempotency.hpp: "
                                                 "no idempotency keys were exercised";
  EXPECT_GT(count(s, "double_side_effect"), 0) << s.dump(2);
}

// A would-be writer that takes a read hold and records it as the write hold: the checker
// sees a writer's window beside readers'. Only family cycles, so that they meet.
TEST_F(PlantedBug, WriterBesideAReaderIsCaughtSqlite) {
  auto s = run_until_caught(spec(db::sqlite, "", "rw-writer-beside-reader", 6,
                                 {"--lock-share", "1", "--family-share", "1", "--locks", "1", "--cs-sleep-ms", "60"}),
                            {"reader_writer_overlap"});
  ASSERT_FALSE(s.is_null());
  EXPECT_GT(count(s, "reader_writer_overlap"), 0) << s.dump(2);
}
TEST_F(PlantedBug, WriterBesideAReaderIsCaughtPostgresql) {
  auto s = run_until_caught(spec(db::postgresql, "", "rw-writer-beside-reader", 6,
                                 {"--lock-share", "1", "--family-share", "1", "--locks", "1", "--cs-sleep-ms", "60"}),
                            {"reader_writer_overlap"});
  skip_or_fail_if_missing();
  if (IsSkipped()) return;
  ASSERT_FALSE(s.is_null());
  EXPECT_GT(count(s, "reader_writer_overlap"), 0) << s.dump(2);
}

// A permit taken from another semaphore of N + 1 and recorded as one of the N: permit N + 1.
TEST_F(PlantedBug, PermitBeyondTheCountIsCaughtMariadb) {
  auto s = run_until_caught(spec(db::mariadb, "", "permit-overgrant", 6,
                                 {"--lock-share", "1", "--family-share", "1", "--locks", "1", "--cs-sleep-ms", "60"}),
                            {"permit_oversubscribed"});
  skip_or_fail_if_missing();
  if (IsSkipped()) return;
  ASSERT_FALSE(s.is_null());
  EXPECT_GT(count(s, "permit_oversubscribed"), 0) << s.dump(2);
}
TEST_F(PlantedBug, PermitBeyondTheCountIsCaughtSqlite) {
  auto s = run_until_caught(spec(db::sqlite, "", "permit-overgrant", 6,
                                 {"--lock-share", "1", "--family-share", "1", "--locks", "1", "--cs-sleep-ms", "60"}),
                            {"permit_oversubscribed"});
  ASSERT_FALSE(s.is_null());
  EXPECT_GT(count(s, "permit_oversubscribed"), 0) << s.dump(2);
}

}  // namespace
}  // namespace dblock::faults
