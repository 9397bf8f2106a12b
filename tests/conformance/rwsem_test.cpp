// tests/conformance/rwsem_test.cpp — read-write lease locks and counting semaphores
// (dblock/lock.hpp: session::try_acquire(name, mode), session::acquire_permits) on all
// combinations: readers share, a writer excludes (violations counted over threads and two
// processes), a waiting writer keeps new readers out, re-entry and the upgrade rules, fence
// order, N permits never exceeded, expiry and the reaper free permits, a mismatched N and a
// name used as both kinds are refused, renewal keeps the holds.
#include <atomic>
#include <functional>
#include <limits>
#include <stdexcept>
#include <future>
#include <thread>

#include "conformance/fixture.hpp"
#include "dblock/lock.hpp"
#include "dblock/reaper.hpp"

namespace dblock::test {
namespace {

class RwSemConformance : public conformance {
 protected:
  // Moves the name's holds 10 minutes into the past by the server's clock (a holder that stopped).
  void expire_holds(database& db, const std::string& name) {
    raw_query(db,
              kind() == dialect::sqlite ? "UPDATE dblock_lock_holders SET expires_at = expires_at - 600000 WHERE name = $1"
              : mysql_family() ? "UPDATE dblock_lock_holders SET expires_at = expires_at - INTERVAL 10 MINUTE WHERE name = $1"
                               : "UPDATE dblock_lock_holders SET expires_at = expires_at - interval '10 minutes' WHERE name = $1",
              {name});
  }
  // A counter table of one row: readers inside, writers inside, permits inside, largest fence.
  std::string make_counter(database& db) {
    auto t = unique_name("ctr");
    raw_exec(db, "CREATE TABLE " + t +
                     " (id INTEGER PRIMARY KEY, readers INTEGER NOT NULL, writers INTEGER NOT NULL,"
                     " inside INTEGER NOT NULL, maxf BIGINT NOT NULL)");
    raw_query(db, "INSERT INTO " + t + " (id, readers, writers, inside, maxf) VALUES (1, 0, 0, 0, 0)");
    return t;
  }
};

TEST_P(RwSemConformance, ReadersShareAndAWriterExcludes) {
  auto db = open();
  session a(db, quick_no_delay()), b(db, quick_no_delay()), c(db, quick_no_delay());
  const auto name = unique_name("rw");
  auto r1 = a.try_acquire(name, lock_mode::read);
  auto r2 = b.try_acquire(name, lock_mode::read);
  ASSERT_TRUE(r1 && r2) << "two readers at once";
  EXPECT_EQ(r1->mode(), lock_mode::read);
  EXPECT_NE(r1->fence(), r2->fence()) << "each grant has its own fence";
  EXPECT_FALSE(c.try_acquire(name, lock_mode::write)) << "a writer beside readers";
  EXPECT_EQ(holder_rows(db, name), 2);
  r1->release();
  EXPECT_FALSE(c.try_acquire(name, lock_mode::write)) << "a writer beside one reader";
  r2->release();
  EXPECT_EQ(holder_rows(db, name), 0);
  auto w = c.try_acquire(name, lock_mode::write);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->mode(), lock_mode::write);
  EXPECT_GT(w->fence(), r2->fence());
  EXPECT_FALSE(a.try_acquire(name, lock_mode::read)) << "a reader beside the writer";
  EXPECT_FALSE(b.try_acquire(name, lock_mode::write)) << "a second writer";
  auto infos = list_holders(db);
  int seen = 0;
  for (auto& h : infos)
    if (h.name == name) {
      ++seen;
      EXPECT_EQ(h.mode, lock_mode::write);
      EXPECT_EQ(h.fence, w->fence());
    }
  EXPECT_EQ(seen, 1);
  w->release();
  EXPECT_TRUE(a.try_acquire(name, lock_mode::read));
}

TEST_P(RwSemConformance, AWaitingWriterKeepsNewReadersOutAndGetsALargerFence) {
  auto db = open();
  session reader(db, quick_no_delay());
  const auto name = unique_name("rw");
  auto r = reader.try_acquire(name, lock_mode::read);
  ASSERT_TRUE(r);
  auto wdb = open();
  auto writer = std::async(std::launch::async, [&] {
    session w(wdb, quick_no_delay());
    auto l = w.acquire(name, lock_mode::write, 60s);
    return l.fence();
  });
  // Wait (bounded) for the writer's ticket: it is then in line.
  auto ldb = open();
  for (int i = 0; i < 3000 && tickets(ldb, name) == 0; ++i) std::this_thread::sleep_for(5ms);
  ASSERT_EQ(tickets(ldb, name), 1) << "the writer waits in line";
  session late(ldb, quick_no_delay());
  EXPECT_FALSE(late.try_acquire(name, lock_mode::read)) << "a new reader passed a waiting writer";
  const auto reader_fence = r->fence();
  r->release();
  const auto wf = writer.get();
  EXPECT_GT(wf, reader_fence);
  EXPECT_EQ(tickets(ldb, name), 0) << "the grant consumed the ticket";
}

TEST_P(RwSemConformance, ReentryAndUpgradeRules) {
  auto db = open();
  session a(db, quick_no_delay()), b(db, quick_no_delay());
  const auto name = unique_name("rw");
  auto r1 = a.try_acquire(name, lock_mode::read);
  auto r2 = a.try_acquire(name, lock_mode::read);
  ASSERT_TRUE(r1 && r2);
  EXPECT_EQ(r1->fence(), r2->fence()) << "a re-entry keeps the fence";
  EXPECT_EQ(query_int(db, "SELECT holds FROM dblock_lock_holders WHERE name = $1", {name}), 2);
  // The only reader upgrades: a new, larger fence; others are kept out.
  auto w = a.try_acquire(name, lock_mode::write);
  ASSERT_TRUE(w);
  EXPECT_GT(w->fence(), r1->fence());
  EXPECT_FALSE(b.try_acquire(name, lock_mode::read));
  // A writer may take read holds.
  auto r3 = a.try_acquire(name, lock_mode::read);
  ASSERT_TRUE(r3);
  EXPECT_EQ(r3->fence(), w->fence());
  w->release();  // back to a reader: others may read again
  auto rb = b.try_acquire(name, lock_mode::read);
  ASSERT_TRUE(rb);
  // Two readers: an upgrade is refused with one error naming the lock and the reader count.
  try {
    (void)a.try_acquire(name, lock_mode::write);
    ADD_FAILURE() << "an upgrade beside another reader";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 readers"), std::string::npos) << e.what();
  }
  r1->release();
  r2->release();
  r3->release();
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_lock_holders WHERE name = $1 AND owner = $2", {name, a.owner()}), 0);
  rb->release();
  EXPECT_EQ(holder_rows(db, name), 0);
}

TEST_P(RwSemConformance, ReadersConcurrentWritersExclusiveFencesOrderedAcrossThreadsAndProcesses) {
  const int threads = 6, rounds = kind() == dialect::sqlite ? 8 : 15;
  const auto name = unique_name("rw");
  std::string table;
  {
    auto db = open();
    table = make_counter(db);
  }
  auto work = [&]() -> int {
    std::atomic<int> violations{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        try {
          auto db = open();
          session s(db, quick_no_delay(10000ms));
          for (int i = 0; i < rounds; ++i) {
            const bool write = (i + t) % 3 == 0;
            auto l = s.acquire(name, write ? lock_mode::write : lock_mode::read, 120s);
            if (write) {
              raw_query(db, "UPDATE " + table + " SET writers = writers + 1 WHERE id = 1");
              auto row = raw_query(db, "SELECT readers, writers, maxf FROM " + table + " WHERE id = 1");
              const auto readers = std::stoll(*row.rows[0][0]), writers = std::stoll(*row.rows[0][1]);
              const auto maxf = std::stoll(*row.rows[0][2]);
              if (readers != 0 || writers != 1) ++violations;
              if (l.fence() <= maxf) ++violations;  // a writer's fence beats every earlier grant's
              raw_query(db, "UPDATE " + table + " SET maxf = $1 WHERE id = 1", {l.fence()});
              raw_query(db, "UPDATE " + table + " SET writers = writers - 1 WHERE id = 1");
            } else {
              raw_query(db, "UPDATE " + table + " SET readers = readers + 1 WHERE id = 1");
              if (query_int(db, "SELECT writers FROM " + table + " WHERE id = 1") != 0) ++violations;
              raw_query(db, "UPDATE " + table + " SET maxf = $1 WHERE id = 1 AND maxf < $1", {l.fence()});
              raw_query(db, "UPDATE " + table + " SET readers = readers - 1 WHERE id = 1");
            }
            l.release();
          }
        } catch (const std::exception& e) {
          ++violations;
          std::fprintf(stderr, "worker: %s\n", e.what());
        }
      });
    for (auto& t : ts) t.join();
    return violations.load();
  };
  expect_clean_in_two_processes(work, "reader/writer violations");
  auto db = open();
  EXPECT_EQ(query_int(db, "SELECT readers + writers FROM " + table + " WHERE id = 1"), 0);
  EXPECT_EQ(holder_rows(db, name), 0);
  raw_exec(db, "DROP TABLE " + table);
}

