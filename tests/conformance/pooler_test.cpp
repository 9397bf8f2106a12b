// tests/conformance/pooler_test.cpp — PostgreSQL behind PgBouncer in transaction pooling
// mode (?pooler=transaction; DESIGN, principle 7, "Poolers"), with libpqxx and SOCI:
// lease locks between two sessions (try, re-entry, release, a waiting acquire), session
// locks that exclude across connections, and two concurrent migrations of one fresh
// database. Each test gets a fresh database, made on the server directly
// (DBLOCK_TEST_PG_URL) and used through the pooler (DBLOCK_TEST_PGBOUNCER_URL, written
// by scripts/servers); while it runs, the server must show no session advisory lock.
// A missing URL skips, or fails with DBLOCK_TEST_REQUIRE_ALL=1.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <thread>

#include "support/servers.hpp"

namespace dblock::test {
namespace {

using namespace std::chrono_literals;

struct pooled_client {
  const char* name;
  const char* scheme_prefix;
};

class PoolerConformance : public ::testing::TestWithParam<pooled_client> {
 protected:
  void SetUp() override {
    auto pg = env_url(pg_url_env);
    auto bouncer = env_url(pgbouncer_url_env);
    if (!pg || !bouncer) {
      if (require_all()) FAIL() << pg_url_env << " and " << pgbouncer_url_env << " must be set (DBLOCK_TEST_REQUIRE_ALL=1)";
      GTEST_SKIP() << pgbouncer_url_env << " is not set (scripts/servers starts PgBouncer when it is installed)";
    }
    pg_ = *pg;
    db_name_ = create_database(pg_, dialect::postgresql);
    url_ = GetParam().scheme_prefix + with_database(*bouncer, db_name_);
    url_ += (url_.find('?') == std::string::npos ? "?" : "&");
    url_ += "pooler=transaction";
  }
  void TearDown() override {
    if (!db_name_.empty()) drop_database(pg_, dialect::postgresql, db_name_);
  }

  // A new connection through the pooler.
  database open_pooled() { return dblock::open(url_); }

  // Session-level advisory locks in the test's database (objsubid 1: one-bigint keys, as
  // session locks and the migration lock use; the wait line's keys are two-int, class
  // 1684171889), seen from a direct connection.
  std::int64_t session_advisory_locks() {
    pqxx::connection c(with_database(pg_, db_name_));
    pqxx::nontransaction tx(c);
    auto r = tx.exec_params(
        "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = "
        "(SELECT oid FROM pg_database WHERE datname = $1) AND (objsubid = 1 OR classid = 1684171889)",
        db_name_);
    return r[0][0].as<std::int64_t>();
  }

