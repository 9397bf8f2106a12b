// tests/conformance/unlogged_test.cpp — unlogged lock tables (docs/locks.md, "Unlogged lock
// tables"): migrate_options::lock_tables switches PostgreSQL's three lock tables between
// logged and unlogged; other databases refuse unlogged and stay unchanged. Each test works
// on a database of its own (fresh_database), so the shared test database keeps its logged
// tables. The crash tests restart the server (or all its processes): "ServerRestart" in
// their names runs them alone.
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "conformance/fixture.hpp"
#include "dblock/lock.hpp"
#include "support/process.hpp"

namespace dblock::test {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr std::int64_t fence_epoch_unit = std::int64_t{1} << 40;

class UnloggedConformance : public conformance {
 protected:
  static std::int64_t unlogged_tables(database& db) {
    return query_int(db,
                     "SELECT count(*) FROM pg_class WHERE relname IN ('dblock_locks', 'dblock_lock_waiters', "
                     "'dblock_lock_holders') AND relpersistence = 'u' AND pg_table_is_visible(oid)");
  }
  // dblock_locks' CHECK constraints: 3 on logged tables, none on unlogged ones.
  static std::int64_t lock_checks(database& db) {
    return query_int(db,
                     "SELECT count(*) FROM pg_constraint WHERE conrelid = CAST('dblock_locks' AS regclass) "
                     "AND contype = 'c'");
  }
  static migrate_options with(lock_table_mode m) {
    migrate_options mo;
    mo.lock_tables = m;
    mo.replication = replication_policy::ignore;
    return mo;
  }
  session_options quick(milliseconds ttl = 2000ms) {
    session_options o;
    o.ttl = ttl;
    o.min_backoff = 5ms;
    o.max_backoff = 50ms;
    return o;
  }
  // Grants and releases `name` once; its fence.
  static std::int64_t grant_once(session& s, const std::string& name) {
    auto l = s.try_acquire(name);
    if (!l) return -1;
    const auto f = l->fence();
    l->release();
    return f;
  }
};

TEST_P(UnloggedConformance, UnloggedIsRefusedOutsidePostgresqlAndLeavesTheDatabaseUnchanged) {
  if (kind() == dialect::postgresql) GTEST_SKIP() << "PostgreSQL has unlogged tables (next tests)";
  auto db = dblock::open(fresh_database());
  try {
    (void)db.migrate(with(lock_table_mode::unlogged));
    FAIL() << "unlogged lock tables were accepted on " << combo().name;
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("only on PostgreSQL"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(table_exists(db, "dblock_locks")) << "the refusal ran before any migration";
  // logged is what these databases always are: accepted, the schema migrated as usual.
  EXPECT_NO_THROW((void)db.migrate(with(lock_table_mode::logged)));
  EXPECT_TRUE(table_exists(db, "dblock_locks"));
}

TEST_P(UnloggedConformance, SwitchesBothWaysAndFencesKeepIncreasing) {
  if (kind() != dialect::postgresql) GTEST_SKIP() << "unlogged tables exist only on PostgreSQL";
  auto db = dblock::open(fresh_database());
  (void)db.migrate(with(lock_table_mode::keep));
  EXPECT_EQ(unlogged_tables(db), 0) << "a new schema is logged";
  EXPECT_EQ(lock_checks(db), 3);
  const auto name = unique_name("unlogged");
  std::int64_t last = 0;
  {
    session s(db, quick());
    last = grant_once(s, name);
    ASSERT_GT(last, 0);
  }
  (void)db.migrate(with(lock_table_mode::unlogged));
  EXPECT_EQ(unlogged_tables(db), 3);
  EXPECT_EQ(lock_checks(db), 0) << "unlogged: the grant's INSERT checks no constraint expression";
  {
    session s(db, quick());
    const auto f = grant_once(s, name);
    EXPECT_GT(f, last);
    EXPECT_GT(f / fence_epoch_unit, last / fence_epoch_unit) << "the epoch is above the logged schema's timeline";
    last = f;
    // Every lock kind works on the unlogged tables.
    auto w = s.try_acquire(name + "_rw", lock_mode::write);
    ASSERT_TRUE(w);
    EXPECT_GT(w->fence(), last);
    last = w->fence();
    w->release();
    auto p = s.try_acquire_permits(name + "_sem", 3, 2);
    ASSERT_TRUE(p);
    p->release();
  }
  (void)db.migrate(with(lock_table_mode::unlogged));  // again: nothing changes
  EXPECT_EQ(unlogged_tables(db), 3);
  EXPECT_EQ(lock_checks(db), 0);
  (void)db.migrate(with(lock_table_mode::logged));
  EXPECT_EQ(unlogged_tables(db), 0);
  EXPECT_EQ(lock_checks(db), 3) << "logged again: the constraints are back";
  EXPECT_THROW((void)query_int(db, "INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at) "
                                   "VALUES ('', 'o', 1, 1, now(), now()) RETURNING 1"),
               error)
      << "an empty name is refused again";
  (void)db.migrate(with(lock_table_mode::logged));  // again: nothing changes
  EXPECT_EQ(lock_checks(db), 3);
  {
    session s(db, quick());
    const auto f = grant_once(s, name);
    EXPECT_GT(f, last) << "logged again, fences still come from the epoch";
    last = f;
  }
  (void)db.migrate();  // keep
  EXPECT_EQ(unlogged_tables(db), 0);
}

// A crash of the server (SIGKILL, then crash recovery) empties the unlogged lock tables:
// the lock is free at once for another session, the holder learns at its next renewal
// that its lease is gone, and the next fence is above every fence before the crash.
TEST_P(UnloggedConformance, ACrashServerRestartFreesEveryLockAndFencesKeepIncreasing) {
  if (kind() != dialect::postgresql) GTEST_SKIP() << "unlogged tables exist only on PostgreSQL";
  const char* dir = std::getenv("DBLOCK_TEST_SERVERS_DIR");
  if (!dir) {
    if (std::getenv("DBLOCK_TEST_REQUIRE_ALL")) FAIL() << "DBLOCK_TEST_SERVERS_DIR not set (scripts/servers)";
    GTEST_SKIP() << "DBLOCK_TEST_SERVERS_DIR not set";
  }
  const auto url = fresh_database();
  auto db = dblock::open(url);
  (void)db.migrate(with(lock_table_mode::unlogged));
  const auto name = unique_name("crash");
  std::atomic<int> lost{0};
  auto opts = quick(60'000ms);  // far beyond the test: only the crash can free it
  opts.renew_divisor = 20;       // a renewal every 3 s
  opts.on_lost = [&](const lost_lease&) { ++lost; };
  session holder(db, opts);
  auto held = holder.try_acquire(name);
  ASSERT_TRUE(held);
  const auto before = held->fence();

  auto res = run_process({{DBLOCK_SERVERS_SCRIPT, "crash-restart-pg", dir}, {}, {}, 120s});
  ASSERT_EQ(res.exit_code, 0) << res.err;

  auto db2 = dblock::open(url);
  session other(db2, quick());
  std::optional<lease> got;
  for (int i = 0; i < 100 && !got; ++i) {  // the first tries may meet the server still starting
    try {
      got = other.try_acquire(name);
    } catch (const error& e) {
      if (!e.retryable()) throw;
    }
    if (!got) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(got) << "the crash emptied the lock table: the lock is free at once, not after its 60 s TTL";
  EXPECT_GT(got->fence(), before);
  EXPECT_GT(got->fence() / fence_epoch_unit, before / fence_epoch_unit) << "a server start raises the epoch";
  // The holder's next renewal finds its row gone.
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (lost.load() == 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(lost.load(), 1) << "the holder learns at its next renewal";
  EXPECT_FALSE(held->is_held());
  got->release();
}

// A crash of one server process (SIGKILL of a backend) makes PostgreSQL end every process
// and empty every unlogged table, sequence included, without restarting the postmaster:
// pg_postmaster_start_time() stays the same. The next fence must still be above every
// fence before the crash (the reset is told by dblock_fence_epoch_live, not the start time).
TEST_P(UnloggedConformance, ABackendCrashServerRestartKeepsFencesIncreasing) {
  if (kind() != dialect::postgresql) GTEST_SKIP() << "unlogged tables exist only on PostgreSQL";
  const auto url = fresh_database();
  std::int64_t before = 0, started = 0;
  const auto name = unique_name("backend_crash");
  {
    auto db = dblock::open(url);
    (void)db.migrate(with(lock_table_mode::unlogged));
    session s(db, quick());
    for (int i = 0; i < 5; ++i) before = std::max(before, grant_once(s, name));
    ASSERT_GT(before, 0);
    started = query_int(db, "SELECT CAST(extract(epoch FROM pg_postmaster_start_time()) * 1000000 AS bigint)");
    const auto pid = query_int(db, "SELECT pg_backend_pid()");
    if (::kill(static_cast<pid_t>(pid), SIGKILL) != 0) {
      const int err = errno;
      if (std::getenv("DBLOCK_TEST_REQUIRE_ALL")) FAIL() << "cannot signal the server process: " << std::strerror(err);
      GTEST_SKIP() << "cannot signal the server process " << pid << ": " << std::strerror(err);
    }
  }
  std::optional<std::int64_t> after;
  std::int64_t started_after = 0;
  for (int i = 0; i < 100 && !after; ++i) {  // the server re-initialises for a moment
    try {
      auto db = dblock::open(url);
      session s(db, quick());
      const auto f = grant_once(s, name);
      if (f > 0) after = f;
      started_after =
          query_int(db, "SELECT CAST(extract(epoch FROM pg_postmaster_start_time()) * 1000000 AS bigint)");
    } catch (const error& e) {
      if (!e.retryable()) throw;
    }
    if (!after) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(after) << "no grant after the crash";
  EXPECT_EQ(started_after, started) << "the postmaster did not restart: only its processes did";
  EXPECT_GT(*after, before);
  EXPECT_GT(*after / fence_epoch_unit, before / fence_epoch_unit) << "the reset raised the epoch";
}

DBLOCK_CONFORMANCE_SUITE(UnloggedConformance);

}  // namespace
}  // namespace dblock::test