TEST_P(RwSemConformance, PermitsAreNeverExceededAcrossThreadsAndProcesses) {
  const int threads = 6, rounds = kind() == dialect::sqlite ? 8 : 15, permits = 3;
  const auto name = unique_name("sem");
  std::string table;
  {
    auto db = open();
    table = make_counter(db);
  }
  auto work = [&]() -> int {
    std::atomic<int> violations{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&] {
        try {
          auto db = open();
          session s(db, quick_no_delay(10000ms));
          for (int i = 0; i < rounds; ++i) {
            auto p = s.acquire_permits(name, permits, 1, 120s);
            if (p.size() != 1) ++violations;
            raw_query(db, "UPDATE " + table + " SET inside = inside + 1 WHERE id = 1");
            if (query_int(db, "SELECT inside FROM " + table + " WHERE id = 1") > permits) ++violations;
            raw_query(db, "UPDATE " + table + " SET inside = inside - 1 WHERE id = 1");
            p.release();
          }
        } catch (const std::exception& e) {
          ++violations;
          std::fprintf(stderr, "worker: %s\n", e.what());
        }
      });
    for (auto& t : ts) t.join();
    return violations.load();
  };
  expect_clean_in_two_processes(work, "permit over-subscriptions");
  auto db = open();
  EXPECT_EQ(holder_rows(db, name), 0);
  raw_exec(db, "DROP TABLE " + table);
}