  std::string pg_;
  std::string db_name_;
  std::string url_;
};

TEST_P(PoolerConformance, LeaseLocksBetweenTwoSessions) {
  auto db1 = open_pooled();
  db1.migrate();
  ASSERT_TRUE(detail::backend_of(db1)->pooled());
  auto db2 = open_pooled();
  session_options so;
  so.ttl = 5s;
  session s1(db1, so);
  session s2(db2, so);

  auto a = s1.try_acquire("pooled");
  ASSERT_TRUE(a);
  EXPECT_FALSE(s2.try_acquire("pooled")) << "held by s1";
  auto again = s1.try_acquire("pooled");
  ASSERT_TRUE(again) << "re-entry";
  EXPECT_EQ(again->fence(), a->fence());
  again->release();
  EXPECT_FALSE(s2.try_acquire("pooled")) << "still held once";
  const auto first_fence = a->fence();
  a->release();
  {
    auto b = s2.try_acquire("pooled");
    ASSERT_TRUE(b) << "released";
    EXPECT_GT(b->fence(), first_fence);
  }

  // A waiting acquire: no wait line, no LISTEN; it polls until s1 lets go.
  auto held = std::make_unique<lease>(s1.acquire("pooled", 5s));
  std::atomic<bool> got{false};
  std::atomic<std::int64_t> waiter_fence{0};
  std::thread waiter([&] {
    auto l = s2.acquire("pooled", 20s);
    got = true;
    waiter_fence = l.fence();
  });
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(got.load());
  EXPECT_EQ(session_advisory_locks(), 0) << "a waiter holds no session advisory lock (no place in line)";
  const auto held_fence = held->fence();
  held.reset();  // released
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_GT(waiter_fence.load(), held_fence);
  auto last = s1.try_acquire("pooled");
  ASSERT_TRUE(last);
  EXPECT_GT(last->fence(), held_fence);
}

TEST_P(PoolerConformance, SessionLockExcludesAcrossConnections) {
  open_pooled().migrate();  // the lease fallback lives in dblock_locks
  const int threads = 4, rounds = 10;
  std::atomic<int> inside{0}, violations{0}, done{0}, advisory{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&] {
      auto db = open_pooled();
      for (int i = 0; i < rounds; ++i) {
        session_lock_options lo;
        lo.sqlite_ttl = 5s;
        auto l = session_lock::lock(db, "pooled-session", 60s, lo);
        if (inside.fetch_add(1) != 0) ++violations;
        if (!l.is_held()) ++violations;
        if (i == 0 && session_advisory_locks() != 0) ++advisory;
        std::this_thread::sleep_for(2ms);
        inside.fetch_sub(1);
        l.unlock();
        ++done;
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(violations.load(), 0) << "two holders at once";
  EXPECT_EQ(advisory.load(), 0) << "a session lock behind the pooler must not be a session advisory lock";
  EXPECT_EQ(done.load(), threads * rounds);
  auto db = open_pooled();
  auto one = session_lock::try_lock(db, "pooled-session");
  ASSERT_TRUE(one);
  EXPECT_FALSE(session_lock::try_lock(db, "pooled-session")) << "a second connection is refused";
}

TEST_P(PoolerConformance, ConcurrentMigrationsBothSucceedAndApplyEachOnce) {
  std::atomic<int> failures{0};
  std::vector<migrate_result> results(2);
  std::vector<std::thread> ts;
  for (int i = 0; i < 2; ++i) {
    ts.emplace_back([&, i] {
      try {
        auto db = open_pooled();
        results[static_cast<std::size_t>(i)] = db.migrate();
      } catch (const std::exception& e) {
        ++failures;
        ADD_FAILURE() << "migrate " << i << " failed: " << e.what();
      }
    });
  }
  for (auto& t : ts) t.join();
  ASSERT_EQ(failures.load(), 0);
  auto db = open_pooled();
  const auto recorded = db.applied_migrations("dblock");
  EXPECT_EQ(results[0].applied.size() + results[1].applied.size(), recorded.size()) << "each migration applied once";
  EXPECT_EQ(results[0].applied.size() + results[0].already_applied, recorded.size());
  EXPECT_EQ(results[1].applied.size() + results[1].already_applied, recorded.size());
  EXPECT_NO_THROW(db.require_schema());
  auto again = db.migrate();
  EXPECT_TRUE(again.applied.empty());
  EXPECT_EQ(again.already_applied, recorded.size());
  EXPECT_EQ(session_advisory_locks(), 0);
}

// Crash detection does not apply through a transaction pooler (a session-level marker would
// stay with the pooler's server connection): sessions take no marker, and a SIGKILLed holder
// process's lock is granted to a waiter only after its lease ran out (TTL 2 s, no lock delay).
TEST_P(PoolerConformance, KilledHolderKeepsTheTtlRule) {
  auto db = open_pooled();
  db.migrate();
  session_options so;
  so.ttl = 2000ms;
  so.lock_delay = 0ms;
  session w(db, so);
  EXPECT_NE(w.owner().front(), 'm') << "a liveness marker through a transaction pooler";
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string u = url_;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      auto cdb = dblock::open(u);
      session s(cdb, so);
      auto l = s.acquire("pooled-killed", 10s);
      const char ok = 1;
      (void)!::write(fds[1], &ok, 1);
      std::this_thread::sleep_for(60s);
    } catch (...) {
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  char ok = 0;
  ASSERT_EQ(::read(fds[0], &ok, 1), 1);
  ::close(fds[0]);
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  auto l = w.acquire("pooled-killed", 20s);
  const auto took = std::chrono::steady_clock::now() - killed;
  // The holder's last renewal came at most one period (TTL / 3) before the kill.
  EXPECT_GE(took, so.ttl - so.ttl / 3 - 50ms) << "granted before the killed holder's lease ran out";
}

INSTANTIATE_TEST_SUITE_P(, PoolerConformance,
                         ::testing::Values(pooled_client{"pqxx_pgbouncer", ""}, pooled_client{"soci_pgbouncer", "soci+"}),
                         [](const ::testing::TestParamInfo<pooled_client>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace dblock::test
