// tests/conformance/hand_off_test.cpp — the in-release hand-off on all combinations: a final
// release of a lease granted through the wait line makes the row the grant of the head of
// the line in its own commit (lease_table_ops::release, to_line); the head's try then finds
// it handed (granted, read-only, holds 1); a waiter that stopped waiting gives a handed grant
// back; only a lease lock's waiter is handed anything; where releases are notified
// (PostgreSQL through libpqxx) the head holds the lock from the release's notice, without a
// read, and a head in the releasing process holds it from the release's answer on every
// database; on SQLite a head in another process is woken through the wake file beside the
// database and holds the lock from its record. The statements are driven one by one first (every outcome, no timing), then through
// sessions.
#include <poll.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <vector>
#include <optional>
#include <thread>

#include "conformance/fixture.hpp"
#include "core/catalog.hpp"
#include "core/internal.hpp"
#include "core/ops/lease_table.hpp"
#include "core/release_board.hpp"
#include "core/wake_file.hpp"
#include "dblock/lock.hpp"
#include "dblock/metrics.hpp"

namespace dblock::test {
namespace {

using namespace std::chrono_literals;
using detail::release_outcome;

class HandOffConformance : public conformance {
 protected:
  // Owner tokens as sessions make them: 32 characters.
  static std::string owner(char c) { return std::string(32, c); }
  detail::grant_request request(const std::string& name, const std::string& who,
                                std::int64_t bound = detail::behind_every_waiter) {
    detail::grant_request r{name, who, 10'000, 0, "holder-" + who.substr(0, 1)};
    r.line_bound = bound;
    return r;
  }
  std::int64_t rows_of(database& db, const std::string& name) {
    return query_int(db, "SELECT COUNT(*) FROM dblock_locks WHERE name = $1", {name});
  }
  std::int64_t in_line(database& db, const std::string& name) {
    return query_int(db, "SELECT COUNT(*) FROM dblock_lock_waiters WHERE name = $1", {name});
  }
  // Waits up to 5 s for a 100 ms window in which `db` sends nothing.
  static bool goes_quiet(database& db) {
    for (int i = 0; i < 50; ++i)
      if (round_trips_of(db, [] { std::this_thread::sleep_for(100ms); }) == 0) return true;
    return false;
  }
  // Waits up to 20 s for `n` tickets of `name` in line.
  bool wait_in_line(database& db, const std::string& name, std::int64_t n) {
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (in_line(db, name) < n && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
    return in_line(db, name) >= n;
  }
  // A thread that waits up to 60 s for `name` in session `s` and keeps the lease in `out`
  // (joined when it goes out of scope, also after a failed assertion).
  static std::jthread acquire_on_thread(session& s, const std::string& name, std::optional<lease>& out) {
    return std::jthread([&s, name, &out] {
      try {
        out.emplace(s.acquire(name, 60s));
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    });
  }
  // What a waiter in another process saw (fork_waiter).
  struct child_report {
    std::int64_t fence = 0;
    std::int64_t taken_without_read = 0;  // its lock_handoff_notices counter rose by this
    std::int64_t granted_ns = 0;          // steady_clock (CLOCK_MONOTONIC, shared by processes)
  };
  // A child process that, once told through the returned pipe's write end, waits up to 60 s
  // for `name` in a session that polls every 8 s, and writes a child_report to *report_fd.
  // Forked before this process starts a thread of its own.
  pid_t fork_waiter(const std::string& name, int* go_fd, int* report_fd) {
    int go[2], rep[2];
    if (::pipe(go) != 0 || ::pipe(rep) != 0) return -1;
    const std::string u = url();
    const pid_t child = ::fork();
    if (child == 0) {
      ::close(go[1]);
      ::close(rep[0]);
      char start = 0;
      if (::read(go[0], &start, 1) != 1) ::_exit(3);
      try {
        auto wdb = dblock::open(u);
        auto o = quick(30'000ms);
        o.detect_crashes = false;
        o.min_backoff = o.max_backoff = 8000ms;
        session w(wdb, o);
        const auto before = metrics()[counter::lock_handoff_notices];
        auto l = w.acquire(name, 60s);
        child_report r{l.fence(), static_cast<std::int64_t>(metrics()[counter::lock_handoff_notices] - before),
                       std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now().time_since_epoch())
                           .count()};
        (void)!::write(rep[1], &r, sizeof r);
        l.release();
        ::_exit(0);
      } catch (...) {
        ::_exit(2);
      }
    }
    ::close(go[0]);
    ::close(rep[1]);
    *go_fd = go[1];
    *report_fd = rep[0];
    return child;
  }
  // The child's report, read within 30 s, and its exit status.
  static std::optional<child_report> report_of(pid_t child, int report_fd) {
    std::optional<child_report> out;
    pollfd p{report_fd, POLLIN, 0};
    child_report r;
    if (::poll(&p, 1, 30'000) == 1 && ::read(report_fd, &r, sizeof r) == static_cast<ssize_t>(sizeof r)) out = r;
    ::close(report_fd);
    if (!out) ::kill(child, SIGKILL);
    int status = 0;
    (void)::waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) out.reset();
    return out;
  }
  static std::chrono::steady_clock::duration since_ns(std::chrono::steady_clock::time_point from, std::int64_t ns) {
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns)) - from;
  }

  // A lease of `name` held by raw owner `who` through the table (no session).
  lock_info raw_hold(detail::backend& b, const std::string& name, const std::string& who) {
    const auto g = detail::lease_table_for(kind()).acquire(b, request(name, who));
    EXPECT_TRUE(g.granted && g.state);
    return g.state.value_or(lock_info{});
  }
};

TEST_P(HandOffConformance, AReleaseHandsTheRowToTheHeadOfTheLineWhoseTryThenReadsIt) {
  auto db = open();
  auto& b = *detail::backend_of(db);
  const auto& table = detail::lease_table_for(kind());
  const auto& line = detail::wait_line_for(kind());
  const auto name = unique_name("handoff");
  const auto a = owner('a'), w = owner('w'), x = owner('x');

  const auto ga = table.acquire(b, request(name, a));
  ASSERT_TRUE(ga.granted && ga.state);
  const detail::line_grant wants{8'000, "holder-w", 0};
  const auto tw = line.join(b, name, w, 10'000, &wants);
  const auto tx = line.join(b, name, x, 10'000, &wants);  // behind w: not handed this time
  ASSERT_LT(tw, tx);

  ASSERT_EQ(table.release(b, name, a, ga.state->fence, true, false, true), release_outcome::handed);
  auto row = raw_query(db, "SELECT owner, holds, fence, ticket, holder FROM dblock_locks WHERE name = $1", {name});
  ASSERT_EQ(row.rows.size(), 1u);
  EXPECT_EQ(row.rows[0][0].value_or(""), w) << "the head's owner holds it";
  EXPECT_EQ(query_int(db, "SELECT holds FROM dblock_locks WHERE name = $1", {name}), 1);
  const auto handed_fence = query_int(db, "SELECT fence FROM dblock_locks WHERE name = $1", {name});
  EXPECT_GT(handed_fence, ga.state->fence) << "a hand-off is a new grant: a larger fence";
  EXPECT_EQ(query_int(db, "SELECT ticket FROM dblock_locks WHERE name = $1", {name}), tw);
  EXPECT_EQ(row.rows[0][4].value_or(""), "holder-w");
  EXPECT_EQ(in_line(db, name), 1) << "the head's ticket went with the hand-off, x's stays";

  // x's try is refused (w holds it); w's try with its ticket finds it handed: granted with
  // the row's fence, holds still 1 (not a re-entry), and no more than its TTL left.
  EXPECT_FALSE(table.acquire(b, request(name, x, tx)).granted);
  const auto gw = table.acquire(b, request(name, w, tw));
  ASSERT_TRUE(gw.granted && gw.state);
  EXPECT_EQ(gw.state->fence, handed_fence);
  EXPECT_LE(gw.state->expires_in, 8'000ms);
  EXPECT_GT(gw.state->expires_in, 0ms);
  EXPECT_EQ(query_int(db, "SELECT holds FROM dblock_locks WHERE name = $1", {name}), 1);
  // A second look (a lost answer, asked again) is still the same grant, still one hold.
  const auto again = table.acquire(b, request(name, w, tw));
  EXPECT_TRUE(again.granted);
  EXPECT_EQ(query_int(db, "SELECT holds FROM dblock_locks WHERE name = $1", {name}), 1);

  // The old grant can no longer release anything; w's release hands it on to x, and says so:
  // x's owner token, its ticket and the new fence.
  detail::handed_grant g;
  EXPECT_EQ(table.release(b, name, a, ga.state->fence, true, false, true, &g), release_outcome::not_ours);
  EXPECT_TRUE(g.owner.empty());
  ASSERT_EQ(table.release(b, name, w, handed_fence, true, false, true, &g), release_outcome::handed);
  EXPECT_EQ(query_int(db, "SELECT ticket FROM dblock_locks WHERE name = $1", {name}), tx);
  const auto x_fence = query_int(db, "SELECT fence FROM dblock_locks WHERE name = $1", {name});
  EXPECT_GT(x_fence, handed_fence);
  EXPECT_EQ(g.owner, x);
  EXPECT_EQ(g.ticket, tx);
  EXPECT_EQ(g.fence, x_fence);
  // Nobody left in line: the release deletes the row.
  EXPECT_EQ(table.release(b, name, x, x_fence, true, false, true), release_outcome::deleted);
  EXPECT_EQ(rows_of(db, name), 0);
  EXPECT_EQ(in_line(db, name), 0);
}

TEST_P(HandOffConformance, AWaiterThatStopsWaitingGivesAHandedGrantBackAndALeftTicketIsNeverHanded) {
  auto db = open();
  auto& b = *detail::backend_of(db);
  const auto& table = detail::lease_table_for(kind());
  const auto& line = detail::wait_line_for(kind());
  const auto name = unique_name("giveback");
  const auto a = owner('a'), w = owner('w');
  const detail::line_grant wants{8'000, "holder-w", 0};

  // Handed first, then the waiter leaves: its ticket is gone, so it drops the row.
  auto ga = table.acquire(b, request(name, a));
  ASSERT_TRUE(ga.granted && ga.state);
  const auto t1 = line.join(b, name, w, 10'000, &wants);
  ASSERT_EQ(table.release(b, name, a, ga.state->fence, true, false, true), release_outcome::handed);
  EXPECT_FALSE(line.leave(b, t1, w)) << "the hand-off consumed the ticket";
  EXPECT_FALSE(line.drop_handed(b, name, a, t1)) << "only the handed owner gives it back";
  EXPECT_TRUE(line.drop_handed(b, name, w, t1));
  EXPECT_EQ(rows_of(db, name), 0);
  EXPECT_FALSE(line.drop_handed(b, name, w, t1)) << "given back once";

  // The waiter leaves first: the release finds nobody and deletes the row.
  ga = table.acquire(b, request(name, a));
  ASSERT_TRUE(ga.granted && ga.state);
  const auto t2 = line.join(b, name, w, 10'000, &wants);
  EXPECT_TRUE(line.leave(b, t2, w));
  EXPECT_EQ(table.release(b, name, a, ga.state->fence, true, false, true), release_outcome::deleted);
  EXPECT_EQ(rows_of(db, name), 0);
}

TEST_P(HandOffConformance, OnlyALeaseLocksWaiterAtTheHeadIsHandedTheRow) {
  auto db = open();
  auto& b = *detail::backend_of(db);
  const auto& table = detail::lease_table_for(kind());
  const auto& line = detail::wait_line_for(kind());
  const auto name = unique_name("rwhead");
  const auto a = owner('a'), r = owner('r'), w = owner('w');
  const detail::line_grant wants{8'000, "holder-w", 0};

  auto ga = table.acquire(b, request(name, a));
  ASSERT_TRUE(ga.granted && ga.state);
  const auto tr = line.join(b, name, r, 10'000, nullptr);  // a read-write lock's waiter
  (void)line.join(b, name, w, 10'000, &wants);
  EXPECT_EQ(table.release(b, name, a, ga.state->fence, true, false, true), release_outcome::deleted)
      << "the head waits for something else: the row is deleted, nobody is skipped";
  EXPECT_EQ(rows_of(db, name), 0);
  EXPECT_EQ(in_line(db, name), 2);
  EXPECT_TRUE(line.leave(b, tr, r));
}

// Through sessions: b waits and gets the lock when a releases (b's own try); c waits behind
// b; b's release (a lease granted through the line) hands it to c, whose lease holds one
// hold, no more than its TTL, and whose release deletes the row (nobody left in line).
TEST_P(HandOffConformance, SessionsHandAContendedLockOnAndHoldItOnce) {
  auto db_a = open();
  auto db_b = open();
  auto db_c = open();
  session_options o;
  o.ttl = 5'000ms;
  o.lock_delay = 0ms;
  session a(db_a, o), sb(db_b, o), sc(db_c, o);
  const auto name = unique_name("sessions");
  auto la = a.try_acquire(name);
  ASSERT_TRUE(la);
  auto wait_in_line = [&](std::int64_t n) {
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (in_line(db_a, name) < n && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
    return in_line(db_a, name) >= n;
  };
  std::optional<lease> lb, lc;
  std::thread tb([&] { lb.emplace(sb.acquire(name, 30s)); });
  ASSERT_TRUE(wait_in_line(1));
  la->release();
  tb.join();
  ASSERT_TRUE(lb && lb->is_held());
  std::thread tc([&] { lc.emplace(sc.acquire(name, 30s)); });
  ASSERT_TRUE(wait_in_line(1));
  const auto b_fence = lb->fence();
  lb->release();
  tc.join();
  ASSERT_TRUE(lc && lc->is_held());
  EXPECT_GT(lc->fence(), b_fence);
  EXPECT_EQ(query_int(db_a, "SELECT holds FROM dblock_locks WHERE name = $1", {name}), 1);
  EXPECT_EQ(query_int(db_a, "SELECT COUNT(*) FROM dblock_locks WHERE name = $1 AND ticket IS NOT NULL", {name}), 1)
      << "c's grant was made by b's release";
  EXPECT_LE(lc->remaining(), o.ttl);
  lc->release();
  EXPECT_EQ(rows_of(db_a, name), 0);
  EXPECT_EQ(in_line(db_a, name), 0);
}

// One session with owner_scope::thread: its threads share one owner token, so a row a
// release handed one waiting thread looks like the session's own row to the others until
// that thread reads it. 4 threads of that session and 2 threads with sessions of their own
// take the lock in turns with waits; the critical section counts how many are inside at
// once. Violations: more than one inside, a timeout or an error.
TEST_P(HandOffConformance, ThreadsOfAThreadScopedSessionExcludeEachOtherThroughHandOffs) {
  const int rounds = kind() == dialect::sqlite ? 10 : 20;
  const auto name = unique_name("tscope");
  auto shared_db = open();
  session_options o;
  o.ttl = 5'000ms;
  o.lock_delay = 0ms;
  o.scope = owner_scope::thread;
  session shared(shared_db, o);
  std::atomic<int> inside{0}, violations{0};
  auto take_turns = [&](session& s) {
    try {
      for (int i = 0; i < rounds; ++i) {
        auto l = s.acquire(name, 60s);
        if (inside.fetch_add(1) != 0) {
          ++violations;
          std::fprintf(stderr, "two inside: fence %lld\n", static_cast<long long>(l.fence()));
        }
        std::this_thread::sleep_for(1ms);
        inside.fetch_sub(1);
        l.release();
        // Right after handing it on, a try of this thread: granted only if nobody is inside.
        if (auto again = s.try_acquire(name)) {
          if (inside.fetch_add(1) != 0) {
            ++violations;
            std::fprintf(stderr, "try granted while another is inside: fence %lld\n",
                         static_cast<long long>(again->fence()));
          }
          inside.fetch_sub(1);
        }
      }
    } catch (const std::exception& e) {
      ++violations;
      std::fprintf(stderr, "worker: %s\n", e.what());
    }
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) ts.emplace_back([&] { take_turns(shared); });
  for (int t = 0; t < 2; ++t)
    ts.emplace_back([&] {
      auto db = open();
      session_options own = o;
      own.scope = owner_scope::session;
      session s(db, own);
      take_turns(s);
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(rows_of(shared_db, name), 0);
}

// The head of the line takes its grant from the release's notice, which names its ticket,
// owner and fence: the lease holds that fence, the row is its grant, and the waiter sent no
// try to read it. The holder is another owner released through the table (no bump of this
// process's board), and the waiter's backoff is 8 s, so a grant within 3 s came from the
// notice; the link's server session, found by its application_name, shows when it listens.
TEST_P(HandOffConformance, TheHeadHoldsTheLockFromTheReleasesNoticeWithoutReadingIt) {
  if (kind() != dialect::postgresql || client() != client_library::pqxx)
    GTEST_SKIP() << "release notices are sent by PostgreSQL and received through libpqxx only";
  auto db = open();
  auto& b = *detail::backend_of(db);
  const auto& table = detail::lease_table_for(kind());
  const auto name = unique_name("notice");
  const auto a = owner('a');
  const auto ga = table.acquire(b, request(name, a));
  ASSERT_TRUE(ga.granted && ga.state);

  const std::string app = "dblock-handoff-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand());
  open_options named;
  named.application_name = app;
  auto wdb = dblock::open(url(), named);
  auto o = quick(30'000ms);
  o.detect_crashes = false;  // no heartbeats on the link: its last statement is the LISTEN
  o.min_backoff = o.max_backoff = 8000ms;
  session waiter(wdb, o);
  auto await_listen = [&] {
    for (int i = 0; i < 1000; ++i) {
      auto r = raw_query(db,
                         "SELECT query FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle' "
                         "AND query ILIKE 'listen%'",
                         {app});
      if (!r.rows.empty()) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  };
  const auto notices_before = metrics()[counter::lock_handoff_notices];
  std::atomic<std::int64_t> got{0};
  std::atomic<bool> held{false};
  std::optional<lease> l;
  std::thread t([&] {
    try {
      l.emplace(waiter.acquire(name, 60s));
      got = l->fence();
      held = l->is_held();
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  });
  ASSERT_TRUE(await_listen()) << "the waiting head's link never listened";
  ASSERT_EQ(in_line(db, name), 1);
  const auto released = std::chrono::steady_clock::now();
  ASSERT_EQ(table.release(b, name, a, ga.state->fence, true, false, true), release_outcome::handed);
  t.join();
  const auto took = std::chrono::steady_clock::now() - released;

  const auto row_fence = query_int(db, "SELECT fence FROM dblock_locks WHERE name = $1", {name});
  EXPECT_EQ(got.load(), row_fence) << "the lease holds the fence the release granted";
  EXPECT_GT(row_fence, ga.state->fence);
  EXPECT_TRUE(held.load());
  EXPECT_EQ(metrics()[counter::lock_handoff_notices], notices_before + 1) << "the grant was read, not taken from the notice";
  EXPECT_LT(took, 3s) << "the waiter was not woken by the release notice";
  EXPECT_EQ(in_line(db, name), 0);
  EXPECT_EQ(query_int(db, "SELECT holds FROM dblock_locks WHERE name = $1", {name}), 1);
  // The lease is the session's like any other: renewed, and released by deleting the row.
  ASSERT_TRUE(l);
  l->release();
  EXPECT_EQ(rows_of(db, name), 0);
}

// Inside the caller's transaction the hand-off is not committed when the release returns: it
// must not say whom it granted (a waiter of this process would hold a grant that a rollback
// takes back). After a rollback the row is the releaser's again and the ticket still waits.
TEST_P(HandOffConformance, AReleaseInsideATransactionDoesNotPassItsGrantOn) {
  auto db = open();
  auto& b = *detail::backend_of(db);
  const auto& table = detail::lease_table_for(kind());
  const auto& line = detail::wait_line_for(kind());
  const auto name = unique_name("handoff-tx");
  const auto a = owner('a'), w = owner('w');
  const auto ga = table.acquire(b, request(name, a));
  ASSERT_TRUE(ga.granted && ga.state);
  const detail::line_grant wants{8'000, "holder-w", 0};
  const auto tw = line.join(b, name, w, 10'000, &wants);
  struct rolled_back {};
  detail::handed_grant g;
  try {
    b.in_transaction([&] {
      EXPECT_EQ(table.release(b, name, a, ga.state->fence, true, false, true, &g), release_outcome::handed);
      throw rolled_back{};
    });
  } catch (const rolled_back&) {
  }
  EXPECT_TRUE(g.owner.empty()) << "an uncommitted hand-off was passed on";
  EXPECT_EQ(g.fence, 0);
  EXPECT_EQ(query_int(db, "SELECT fence FROM dblock_locks WHERE name = $1", {name}), ga.state->fence);
  EXPECT_EQ(in_line(db, name), 1);
  // Committed on its own, the same release says it.
  ASSERT_EQ(table.release(b, name, a, ga.state->fence, true, false, true, &g), release_outcome::handed);
  EXPECT_EQ(g.owner, w);
  EXPECT_EQ(g.ticket, tw);
  EXPECT_EQ(g.fence, query_int(db, "SELECT fence FROM dblock_locks WHERE name = $1", {name}));
}

// The same when the application opened the transaction on the connection itself, without the
// library knowing (an attached connection): the server says the statement did not commit on
// its own. MySQL 8.0 tells only that autocommit is off (it has no @@in_transaction), so there
// the application turns autocommit off. PostgreSQL cannot tell cheaply (the application passes
// its open transaction with within()); SQLite refuses the release's own BEGIN instead.
TEST_P(HandOffConformance, AReleaseInsideATransactionTheLibraryDidNotOpenDoesNotPassItsGrantOn) {
  if (kind() != dialect::mysql && kind() != dialect::mysql8)
    GTEST_SKIP() << "MariaDB and MySQL 8.0 say whether a statement committed on its own";
  auto db = open();
  auto& b = *detail::backend_of(db);
  const auto& table = detail::lease_table_for(kind());
  const auto& line = detail::wait_line_for(kind());
  const auto name = unique_name("handoff-app-tx");
  const auto a = owner('a'), w = owner('w');
  const auto ga = raw_hold(b, name, a);
  const detail::line_grant wants{8'000, "holder-w", 0};
  (void)line.join(b, name, w, 10'000, &wants);
  const bool mysql8 = kind() == dialect::mysql8;
  raw_exec(db, mysql8 ? "SET autocommit = 0" : "BEGIN");
  detail::handed_grant g;
  EXPECT_EQ(table.release(b, name, a, ga.fence, true, false, true, &g), release_outcome::handed);
  raw_exec(db, "ROLLBACK");
  if (mysql8) raw_exec(db, "SET autocommit = 1");
  EXPECT_TRUE(g.owner.empty()) << "a hand-off in the application's open transaction was passed on";
  EXPECT_FALSE(g.unlock) << "a hand-off in the application's open transaction was made under the server lock";
  EXPECT_EQ(query_int(db, "SELECT IS_USED_LOCK(CONCAT('dblock:h:', SHA1($1))) IS NULL", {name}), 1);
  EXPECT_EQ(query_int(db, "SELECT fence FROM dblock_locks WHERE name = $1", {name}), ga.fence);
  EXPECT_EQ(in_line(db, name), 1);
}

// MariaDB and MySQL 8.0: a release made under its server lock records the head's ticket
// (locked_ticket), and the head that reads it there waits for that lock instead of confirming
// the grant with a write: no confirming write, and the server lock is free again afterwards.
// While the releaser still holds the lock the head's wait runs out (20 ms) and it confirms; a
// release inside a transaction the library opened, and the previous schema step's function
// (which a library not yet upgraded calls), record nothing, and their heads confirm too; a
// ticket recorded for an older grant never stands for a later one.
TEST_P(HandOffConformance, AHeadWaitsForTheReleasersServerLockInsteadOfConfirmingTheGrant) {
  if (kind() != dialect::mysql && kind() != dialect::mysql8)
    GTEST_SKIP() << "the server-lock hand-off is MariaDB's and MySQL 8.0's (their heads confirm grants)";
  auto db_r = open();
  auto db_h = open();
  auto& br = *detail::backend_of(db_r);
  auto& bh = *detail::backend_of(db_h);
  const auto& table = detail::lease_table_for(kind());
  const auto& line = detail::wait_line_for(kind());
  const auto name = unique_name("handoff-locked");
  const auto a = owner('a'), w = owner('w'), x = owner('x'), y = owner('y'), z = owner('z');
  const detail::line_grant wants{8'000, "holder", 0};
  const auto confirms = [] { return metrics()[counter::lock_handoff_confirms]; };
  const auto server_lock_free = [&] {
    return query_int(db_h, "SELECT IS_USED_LOCK(CONCAT('dblock:h:', SHA1($1))) IS NULL", {name}) == 1;
  };
  const auto locked_ticket = [&] {
    return query_int(db_h, "SELECT COALESCE(locked_ticket, 0) FROM dblock_locks WHERE name = $1", {name});
  };
  const auto fence_now = [&] { return query_int(db_h, "SELECT fence FROM dblock_locks WHERE name = $1", {name}); };

  // Released with nobody to pass the grant to in process: the release frees its server lock
  // itself, and the head holds after its wait, without a write.
  const auto ga = raw_hold(br, name, a);
  const auto tw = line.join(bh, name, w, 10'000, &wants);
  const auto tx = line.join(bh, name, x, 10'000, &wants);
  const auto ty = line.join(bh, name, y, 10'000, &wants);
  const auto tz = line.join(bh, name, z, 10'000, &wants);
  ASSERT_EQ(table.release(br, name, a, ga.fence, true, false, true), release_outcome::handed);
  EXPECT_EQ(locked_ticket(), tw) << "the hand-off was not made under the server lock";
  EXPECT_TRUE(server_lock_free()) << "the release kept its server lock";
  auto before = confirms();
  const auto gw = table.acquire(bh, request(name, w, tw));
  ASSERT_TRUE(gw.granted && gw.state);
  EXPECT_EQ(gw.state->fence, fence_now());
  EXPECT_EQ(confirms(), before) << "the head confirmed a grant handed under the server lock";
  EXPECT_TRUE(server_lock_free()) << "the head kept the server lock";

  // The releaser has not freed its server lock yet (its process has a grant to pass on): the
  // head's wait runs out and it confirms, still granted.
  detail::handed_grant g;
  ASSERT_EQ(table.release(br, name, w, gw.state->fence, true, false, true, &g), release_outcome::handed);
  EXPECT_TRUE(g.unlock);
  EXPECT_EQ(g.owner, x);
  EXPECT_EQ(locked_ticket(), tx);
  EXPECT_FALSE(server_lock_free());
  before = confirms();
  const auto gx = table.acquire(bh, request(name, x, tx));
  ASSERT_TRUE(gx.granted && gx.state);
  EXPECT_EQ(confirms(), before + 1) << "the head held while the releaser still had its server lock";
  table.end_hand_off(br, name);
  EXPECT_TRUE(server_lock_free()) << "end_hand_off did not free the server lock";

  // The previous step's function records nothing; the ticket left from x's grant does not
  // stand for y's.
  raw_query(db_r, "SELECT dblock_lock_release_to_line_grant($1, $2, CAST($3 AS SIGNED))", {name, x, gx.state->fence});
  EXPECT_EQ(locked_ticket(), tx) << "the previous function wrote locked_ticket";
  before = confirms();
  const auto gy = table.acquire(bh, request(name, y, ty));
  ASSERT_TRUE(gy.granted && gy.state);
  EXPECT_EQ(confirms(), before + 1) << "a stale locked_ticket stood for a later grant";

  // Inside a transaction the library opened, no server lock: nothing recorded.
  br.in_transaction([&] {
    EXPECT_EQ(table.release(br, name, y, gy.state->fence, true, false, true), release_outcome::handed);
  });
  EXPECT_EQ(locked_ticket(), 0) << "a release inside a transaction recorded its head";
  EXPECT_TRUE(server_lock_free());
  before = confirms();
  const auto gz = table.acquire(bh, request(name, z, tz));
  ASSERT_TRUE(gz.granted && gz.state);
  EXPECT_EQ(confirms(), before + 1);
  // Nobody left: the release deletes the row and keeps no server lock.
  EXPECT_EQ(table.release(br, name, z, gz.state->fence, true, false, true), release_outcome::deleted);
  EXPECT_TRUE(server_lock_free());
}

// A waiter in the releasing process holds the lock from the release's own answer: woken by the
// release, it takes the grant (owner, ticket, fence) without a statement, on every database.
// Its session does not listen and polls every 8 s, so neither a notice nor a look can be what
// granted it within 3 s; the counter of hand-offs taken without a read rises by one.
TEST_P(HandOffConformance, AWaiterInTheReleasingProcessHoldsFromTheReleaseWithoutReadingIt) {
  auto db_r = open();
  auto db_a = open();
  auto db_b = open();
  const auto& table = detail::lease_table_for(kind());
  auto& rb = *detail::backend_of(db_r);
  const auto name = unique_name("local-handoff");
  const auto r = owner('r');
  const auto gr = raw_hold(rb, name, r);

  auto o = quick(30'000ms);
  o.listen = false;
  o.detect_crashes = false;
  session a(db_a, o);
  o.min_backoff = o.max_backoff = 8000ms;
  session sb(db_b, o);
  // a waits in line and is handed the lock by the raw holder's release (a reads that grant):
  // its lease was granted through the line, so its own release hands the name on.
  std::optional<lease> la, lb;
  auto ta = acquire_on_thread(a, name, la);
  ASSERT_TRUE(wait_in_line(db_r, name, 1));
  ASSERT_EQ(table.release(rb, name, r, gr.fence, true, false, true), release_outcome::handed);
  ta.join();
  ASSERT_TRUE(la && la->is_held());

  const auto notices_before = metrics()[counter::lock_handoff_notices];
  auto tb = acquire_on_thread(sb, name, lb);
  ASSERT_TRUE(wait_in_line(db_r, name, 1));
  ASSERT_TRUE(goes_quiet(db_b)) << "b should sleep 4-8 s after its looks";
  const auto released = std::chrono::steady_clock::now();
  const auto a_fence = la->fence();
  la->release();
  tb.join();
  const auto took = std::chrono::steady_clock::now() - released;

  const auto row_fence = query_int(db_r, "SELECT fence FROM dblock_locks WHERE name = $1", {name});
  ASSERT_TRUE(lb && lb->is_held());
  EXPECT_EQ(lb->fence(), row_fence) << "the lease holds the fence the release granted";
  EXPECT_GT(row_fence, a_fence);
  EXPECT_EQ(metrics()[counter::lock_handoff_notices], notices_before + 1) << "the grant was read, not taken from the release";
  EXPECT_LT(took, 3s) << "the waiter was not woken by the release";
  EXPECT_EQ(in_line(db_r, name), 0);
  EXPECT_EQ(query_int(db_r, "SELECT holds FROM dblock_locks WHERE name = $1", {name}), 1);
  lb->release();
  EXPECT_EQ(rows_of(db_r, name), 0);
}

// While a release of the name that may hand it on is on its way in this process, a waiter
// here first in line sends nothing (it would find a grant its release has not finished with):
// it waits for the release's answer, then holds from it. The release is staged by hand: the
// board marks it in flight, a raw release hands the row to the waiter's ticket, and the
// board's notice passes the grant on.
TEST_P(HandOffConformance, AWaiterWaitsForAReleaseOnItsWayInItsProcessInsteadOfTrying) {
  auto db_r = open();
  auto db_w = open();
  const auto& table = detail::lease_table_for(kind());
  auto& rb = *detail::backend_of(db_r);
  const auto name = unique_name("in-flight");
  const auto r = owner('r');
  const auto gr = raw_hold(rb, name, r);
  auto o = quick(30'000ms);
  o.listen = false;
  o.detect_crashes = false;
  o.min_backoff = 2ms;
  o.max_backoff = 20ms;
  session w(db_w, o);
  std::optional<lease> lw;
  auto tw = acquire_on_thread(w, name, lw);
  ASSERT_TRUE(wait_in_line(db_r, name, 1));
  const auto polling = round_trips_of(db_w, [] { std::this_thread::sleep_for(300ms); });
  EXPECT_GE(polling, 5u) << "the first in line should look every few ms";

  auto& board = detail::release_board::get();
  board.releasing(name);
  // Held back (a release marked in flight holds waiters back for up to a second): after a look
  // that may have been on its way, nothing. The waiter alone looks every 10-20 ms.
  EXPECT_TRUE(goes_quiet(db_w)) << "the waiter tried while a release was on its way";

  detail::handed_grant g;
  ASSERT_EQ(table.release(rb, name, r, gr.fence, true, false, true, &g), release_outcome::handed);
  ASSERT_FALSE(g.owner.empty());
  const auto notices_before = metrics()[counter::lock_handoff_notices];
  const detail::release_notice n{name, g.owner, g.ticket, g.fence};
  board.finish(name, &n);
  tw.join();
  ASSERT_TRUE(lw && lw->is_held());
  EXPECT_EQ(lw->fence(), g.fence);
  EXPECT_EQ(metrics()[counter::lock_handoff_notices], notices_before + 1) << "the grant was read, not taken from the answer";
  lw->release();
  EXPECT_EQ(rows_of(db_r, name), 0);
}

// On SQLite a release wakes a waiter in another process through the wake file beside the
// database, and a hand-off's record there lets the head hold the lock without reading it: the
// waiting process polls every 8 s, so a grant within 3 s came from the wake-up, and its
// counter of grants taken without a read rises by one. The releasing lease was itself handed
// the lock through the line (by a raw release whose record this test posts), so its release
// hands the name on and posts as every release does.
TEST_P(HandOffConformance, OnSQLiteAHeadInAnotherProcessHoldsFromTheWakeFileRecord) {
  if (kind() != dialect::sqlite) GTEST_SKIP() << "the wake file is SQLite's (PostgreSQL notifies)";
  const auto name = unique_name("wake-handoff");
  int go = -1, rep = -1;
  const pid_t child = fork_waiter(name, &go, &rep);
  ASSERT_GT(child, 0);
  auto db = open();
  auto adb = open();
  auto& b = *detail::backend_of(db);
  const auto& table = detail::lease_table_for(kind());
  const auto r = owner('r');
  const auto held = raw_hold(b, name, r);
  auto wake = detail::wake_file::for_database(b.raw().database_file());
  ASSERT_TRUE(wake) << "no wake file beside the database";

  auto o = quick(30'000ms);
  o.detect_crashes = false;
  o.min_backoff = o.max_backoff = 8000ms;
  session a(adb, o);
  std::optional<lease> la;
  const auto before = metrics()[counter::lock_handoff_notices];
  {
    auto ta = acquire_on_thread(a, name, la);
    ASSERT_TRUE(wait_in_line(db, name, 1));
    std::this_thread::sleep_for(300ms);  // a's head try is refused; it sleeps
    detail::handed_grant g;
    ASSERT_EQ(table.release(b, name, r, held.fence, true, false, true, &g), release_outcome::handed);
    wake->post(name, g.owner, g.ticket, g.fence);  // what a session's release does after its commit
  }
  ASSERT_TRUE(la && la->is_held());
  EXPECT_GT(la->fence(), held.fence);
  EXPECT_EQ(metrics()[counter::lock_handoff_notices], before + 1) << "a read its grant instead of the record";

  const char start = 1;
  ASSERT_EQ(::write(go, &start, 1), 1);
  ::close(go);
  ASSERT_TRUE(wait_in_line(db, name, 1));
  std::this_thread::sleep_for(300ms);  // the child's head try is refused; it sleeps
  const auto a_fence = la->fence();
  const auto released = std::chrono::steady_clock::now();
  la->release();  // hands the name to the child's ticket and posts the record
  const auto rep_child = report_of(child, rep);
  ASSERT_TRUE(rep_child) << "the waiting process failed or was not granted";
  EXPECT_GT(rep_child->fence, a_fence);
  EXPECT_EQ(rep_child->taken_without_read, 1) << "the grant was read, not taken from the wake file's record";
  EXPECT_LT(since_ns(released, rep_child->granted_ns), 3s) << "the waiter was not woken by the release";
  EXPECT_EQ(in_line(db, name), 0);
  EXPECT_EQ(rows_of(db, name), 0) << "the child released its lease";
}

// SQLite's wait line is clustered by (name, ticket) with no other index, so a ticket's insert
// or delete writes one page of it; ticket numbers come from a counter row and are never
// reused, even after the highest ticket leaves; a hand-off deletes its ticket in the same
// statement (the trigger on dblock_locks.ticket).
TEST_P(HandOffConformance, OnSQLiteTheLineIsClusteredAndATicketNumberIsNeverReused) {
  if (kind() != dialect::sqlite) GTEST_SKIP() << "the clustered line and its counter row are SQLite's";
  auto db = open();
  auto& b = *detail::backend_of(db);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'dblock_lock_waiters'"),
            0);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'dblock_lock_waiters' "
                          "AND sql LIKE '%WITHOUT ROWID%'"),
            1);
  const auto name = unique_name("line-numbers");
  const auto& line = detail::wait_line_for(kind());
  const auto t1 = line.join(b, name, owner('a'), 10'000, nullptr);
  const auto t2 = line.join(b, name, owner('b'), 10'000, nullptr);
  ASSERT_GT(t2, t1);
  ASSERT_TRUE(line.leave(b, t2, owner('b')));  // the highest number leaves
  const auto t3 = line.join(b, name, owner('c'), 10'000, nullptr);
  EXPECT_GT(t3, t2) << "a ticket number was reused";
  const auto t4 = line.join(b, unique_name("line-numbers-other"), owner('d'), 10'000, nullptr);
  EXPECT_GT(t4, t3) << "one counter numbers every name's tickets";
  EXPECT_EQ(query_int(db, "SELECT last FROM dblock_line_tickets"), t4);
  for (auto [t, o] : {std::pair{t1, 'a'}, std::pair{t3, 'c'}}) EXPECT_TRUE(line.leave(b, t, owner(o)));
  EXPECT_EQ(in_line(db, name), 0);
}

// Migration 0019 rebuilds an existing line on SQLite: its tickets are kept, and the counter
// starts above every number handed out before, the AUTOINCREMENT counter's and a handed
// ticket's still recorded in a lock row.
TEST_P(HandOffConformance, OnSQLiteTheLineMigrationKeepsTicketsAndNumbersAboveEveryOldOne) {
  if (kind() != dialect::sqlite) GTEST_SKIP() << "migration 0019 changes only SQLite's line";
  auto db = dblock::open(fresh_database());
  auto apply = [&](const std::string& path) {
    for (std::size_t i = 0; i < detail::embedded_file_count; ++i)
      if (path == detail::embedded_files[i].path)
        for (const auto& st : detail::split_statements(detail::embedded_files[i].text)) (void)raw_query(db, st);
  };
  const auto version = [](const std::string& path) { return std::stoi(path.substr(path.rfind('/') + 1, 4)); };
  std::string step_19;
  for (const auto& f : dblock_migration_files(kind())) {
    if (version(f) < 19) apply(f);
    if (version(f) == 19) step_19 = f;
  }
  ASSERT_FALSE(step_19.empty());
  (void)raw_query(db, "INSERT INTO dblock_lock_waiters (name, owner, expires_at, grant_ttl_ms) VALUES "
                      "('kept', 'owner-a', 9999999999999, 5000), ('kept', 'owner-b', 9999999999999, 0), "
                      "('kept', 'owner-c', 9999999999999, 0), ('gone', 'owner-d', 9999999999999, 0)");
  (void)raw_query(db, "DELETE FROM dblock_lock_waiters WHERE ticket >= 3");  // AUTOINCREMENT is at 4
  (void)raw_query(db, "INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, ticket) "
                      "VALUES ('other', 'owner-e', 1, 1, 0, 9999999999999, 3)");
  apply(step_19);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_lock_waiters WHERE name = 'kept'"), 2);
  EXPECT_EQ(query_int(db, "SELECT grant_ttl_ms FROM dblock_lock_waiters WHERE ticket = 1 AND owner = 'owner-a'"), 5000);
  EXPECT_EQ(query_int(db, "SELECT last FROM dblock_line_tickets"), 4);
  (void)raw_query(db, "UPDATE dblock_locks SET ticket = 9 WHERE name = 'other'");
  const auto& line = detail::wait_line_for(kind());
  EXPECT_EQ(line.join(*detail::backend_of(db), "kept", owner('f'), 10'000, nullptr), 5);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_lock_waiters"), 3) << "the trigger deleted a ticket it had no row for";
}

// A ticket's insert commits without an fsync on SQLite, and the connection is set back to
// durable commits right after it: PRAGMA synchronous reads FULL (2) again.
TEST_P(HandOffConformance, OnSQLiteATicketJoinLeavesTheConnectionDurable) {
  if (kind() != dialect::sqlite) GTEST_SKIP() << "PRAGMA synchronous is SQLite's";
  auto db = open();
  auto& b = *detail::backend_of(db);
  const auto name = unique_name("join-durable");
  const auto& line = detail::wait_line_for(kind());
  const auto t = line.join(b, name, owner('w'), 10'000, nullptr);
  EXPECT_GT(t, 0);
  EXPECT_EQ(in_line(db, name), 1);
  EXPECT_EQ(query_int(db, "PRAGMA synchronous", {}), 2);
  EXPECT_TRUE(line.leave(b, t, owner('w')));
}

// A plain release by a session (its lease was not granted through the line: nothing handed)
// wakes the waiting process too, which then takes the free name with its own try.
TEST_P(HandOffConformance, OnSQLiteASessionsReleaseWakesAWaiterInAnotherProcess) {
  if (kind() != dialect::sqlite) GTEST_SKIP() << "the wake file is SQLite's (PostgreSQL notifies)";
  const auto name = unique_name("wake-release");
  int go = -1, rep = -1;
  const pid_t child = fork_waiter(name, &go, &rep);
  ASSERT_GT(child, 0);
  auto db = open();
  auto hdb = open();
  auto o = quick(10'000ms);
  o.detect_crashes = false;
  session holder(hdb, o);
  auto l = holder.try_acquire(name);
  ASSERT_TRUE(l);
  const auto held_fence = l->fence();
  const char start = 1;
  ASSERT_EQ(::write(go, &start, 1), 1);
  ::close(go);
  ASSERT_TRUE(wait_in_line(db, name, 1));
  std::this_thread::sleep_for(300ms);
  const auto released = std::chrono::steady_clock::now();
  l->release();
  const auto r = report_of(child, rep);
  ASSERT_TRUE(r) << "the waiting process failed or was not granted";
  EXPECT_GT(r->fence, held_fence);
  EXPECT_EQ(r->taken_without_read, 0) << "nothing was handed: the waiter's own try took the name";
  EXPECT_LT(since_ns(released, r->granted_ns), 3s) << "the waiter was not woken by the release";
  EXPECT_EQ(rows_of(db, name), 0);
}

DBLOCK_CONFORMANCE_SUITE(HandOffConformance);

}  // namespace
}  // namespace dblock::test