TEST_P(RwSemConformance, PermitsHaveTheirOwnFencesAndTheCountIsChecked) {
  auto db = open();
  session a(db, quick_no_delay()), b(db, quick_no_delay());
  const auto name = unique_name("sem");
  auto two = a.try_acquire_permits(name, 3, 2);
  ASSERT_TRUE(two);
  ASSERT_EQ(two->size(), 2u);
  const auto f = two->fences();
  EXPECT_NE(f[0], f[1]);
  EXPECT_EQ(two->permits()[0].mode(), lock_mode::permit);
  EXPECT_FALSE(b.try_acquire_permits(name, 3, 2)) << "4 of 3 permits";
  auto one = b.try_acquire_permits(name, 3, 1);
  ASSERT_TRUE(one);
  EXPECT_GT(one->fences()[0], std::max(f[0], f[1]));
  EXPECT_FALSE(b.try_acquire_permits(name, 3, 1)) << "permit 4 of 3";
  try {
    (void)b.try_acquire_permits(name, 5, 1);
    ADD_FAILURE() << "a different permit count was accepted";
  } catch (const invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("3 permits"), std::string::npos) << m;
    EXPECT_NE(m.find("not 5"), std::string::npos) << m;
  }
  EXPECT_THROW((void)b.try_acquire(name, lock_mode::read), invalid_argument) << "a semaphore used as a read-write lock";
  EXPECT_THROW((void)b.try_acquire_permits(name, 3, 4), invalid_argument);
  EXPECT_THROW((void)b.try_acquire_permits(name, 0, 1), invalid_argument);
  EXPECT_EQ(holder_rows(db, name), 3);
  two->release();
  one->release();
  EXPECT_EQ(holder_rows(db, name), 0);
  // All released: the next acquirer chooses the count again.
  auto five = b.try_acquire_permits(name, 5, 5);
  ASSERT_TRUE(five);
  EXPECT_EQ(five->size(), 5u);
}

