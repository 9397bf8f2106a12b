// tests/conformance/reaper_test.cpp — the reaper, session locks and metrics on all five
// combinations: 100,000 expired rows reaped while live locks are acquired and renewed
// (no live row lost), paced passes deleting the same rows as unpaced ones, crashed
// holders' rows removed after their TTL, expired wait-line tickets removed and a live
// waiter's kept, the reaper running through a database restart,
// session locks released when their connection is killed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pqxx/pqxx>

#include <atomic>
#include <cmath>
#include <optional>
#include <thread>

#include "conformance/fixture.hpp"
#include "dblock/idempotency.hpp"
#include "dblock/lock.hpp"
#include "dblock/metrics.hpp"
#include "dblock/pqxx.hpp"
#include "dblock/reaper.hpp"
#include "dblock/session_lock.hpp"
#include "dblock/transaction.hpp"
#include "support/process.hpp"

namespace dblock::test {
namespace {

using namespace std::chrono_literals;

class ReaperConformance : public conformance {
 protected:
  // Inserts `n` lock rows named <prefix>_<i>, expired an hour ago by the server's clock.
  void insert_expired_locks(database& db, const std::string& prefix, int n) {
    switch (kind()) {
      case dialect::postgresql:
        raw_query(db,
                  "INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder) "
                  "SELECT $1 || '_' || i, repeat('d', 32), 1, i, now() - interval '2 hours', "
                  "now() - interval '1 hour', $1 FROM generate_series(1, CAST($2 AS integer)) AS i",
                  {prefix, static_cast<std::int64_t>(n)});
        break;
      case dialect::mysql8:
      case dialect::mysql:
        raw_query(db,
                  "INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder) "
                  "SELECT CONCAT($1, '_', seq), REPEAT('d', 32), 1, seq, UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, "
                  "UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, $1 FROM seq_1_to_" + std::to_string(n),
                  {prefix});
        break;
      case dialect::sqlite:
        raw_query(db,
                  "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $2) "
                  "INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder) "
                  "SELECT $1 || '_' || i, 'dddddddddddddddddddddddddddddddd', 1, i, 0, 1000, $1 FROM c",
                  {prefix, static_cast<std::int64_t>(n)});
        break;
    }
  }
  std::int64_t count_prefix(database& db, const std::string& prefix) {
    return query_int(db, "SELECT COUNT(*) FROM dblock_locks WHERE holder = $1", {prefix});
  }
};

TEST_P(ReaperConformance, ReapsOneHundredThousandExpiredRowsAndNoLiveOne) {
  auto url = fresh_database();
  auto db = dblock::open(url);
  db.migrate();
  const std::string prefix = "dead";
  insert_expired_locks(db, prefix, 100'000);
  ASSERT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_locks"), 100'000);

  // Live traffic meanwhile: long-held locks renewed by a short TTL, and churn.
  std::atomic<int> lost{0};
  session_options so;
  so.ttl = 2000ms;  // renewed every ~667 ms: several renewals during the pass
  so.on_lost = [&](const lost_lease& l) {
    ++lost;
    ADD_FAILURE() << "lost " << l.name << ": " << l.reason;
  };
  auto live_db = dblock::open(url);
  session live(live_db, so);
  std::vector<lease> held;
  for (int i = 0; i < 20; ++i) held.push_back(*live.try_acquire("live_" + std::to_string(i)));
  std::atomic<bool> stop{false};
  std::atomic<int> churn_errors{0}, churned{0};
  std::thread churn([&] {
    try {
      auto cdb = dblock::open(url);
      session s(cdb, so);
      for (int i = 0; !stop; ++i) {
        auto l = s.acquire("churn_" + std::to_string(i % 5), 5s);
        l.release();
        ++churned;
        std::this_thread::sleep_for(2ms);  // steady traffic, not a write storm (SQLite has one writer)
      }
    } catch (const std::exception& e) {
      ++churn_errors;
      ADD_FAILURE() << e.what();
    }
  });

  reaper_options ro;
  ro.grace = 0ms;
  ro.batch_size = 2000;
  auto rdb = dblock::open(url);
  reaper r(rdb, ro);
  const auto t0 = std::chrono::steady_clock::now();
  auto rep = r.run_once();
  const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::this_thread::sleep_for(1000ms);  // at least one renewal round after the reap
  stop = true;
  churn.join();

  EXPECT_EQ(rep.locks, 100'000u);
  EXPECT_EQ(count_prefix(db, prefix), 0);
  EXPECT_EQ(lost.load(), 0) << "a live lock was reaped";
  EXPECT_EQ(churn_errors.load(), 0);
  EXPECT_GT(churned.load(), 0);
  for (auto& l : held) {
    EXPECT_TRUE(l.is_held()) << l.name();
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_locks WHERE name = $1", {l.name()}), 1) << l.name();
  }
  for (auto& l : held) EXPECT_NO_THROW(l.release());
  std::printf("[ reaper ] %s: 100000 rows in %.2f s = %.0f rows/s\n", combo().name, took, 100'000 / took);
}

// Pacing (duty_cycle) changes how fast a pass goes, never what it deletes: every rest
// value still ends the pass at the first short batch, and max_batches still bounds it.
TEST_P(ReaperConformance, PacedPassesKeepThePassSemantics) {
  auto db = dblock::open(fresh_database());
  db.migrate();
  const std::string prefix = "paced";
  insert_expired_locks(db, prefix, 1050);
  for (double duty : {0.2, 1.0}) {
    reaper_options ro;
    ro.grace = 0ms;
    ro.batch_size = 100;
    ro.max_batches = 3;
    ro.duty_cycle = duty;
    reaper bounded(db, ro);
    EXPECT_EQ(bounded.run_once().locks, 300u) << "max_batches bounds a paced pass, duty " << duty;
  }
  reaper_options ro;
  ro.grace = 0ms;
  ro.batch_size = 100;
  ro.duty_cycle = 0.25;
  reaper r(db, ro);
  EXPECT_EQ(r.run_once().locks, 450u) << "a paced pass runs until a batch comes back short";
  EXPECT_EQ(count_prefix(db, prefix), 0);
  EXPECT_EQ(r.run_once().locks, 0u);
}

// A live client committing back to back (fresh names acquired and released with no pause)
// and a pass over a backlog share the database: the pass deletes exactly the expired rows and
// none of the live client's, and the live client keeps committing while the pass runs (on
// SQLite the reaper looks for the one writer lock itself between the client's statements,
// and rests after each batch so that the client gets it back).
TEST_P(ReaperConformance, PassBehindABackToBackWriterDeletesOnlyExpiredRows) {
  const auto url = fresh_database();
  auto db = dblock::open(url);
  db.migrate();
  const std::string prefix = "behind";
  insert_expired_locks(db, prefix, 5000);
  std::atomic<bool> stop{false}, reaping{false};
  std::atomic<int> writer_errors{0}, during{0};
  std::thread writer([&] {
    try {
      auto wdb = dblock::open(url);
      session s(wdb);
      for (int i = 0; !stop; ++i) {
        auto l = s.try_acquire("writer_" + std::to_string(i));
        if (!l) throw std::runtime_error("a fresh name was refused");
        l->release();
        if (reaping) ++during;
      }
    } catch (const std::exception& e) {
      ++writer_errors;
      ADD_FAILURE() << e.what();
    }
  });
  session holder(db);
  auto kept = holder.try_acquire("behind_kept");
  ASSERT_TRUE(kept);
  reaper_options ro;
  ro.grace = 0ms;
  ro.batch_size = 250;
  reaper r(dblock::open(url), ro);
  reaping = true;
  const auto rep = r.run_once();
  reaping = false;
  const int committed_during = during.load();
  stop = true;
  writer.join();
  EXPECT_EQ(rep.locks, 5000u);
  EXPECT_EQ(count_prefix(db, prefix), 0);
  EXPECT_EQ(writer_errors.load(), 0);
  EXPECT_GT(committed_during, 0) << "the live client made no progress while the reaper ran";
  EXPECT_TRUE(kept->is_held());
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_locks WHERE name = $1", {std::string("behind_kept")}), 1);
  EXPECT_NO_THROW(kept->release());
}

// async_commit (the default): on PostgreSQL each batch sets synchronous_commit = off for
// its own implicit transaction only. Observed on an attached libpqxx connection, which the
// reaper then uses itself: the setting is unchanged after a pass, and a pass run inside the
// caller's transaction leaves that transaction's setting alone (there the plain statement
// runs). Everywhere: async_commit deletes exactly what a pass without it deletes.
TEST_P(ReaperConformance, AsyncCommitIsLocalToEachBatchsOwnTransaction) {
  const auto url = fresh_database();
  const bool observe = kind() == dialect::postgresql && client() == client_library::pqxx;
  std::optional<pqxx::connection> attached;
  if (observe) attached.emplace(url);
  auto db = observe ? attach(*attached) : dblock::open(url);
  db.migrate();
  const char* setting_sql = "SELECT current_setting('synchronous_commit')";
  const auto before = observe ? raw_query(db, setting_sql).rows : std::vector<std::vector<detail::cell>>{};
  if (observe) {
    ASSERT_EQ(before.size(), 1u);
    ASSERT_EQ(before[0][0], std::optional<std::string>("on"));
  }
  for (bool async : {true, false}) {
    reaper_options ro;
    ro.grace = 0ms;
    ro.batch_size = 100;
    ro.async_commit = async;
    reaper r(db, ro);
    const std::string prefix = async ? "async_out" : "sync_out";
    insert_expired_locks(db, prefix, 250);
    EXPECT_EQ(r.run_once().locks, 250u) << "async_commit " << async;
    EXPECT_EQ(count_prefix(db, prefix), 0);
    if (observe) {
      EXPECT_EQ(raw_query(db, setting_sql).rows, before) << "the setting leaked past the pass";
      EXPECT_EQ(pqxx::nontransaction(*attached).exec1("SHOW synchronous_commit")[0].as<std::string>(), "on");
    }
  }
  if (!observe) return;  // elsewhere the reaper has a connection of its own
  reaper_options ro;
  ro.grace = 0ms;
  ro.batch_size = 100;
  reaper r(db, ro);
  insert_expired_locks(db, "async_in", 250);
  std::vector<std::vector<detail::cell>> inside;
  transact(db, [&](transaction_ref) {
    EXPECT_EQ(r.run_once().locks, 250u);  // on the caller's connection, inside its transaction
    inside = raw_query(db, setting_sql).rows;
  });
  EXPECT_EQ(inside, before) << "a pass inside a transaction changed its synchronous_commit";
  EXPECT_EQ(count_prefix(db, "async_in"), 0);
}

TEST_P(ReaperConformance, RejectsADutyCycleOutsideZeroToOne) {
  auto db = open();
  for (double duty : {0.0, -0.5, 1.01, std::nan("")}) {
    reaper_options ro;
    ro.duty_cycle = duty;
    EXPECT_THROW((reaper{db, ro}), invalid_argument) << duty;
  }
  reaper_options ro;
  ro.duty_cycle = 1.0;
  EXPECT_NO_THROW((reaper{db, ro}));
}

TEST_P(ReaperConformance, CrashedHoldersRowIsReapedAfterItsTtlAndTheNameIsFree) {
  const auto name = unique_name("crash");
  const std::string u = url();
  { auto migrated = open(); }  // the child must find the schema (a fresh SQLite file has none)
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      auto db = dblock::open(u);
      session_options so;
      so.ttl = 500ms;
      session s(db, so);
      auto l = s.try_acquire(name);
      if (!l) ::_exit(2);
      ::raise(SIGSTOP);  // wait here until the parent kills us
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status)) << "child failed to acquire";
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  auto db = open();
  ASSERT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_locks WHERE name = $1", {name}), 1);
  reaper_options ro;
  ro.grace = 0ms;
  ro.reap_idempotency = false;
  reaper r(db, ro);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (query_int(db, "SELECT COUNT(*) FROM dblock_locks WHERE name = $1", {name}) != 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "crashed holder's row never reaped";
    (void)r.run_once();
    std::this_thread::sleep_for(50ms);
  }
  session s(db);
  EXPECT_TRUE(s.try_acquire(name).has_value()) << "the name is free again";
}

TEST_P(ReaperConformance, ReaperThreadStopsPromptlyAndReportsPasses) {
  auto db = open();
  std::atomic<int> passes{0};
  reaper_options ro;
  ro.interval = 50ms;
  ro.on_pass = [&](const reap_report&) { ++passes; };
  reaper r(db, ro);
  r.start();
  EXPECT_TRUE(r.running());
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (passes < 3 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  EXPECT_GE(passes.load(), 3);
  const auto t0 = std::chrono::steady_clock::now();
  r.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_FALSE(r.running());
}

TEST_P(ReaperConformance, OnlyOneSingleActiveReaperWorksAtATime) {
  auto db1 = open();
  auto db2 = open();
  reaper_options ro;
  ro.single_active = true;
  reaper a(db1, ro), b(db2, ro);
  auto ra = a.run_once();
  auto rb = b.run_once();
  EXPECT_FALSE(ra.skipped);
  EXPECT_TRUE(rb.skipped) << "the second reaper must stand by while the first holds dblock:reaper";
}

// Restarts the database server (RUN_SERIAL): the reaper reports errors, backs off,
// reconnects and keeps reaping.
TEST_P(ReaperConformance, KeepsRunningThroughADatabaseServerRestart) {
  const char* dir = std::getenv("DBLOCK_TEST_SERVERS_DIR");
  if (kind() != dialect::sqlite && !dir) {
    if (std::getenv("DBLOCK_TEST_REQUIRE_ALL")) FAIL() << "DBLOCK_TEST_SERVERS_DIR not set (scripts/servers)";
    GTEST_SKIP() << "DBLOCK_TEST_SERVERS_DIR not set (scripts/servers)";
  }
  auto db = open();
  std::atomic<int> errors{0};
  reaper_options ro;
  ro.interval = 100ms;
  ro.grace = 0ms;
  ro.max_backoff = 500ms;
  ro.on_error = [&](const error&) { ++errors; };
  reaper r(db, ro);
  r.start();
  if (kind() == dialect::sqlite) {
    // SQLite has no server: its outage is another connection holding the database
    // exclusively for a while (every reaper statement then fails with SQLITE_BUSY).
    auto blocker = open();
    detail::backend_of(blocker)->set_busy_timeout(5000ms);
    // (The reaper's statements wait on SQLite's busy timeout rather than fail.)
    transact(blocker, [&](transaction_ref) {
      raw_exec(blocker, "DELETE FROM dblock_locks WHERE name = 'nothing'");
      std::this_thread::sleep_for(1500ms);
    });
  } else {
    auto res = run_process({{DBLOCK_SERVERS_SCRIPT, kind() == dialect::postgresql ? "restart-pg" : "restart-mysql", dir},
                            {},
                            {},
                            120s});
    ASSERT_EQ(res.exit_code, 0) << res.err;
  }
  auto after = open();
  const auto prefix = unique_name("restart");
  insert_expired_locks(after, prefix, 50);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (count_prefix(after, prefix) != 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the reaper did not survive the restart";
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(r.running());
  r.stop();
}

TEST_P(ReaperConformance, SessionLockExcludesAndIsFreedWhenItsConnectionIsKilled) {
  auto db1 = open();
  auto db2 = open();
  const auto name = unique_name("sess") + std::string(70, 'x');  // > 64 characters: hashed on MySQL
  session_lock_options on_own;
  on_own.dedicated_connection = false;  // on db1's connection, so the test can kill it
  auto a = session_lock::try_lock(db1, name, on_own);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->is_held());
  EXPECT_FALSE(session_lock::try_lock(db2, name));
  EXPECT_THROW((void)session_lock::lock(db2, name, 200ms), timeout_error);
  if (!can_kill_connections()) {
    // SQLite falls back to a lease lock: no connection to kill; check the release path.
    a->unlock();
    EXPECT_FALSE(a->is_held());
    EXPECT_TRUE(session_lock::try_lock(db2, name)) << "free after unlock";
    return;
  }
  ASSERT_NO_FATAL_FAILURE(kill_connection(db1));
  auto b = session_lock::lock(db2, name, 10s);  // the server released it with the connection
  EXPECT_TRUE(b.is_held());
  EXPECT_FALSE(a->is_held());
  EXPECT_THROW(a->unlock(), lock_lost);
  b.unlock();
  EXPECT_FALSE(b.is_held());
}

TEST_P(ReaperConformance, MetricsCountLockEventsAndRenderPrometheusText) {
  auto db = open();
  std::atomic<std::uint64_t> seen{0};
  on_metric([&](counter c, std::uint64_t n) {
    if (c == counter::lock_acquired) seen += n;
  });
  const auto before = metrics();
  {
    session a(db), b(open());
    const auto name = unique_name("m");
    auto l = a.try_acquire(name);
    ASSERT_TRUE(l);
    EXPECT_FALSE(b.try_acquire(name));
    l->release();
  }
  on_metric(nullptr);
  const auto after = metrics();
  EXPECT_EQ(after[counter::lock_acquired] - before[counter::lock_acquired], 1u);
  EXPECT_EQ(after[counter::lock_not_acquired] - before[counter::lock_not_acquired], 1u);
  EXPECT_EQ(after[counter::lock_released] - before[counter::lock_released], 1u);
  EXPECT_EQ(seen.load(), 1u);
  const auto text = render_prometheus(after);
  EXPECT_NE(text.find("# TYPE dblock_lock_acquired_total counter"), std::string::npos);
  EXPECT_NE(text.find("dblock_lock_wait_seconds_bucket{le=\"+Inf\"}"), std::string::npos);
  EXPECT_NE(text.find("dblock_reaped_locks_total"), std::string::npos);
}

TEST_P(ReaperConformance, ReapsExpiredIdempotencyRecordsButNotLiveOnes) {
  auto db = dblock::open(fresh_database());
  db.migrate();
  idempotency_options shortlived;
  shortlived.lease = 100ms;
  shortlived.retention = 300ms;
  idempotency_store quick(db, shortlived), lasting(db);
  const auto fp = fingerprint("r");
  for (int i = 0; i < 30; ++i) {
    auto r = quick.begin("old", std::string("k").append(std::to_string(i)), fp);
    ASSERT_TRUE(r.started());
    ASSERT_EQ(quick.complete(r.attempt, {200, "done"}), finish_status::recorded);
  }
  auto live = lasting.begin("new", "in-progress", fp);
  ASSERT_TRUE(live.started());
  auto kept = lasting.begin("new", "completed", fp);
  ASSERT_EQ(lasting.complete(kept.attempt, {201, "kept"}), finish_status::recorded);
  std::this_thread::sleep_for(600ms);  // past the short retention, by the server's clock too
  reaper_options ro;
  ro.batch_size = 7;  // several batches
  reaper r(db, ro);
  auto rep = r.run_once();
  EXPECT_EQ(rep.idempotency, 30u);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_idempotency"), 2);
  EXPECT_EQ(lasting.begin("new", "completed", fp).outcome, idempotency_outcome::replay);
  EXPECT_EQ(lasting.complete(live.attempt, {200, "late but fine"}), finish_status::recorded);
}

// Wait-line tickets of waiters that stopped renewing are deleted past the grace; the ticket
// of a live waiter is renewed and spared, and that waiter is still granted the name.
TEST_P(ReaperConformance, ReapsExpiredWaitLineTicketsButNotALiveWaitersOne) {
  auto url = fresh_database();
  auto db = dblock::open(url);
  db.migrate();
  const std::int64_t dead = 40;
  switch (kind()) {
    case dialect::postgresql:
      raw_query(db,
                "INSERT INTO dblock_lock_waiters (name, owner, expires_at) SELECT 'contested', repeat('d', 32), "
                "now() - interval '1 hour' FROM generate_series(1, CAST($1 AS integer))",
                {dead});
      break;
    case dialect::mysql8:
    case dialect::mysql:
      raw_query(db,
                "INSERT INTO dblock_lock_waiters (name, owner, expires_at) SELECT 'contested', REPEAT('d', 32), "
                "UTC_TIMESTAMP(6) - INTERVAL 1 HOUR FROM seq_1_to_" + std::to_string(dead));
      break;
    case dialect::sqlite:
      raw_query(db,
                "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $1) "
                "INSERT INTO dblock_lock_waiters (name, ticket, owner, expires_at) "
                "SELECT 'contested', i, 'dddddddddddddddddddddddddddddddd', 1000 FROM c",  // numbered by hand
                {dead});
      break;
  }
  session_options so;
  so.ttl = 1500ms;  // the waiter's ticket is renewed several times during the test
  session_options hold_opts;
  hold_opts.ttl = 60s;  // the holder keeps the name through the test even on a starved machine
  auto hdb = dblock::open(url);
  session holder(hdb, hold_opts);
  auto held = holder.acquire("contested", 5s);
  std::atomic<bool> granted{false};
  std::jthread waiter([&] {
    auto wdb = dblock::open(url);
    session w(wdb, so);
    auto l = w.acquire("contested", 30s);
    granted = true;
    l.release();
  });
  // The waiter has taken its ticket once a live one exists.
  const char* live_tickets = kind() == dialect::postgresql
                                 ? "SELECT COUNT(*) FROM dblock_lock_waiters WHERE expires_at > now()"
                             : mysql_family()
                                 ? "SELECT COUNT(*) FROM dblock_lock_waiters WHERE expires_at > UTC_TIMESTAMP(6)"
                                 : "SELECT COUNT(*) FROM dblock_lock_waiters "
                                   "WHERE expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
  for (int i = 0; i < 500 && query_int(db, live_tickets) == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(query_int(db, live_tickets), 1) << "the waiter took no ticket";
  std::this_thread::sleep_for(2000ms);  // longer than the ticket's TTL: only renewals keep it

  reaper_options ro;
  ro.grace = 0ms;
  ro.batch_size = 15;  // several batches
  const auto before = metrics()[counter::reaped_waiters];
  reaper r(db, ro);
  auto rep = r.run_once();
  EXPECT_EQ(rep.waiters, static_cast<std::uint64_t>(dead));
  EXPECT_EQ(metrics()[counter::reaped_waiters] - before, static_cast<std::uint64_t>(dead));
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_lock_waiters"), 1) << "the live waiter's ticket was reaped";
  EXPECT_FALSE(granted.load());
  held.release();
  waiter.join();
  EXPECT_TRUE(granted.load());
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_lock_waiters"), 0) << "a grant consumes its ticket";
}

TEST_P(ReaperConformance, MetricsCountIdempotencyOutcomes) {
  auto db = open();
  idempotency_store store(db);
  const auto scope = unique_name("ms");
  const auto fp = fingerprint("request");
  const auto before = metrics();
  auto first = store.begin(scope, "k1", fp);
  ASSERT_TRUE(first.started());
  EXPECT_EQ(store.begin(scope, "k1", fp).outcome, idempotency_outcome::in_progress);
  EXPECT_EQ(store.begin(scope, "k1", fingerprint("other")).outcome, idempotency_outcome::mismatch);
  ASSERT_EQ(store.complete(first.attempt, {200, "ok"}), finish_status::recorded);
  EXPECT_EQ(store.begin(scope, "k1", fp).outcome, idempotency_outcome::replay);
  const auto after = metrics();
  EXPECT_EQ(after[counter::idem_first] - before[counter::idem_first], 1u);
  EXPECT_EQ(after[counter::idem_in_progress] - before[counter::idem_in_progress], 1u);
  EXPECT_EQ(after[counter::idem_mismatch] - before[counter::idem_mismatch], 1u);
  EXPECT_EQ(after[counter::idem_replay] - before[counter::idem_replay], 1u);
  EXPECT_NE(render_prometheus(after).find("dblock_idempotency_replay_total"), std::string::npos);
}

DBLOCK_CONFORMANCE_SUITE(ReaperConformance);

}  // namespace
}  // namespace dblock::test