TEST_P(RwSemConformance, ExpiryAndTheReaperFreePermitsAndTheHolderIsToldItLostThem) {
  auto db = open();
  std::atomic<int> lost{0};
  auto o = quick_no_delay(1500ms);
  o.on_lost = [&](const lost_lease&) { ++lost; };
  session a(db, o), b(db, quick_no_delay());
  const auto name = unique_name("sem");
  auto held = a.try_acquire_permits(name, 2, 2);
  ASSERT_TRUE(held);
  EXPECT_FALSE(b.try_acquire_permits(name, 2, 1));
  expire_holds(db, name);  // a holder that stopped renewing, past its lease and lock delay
  auto taken = b.try_acquire_permits(name, 2, 2);
  ASSERT_TRUE(taken) << "expired permits were not taken over";
  // The old holder's renewal finds its rows gone: both permits are reported lost.
  for (int i = 0; i < 400 && lost.load() < 2; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(lost.load(), 2);
  EXPECT_FALSE(held->is_held());
  EXPECT_THROW(held->release(), lock_lost);
  taken->release();
  // The reaper deletes expired holds.
  auto r = b.try_acquire(unique_name("rw"), lock_mode::read);
  ASSERT_TRUE(r);
  const auto rw = r->name();
  // Expired one second ago, not ten minutes: the tests share the tables, and another test's
  // reaper (5 s of grace by default) would otherwise reap this row before this one does.
  raw_query(db,
            kind() == dialect::sqlite
                ? "UPDATE dblock_lock_holders SET expires_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) - 1000 WHERE name = $1"
            : mysql_family() ? "UPDATE dblock_lock_holders SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE name = $1"
                             : "UPDATE dblock_lock_holders SET expires_at = now() - interval '1 second' WHERE name = $1",
            {rw});
  reaper_options ro;
  ro.grace = 0ms;
  reaper rp(open(), ro);
  auto rep = rp.run_once();
  EXPECT_GE(rep.holders, 1u);
  EXPECT_EQ(holder_rows(db, rw), 0);
}

TEST_P(RwSemConformance, TheRenewalKeepsReadWriteAndPermitHoldsForFiveTtls) {
  auto db = open();
  session a(db, quick_no_delay(400ms)), b(db, quick_no_delay());
  const auto n1 = unique_name("rw"), n2 = unique_name("sem"), n3 = unique_name("mx");
  auto w = a.try_acquire(n1, lock_mode::write);
  auto p = a.try_acquire_permits(n2, 1, 1);
  auto m = a.try_acquire(n3);
  ASSERT_TRUE(w && p && m);
  std::this_thread::sleep_for(2000ms);  // five TTLs: only renewals keep them
  EXPECT_TRUE(w->is_held());
  EXPECT_TRUE(p->is_held());
  EXPECT_TRUE(m->is_held());
  EXPECT_FALSE(b.try_acquire(n1, lock_mode::read));
  EXPECT_FALSE(b.try_acquire_permits(n2, 1, 1));
  EXPECT_FALSE(b.try_acquire(n3));
  w->release();
  p->release();
  m->release();
}

TEST_P(RwSemConformance, VerifyInPassesWhileHeldAndFailsOnceTheHoldIsGone) {
  auto db = open();
  session a(db, quick_no_delay());
  const auto name = unique_name("rw");
  auto r = a.try_acquire(name, lock_mode::read);
  ASSERT_TRUE(r);
  auto tdb = open();
  EXPECT_NO_THROW(transact(tdb, [&](transaction_ref tx) { r->verify_in(tx); }));
  raw_query(db, "DELETE FROM dblock_lock_holders WHERE name = $1", {name});
  EXPECT_THROW(transact(tdb, [&](transaction_ref tx) { r->verify_in(tx); }), lock_lost);
}

// The cost in round trips, as docs/locks.md states it: a grant or a refusal is one statement
// (migration 0010's function) on PostgreSQL, MariaDB and MySQL 8.0; on SQLite, in the process,
// the gated transaction of steps (begin, gate, takeover, read, line, fence, insert, commit; a
// refusal stops after the read); a release is one statement everywhere.
TEST_P(RwSemConformance, RoundTripsOfAGrantARefusalAndARelease) {
  auto db = open();
  session a(db, quick_no_delay()), b(db, quick_no_delay());
  const auto name = unique_name("rw");
  {  // warm up: client libraries that prepare statements do so on first use (one round trip each)
    const auto warm = unique_name("warm");
    auto x = a.try_acquire(warm, lock_mode::write);
    ASSERT_TRUE(x);
    EXPECT_FALSE(b.try_acquire(warm, lock_mode::read));
    auto y = a.try_acquire(warm, lock_mode::read);
    ASSERT_TRUE(y);
    y->release();
    x->release();
    const auto sem = unique_name("warm");
    auto p = a.try_acquire_permits(sem, 2, 1);
    ASSERT_TRUE(p);
    p->release();
  }
  const bool one = kind() != dialect::sqlite;
  std::optional<lease> w;
  const auto grant = round_trips_of(db, [&] { w = a.try_acquire(name, lock_mode::write); });
  ASSERT_TRUE(w);
  EXPECT_EQ(grant, one ? 1u : 8u);
  std::optional<lease> r;
  const auto refusal = round_trips_of(db, [&] { r = b.try_acquire(name, lock_mode::read); });
  EXPECT_FALSE(r);
  // With crash detection (where it applies) a refusal by a marker-backed holder also reads the
  // holds in the way with their markers (holders_probe_marker.sql), for the early takeover;
  // without it, the function alone.
  const bool detects = b.owner().front() == 'm';
  EXPECT_EQ(refusal, one ? (detects ? 2u : 1u) : 5u);
  {
    auto no_detect = quick_no_delay();
    no_detect.detect_crashes = false;
    session c(db, no_detect);
    std::optional<lease> rc;
    EXPECT_EQ(round_trips_of(db, [&] { rc = c.try_acquire(name, lock_mode::read); }), one ? 1u : 5u)
        << "a refusal without crash detection";
    EXPECT_FALSE(rc);
  }
  std::optional<lease> again;
  EXPECT_EQ(round_trips_of(db, [&] { again = a.try_acquire(name, lock_mode::read); }), one ? 1u : 6u) << "re-entry";
  ASSERT_TRUE(again);
  EXPECT_EQ(round_trips_of(db, [&] { again->release(); }), 1u);
  EXPECT_EQ(round_trips_of(db, [&] { w->release(); }), 1u);
  const auto sem = unique_name("sem");
  std::optional<permit_set> three;
  const auto permits = round_trips_of(db, [&] { three = a.try_acquire_permits(sem, 5, 3); });
  ASSERT_TRUE(three);
  EXPECT_EQ(three->size(), 3u);
  EXPECT_EQ(permits, one ? 1u : 12u) << "three permits, three fences";
  three->release();
}

// The errors of a misused name, word for word, whichever way the grant is sent.
TEST_P(RwSemConformance, MisuseErrorsNameTheLockAndTheCounts) {
  auto db = open();
  session a(db, quick()), b(db, quick()), c(db, quick());
  const auto sem = unique_name("sem");
  auto p = a.try_acquire_permits(sem, 4, 1);
  ASSERT_TRUE(p);
  auto message = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const invalid_argument& e) {
      return e.what();
    }
    return "(no invalid_argument)";
  };
  EXPECT_EQ(message([&] { (void)b.try_acquire(sem, lock_mode::write); }),
            "lock '" + sem + "' is a semaphore of 4 permits, not a read-write lock");
  EXPECT_EQ(message([&] { (void)b.try_acquire_permits(sem, 6, 2); }),
            "semaphore '" + sem + "' has 4 permits (set by its first holder), not 6");
  const auto rw = unique_name("rw");
  auto r = a.try_acquire(rw, lock_mode::read);
  ASSERT_TRUE(r);
  EXPECT_EQ(message([&] { (void)b.try_acquire_permits(rw, 2, 1); }),
            "lock '" + rw + "' is a read-write lock, not a semaphore");
  auto rb = b.try_acquire(rw, lock_mode::read);
  auto rc = c.try_acquire(rw, lock_mode::read);
  ASSERT_TRUE(rb && rc);
  EXPECT_EQ(message([&] { (void)a.try_acquire(rw, lock_mode::write); }),
            "lock '" + rw + "' cannot be upgraded to write: 3 readers hold it (this session and 2 others)");
  rc->release();
  EXPECT_EQ(message([&] { (void)a.try_acquire(rw, lock_mode::write); }),
            "lock '" + rw + "' cannot be upgraded to write: 2 readers hold it (this session and 1 other)");
  EXPECT_EQ(holder_rows(db, rw), 2) << "a refused upgrade changes nothing";
  EXPECT_EQ(query_int(db, "SELECT write_holds FROM dblock_lock_holders WHERE name = $1 AND owner = $2", {rw, a.owner()}), 0);
}

// Permits go into the lowest free slots, a freed slot in the middle first.
TEST_P(RwSemConformance, PermitsFillTheLowestFreeSlots) {
  auto db = open();
  session a(db, quick()), b(db, quick());
  const auto name = unique_name("sem");
  auto slots_of = [&](const std::string& owner) {
    std::vector<std::int64_t> out;
    for (std::int64_t slot = 1; slot <= 6; ++slot)
      if (query_int(db, "SELECT COUNT(*) FROM dblock_lock_holders WHERE name = $1 AND owner = $2 AND slot = $3",
                    {name, owner, slot}) == 1)
        out.push_back(slot);
    return out;
  };
  std::vector<permit_set> singles;
  for (int i = 0; i < 3; ++i) {
    auto p = a.try_acquire_permits(name, 6, 1);
    ASSERT_TRUE(p);
    singles.push_back(std::move(*p));
  }
  EXPECT_EQ(slots_of(a.owner()), (std::vector<std::int64_t>{1, 2, 3}));
  const auto top = singles[2].fences()[0];
  singles[1].release();  // slot 2 free
  auto two = b.try_acquire_permits(name, 6, 2);
  ASSERT_TRUE(two);
  EXPECT_EQ(slots_of(b.owner()), (std::vector<std::int64_t>{2, 4}));
  const auto f = two->fences();
  ASSERT_EQ(f.size(), 2u);
  EXPECT_LT(f[0], f[1]) << "each permit its own fence, in slot order";
  EXPECT_GT(f[0], top);
  auto last = b.try_acquire_permits(name, 6, 2);
  ASSERT_TRUE(last);
  EXPECT_EQ(slots_of(b.owner()), (std::vector<std::int64_t>{2, 4, 5, 6}));
  EXPECT_FALSE(a.try_acquire_permits(name, 6, 1)) << "7 of 6 permits";
}

// A row of the session's that its table of holds no longer counts on (here: its fence is not
// the local hold's) is replaced by a fresh grant; the old hold is reported lost.
TEST_P(RwSemConformance, AStaleOwnRowIsReplacedByAFreshGrant) {
  auto db = open();
  std::atomic<int> lost{0};
  auto o = quick();
  o.on_lost = [&](const lost_lease&) { ++lost; };
  session a(db, o);
  const auto name = unique_name("rw");
  auto r = a.try_acquire(name, lock_mode::read);
  ASSERT_TRUE(r);
  const auto old = r->fence();
  raw_query(db, "UPDATE dblock_lock_holders SET fence = fence + 1000000 WHERE name = $1", {name});
  auto again = a.try_acquire(name, lock_mode::write);
  ASSERT_TRUE(again) << "the stale row is not a reader in the way";
  EXPECT_GT(again->fence(), old);
  EXPECT_EQ(holder_rows(db, name), 1);
  EXPECT_EQ(query_int(db, "SELECT holds FROM dblock_lock_holders WHERE name = $1", {name}), 1);
  EXPECT_EQ(query_int(db, "SELECT write_holds FROM dblock_lock_holders WHERE name = $1", {name}), 1);
  EXPECT_FALSE(r->is_held());
  EXPECT_EQ(lost.load(), 1);
  EXPECT_THROW(r->release(), lock_lost);
  again->release();
  EXPECT_EQ(holder_rows(db, name), 0);
}

// A refusal names the soonest-ending hold in the way, holder text (spaces and all) and fence.
TEST_P(RwSemConformance, ARefusalNamesTheHoldInTheWay) {
  auto db = open();
  auto o = quick();
  o.holder = "writer on host 7";
  session a(db, o), b(db, quick());
  const auto name = unique_name("rw");
  auto w = a.try_acquire(name, lock_mode::write);
  ASSERT_TRUE(w);
  try {
    (void)b.acquire(name, lock_mode::read, 50ms);
    ADD_FAILURE() << "a reader passed a writer";
  } catch (const timeout_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'writer on host 7' (fence " + std::to_string(w->fence()) + ")"), std::string::npos) << m;
  }
  const auto sem = unique_name("sem");
  auto p = a.try_acquire_permits(sem, 1, 1);
  ASSERT_TRUE(p);
  try {
    (void)b.acquire_permits(sem, 1, 1, 50ms);
    ADD_FAILURE() << "permit 2 of 1";
  } catch (const timeout_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'writer on host 7' (fence " + std::to_string(p->fences()[0]) + ")"), std::string::npos) << m;
  }
}

// Migration 0010's grant functions answer one row through every client library, in
// autocommit (how dblock sends them) and inside a transaction, whose rollback undoes them.
TEST_P(RwSemConformance, TheGrantFunctionsAnswerInsideAndOutsideATransaction) {
  if (kind() == dialect::sqlite) GTEST_SKIP() << "SQLite grants step by step (no functions)";
  auto db = open();
  const std::string type = mysql_family() ? "SIGNED" : "bigint";
  auto call = [&](const std::string& fn, const std::string& name, const std::string& owner, std::int64_t a,
                  std::int64_t b) {
    const auto sql = "SELECT " + fn + "($1, $2, CAST($3 AS " + (mysql_family() ? "SIGNED" : "integer") +
                     "), CAST($4 AS " + (fn.ends_with("rw") ? type : std::string(mysql_family() ? "SIGNED" : "integer")) +
                     "), CAST($5 AS " + type + "), CAST($6 AS " + type + "), CAST($7 AS " + type + "), $8, CAST($9 AS " +
                     type + "))";
    auto r = raw_query(db, sql,
                       {name, owner, a, b, std::int64_t{0}, std::numeric_limits<std::int64_t>::max(), std::int64_t{60000},
                        std::string("raw caller"), std::int64_t{0}});
    return r.rows.empty() || r.rows[0].empty() || !r.rows[0][0] ? std::string("(none)") : *r.rows[0][0];
  };
  const std::string owner(32, 'f');
  const auto rolled = unique_name("rw");
  EXPECT_THROW(transact(db, [&](transaction_ref) {
    const auto g = call("dblock_holders_acquire_rw", rolled, owner, 1, 0);
    EXPECT_EQ(g.rfind("G ", 0), 0u) << g;
    EXPECT_EQ(holder_rows(db, rolled), 1);
    const auto p = call("dblock_holders_acquire_permits", rolled, owner, 2, 1);
    EXPECT_EQ(p, "K") << "the same name as a semaphore";
    throw std::runtime_error("roll back");
  }), std::runtime_error);
  EXPECT_EQ(holder_rows(db, rolled), 0) << "the rollback undid the grant";
  const auto sem = unique_name("sem");
  const auto p = call("dblock_holders_acquire_permits", sem, owner, 3, 2);
  EXPECT_EQ(std::count(p.begin(), p.end(), ' '), 4) << p;
  EXPECT_EQ(p.rfind("G 1 ", 0), 0u) << p;
  auto other = open();
  EXPECT_EQ(holder_rows(other, sem), 2) << "autocommit: committed";
  EXPECT_EQ(call("dblock_holders_acquire_permits", sem, std::string(32, 'e'), 3, 2).rfind("B ", 0), 0u);
  raw_query(db, "DELETE FROM dblock_lock_holders WHERE name = $1", {sem});
}

DBLOCK_CONFORMANCE_SUITE(RwSemConformance);

}  // namespace
}  // namespace dblock::test
