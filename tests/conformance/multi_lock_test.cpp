// tests/conformance/multi_lock_test.cpp — multi-locks (dblock/multi_lock.hpp) on every
// combination: all-or-nothing on refusal, each member its own fence, re-entry of a member
// the session holds, waiting for a set, and, over many threads in two processes, sets that
// overlap in different orders next to single-name holders: no deadlock (every acquire ends
// within its wait) and no overlap (lost updates of per-name counters), both counted.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <random>
#include <thread>

#include "conformance/fixture.hpp"
#include "dblock/multi_lock.hpp"

namespace dblock::test {
namespace {

class MultiLockConformance : public conformance {};

TEST_P(MultiLockConformance, ARefusedMemberLeavesNothingHeld) {
  auto db = open();
  session a(db, quick()), b(db, quick());
  const auto x = unique_name("x"), y = unique_name("y"), z = unique_name("z");
  auto held = a.try_acquire(y);
  ASSERT_TRUE(held);
  EXPECT_FALSE(try_acquire_all(b, {z, y, x}));
  EXPECT_EQ(lock_rows(db, x), 0) << "a member before the refused one stayed granted";
  EXPECT_EQ(lock_rows(db, z), 0);
  EXPECT_EQ(lock_rows(db, y), 1);
  held->release();
  auto set = try_acquire_all(b, {z, y, x});
  ASSERT_TRUE(set);
  ASSERT_EQ(set->members().size(), 3u);
  EXPECT_EQ(set->members()[0].name(), std::min({x, y, z}));  // canonical order
  EXPECT_TRUE(set->is_held());
  EXPECT_NE(set->fence(x), set->fence(y));
  EXPECT_NE(set->fence(y), set->fence(z));
  EXPECT_THROW((void)set->fence("not-a-member"), invalid_argument);
  EXPECT_FALSE(a.try_acquire(x)) << "a member of a granted set was free";
  set->release();
  EXPECT_FALSE(set->is_held());
  EXPECT_EQ(lock_rows(db, x) + lock_rows(db, y) + lock_rows(db, z), 0);
}

TEST_P(MultiLockConformance, AHeldMemberIsReenteredWithItsFence) {
  auto db = open();
  session s(db, quick());
  const auto x = unique_name("x"), y = unique_name("y");
  auto single = s.try_acquire(x);
  ASSERT_TRUE(single);
  auto set = try_acquire_all(s, {x, y});
  ASSERT_TRUE(set);
  EXPECT_EQ(set->fence(x), single->fence());
  EXPECT_EQ(query_int(db, "SELECT holds FROM dblock_locks WHERE name = $1", {x}), 2);
  set->release();
  EXPECT_EQ(lock_rows(db, x), 1) << "the set's release took the single hold too";
  EXPECT_EQ(lock_rows(db, y), 0);
  single->release();
  EXPECT_EQ(lock_rows(db, x), 0);
}

// BEGIN, one grant per member, COMMIT; the release one statement per member. The sequence
// runs twice, measured the second time: statements are prepared once per connection.
TEST_P(MultiLockConformance, RoundTripsOfASetOfThree) {
  auto db = open();
  auto other = open();
  session s(db, quick()), t(other, quick());
  for (int pass = 0; pass < 2; ++pass) {
    const auto x = unique_name("x"), y = unique_name("y"), z = unique_name("z");
    std::optional<multi_lease> set;
    const auto acquire = round_trips_of(db, [&] { set = try_acquire_all(s, {x, y, z}); });
    ASSERT_TRUE(set);
    const auto release = round_trips_of(db, [&] { set->release(); });
    auto held = t.try_acquire(y);
    ASSERT_TRUE(held);
    const auto refused = round_trips_of(db, [&] { EXPECT_FALSE(try_acquire_all(s, {x, y, z})); });
    if (pass == 0) continue;
    EXPECT_EQ(acquire, 2 + 3 * acquire_trips(true));
    EXPECT_EQ(release, 3u);
    // Refused at the second member: BEGIN, the first member's grant, the refused one,
    // ROLLBACK (a refusal on SQLite is the upsert and the read of the holder).
    EXPECT_EQ(refused, 2 + acquire_trips(true) + (kind() == dialect::sqlite ? 2u : 1u));
  }
}

TEST_P(MultiLockConformance, BadSetsAreRefused) {
  auto db = open();
  session s(db, quick());
  EXPECT_THROW((void)try_acquire_all(s, {}), invalid_argument);
  EXPECT_THROW((void)try_acquire_all(s, {"a", "b", "a"}), invalid_argument);
  EXPECT_THROW((void)try_acquire_all(s, {"a", ""}), invalid_argument);
  EXPECT_THROW((void)acquire_all(s, {"a"}, -1ms), invalid_argument);
  EXPECT_THROW((void)try_acquire_all(s, {{"a", lock_mode::read}, {"a", lock_mode::write}}), invalid_argument)
      << "the same name twice in two modes";
  try {
    (void)try_acquire_all(s, {"a", {"p", lock_mode::permit}});
    ADD_FAILURE() << "a permit member was accepted";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'p'"), std::string::npos) << "names the member: " << e.what();
    EXPECT_NE(std::string(e.what()).find("permit"), std::string::npos) << e.what();
  }
}

TEST_P(MultiLockConformance, AWaitingSetIsGrantedOnceItsMembersAreFreeAndTimesOutNamingTheHolder) {
  auto db = open();
  session a(db, quick()), b(db, quick());
  const auto x = unique_name("x"), y = unique_name("y");
  auto held = a.try_acquire(y);
  ASSERT_TRUE(held);
  try {
    (void)acquire_all(b, {x, y}, 100ms);
    ADD_FAILURE() << "acquired a set with a held member";
  } catch (const timeout_error& e) {
    EXPECT_NE(std::string(e.what()).find(y), std::string::npos) << e.what();
  }
  EXPECT_EQ(lock_rows(db, x), 0);
  auto bdb = open();
  session c(bdb, quick());
  auto waiting = std::async(std::launch::async, [&] { return acquire_all(c, {x, y}, 30s); });
  held->release();
  auto set = waiting.get();
  EXPECT_TRUE(set.is_held());
  EXPECT_GT(set.fence(y), held->fence());
}

// Threads in two processes take random sets of 1-3 of five names, given in random order,
// or one name alone with a plain lease; under each hold they increment every member's counter
// by read-then-write. A counter behind the count of holds is an overlap; an acquire that
// runs out of its (long) wait is a deadlock or starvation. Both must be 0.
TEST_P(MultiLockConformance, OverlappingSetsInAnyOrderNeverDeadlockNorOverlap) {
  const int threads = 5, rounds = kind() == dialect::sqlite ? 10 : 20, names = 5;
  std::vector<std::string> name;
  for (int i = 0; i < names; ++i) name.push_back(unique_name("m" + std::to_string(i)));
  const auto table = unique_name("ctr");
  {
    auto db = open();
    raw_exec(db, "CREATE TABLE " + table + " (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)");
    for (int i = 0; i < names; ++i) raw_query(db, "INSERT INTO " + table + " (id, v) VALUES ($1, 0)", {std::int64_t{i}});
  }
  // Each process writes how many times it held each name to a pipe.
  auto work = [&](unsigned seed, std::vector<std::int64_t>& taken) -> int {
    std::atomic<int> violations{0};
    std::mutex mu;
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        std::mt19937 rng(seed * 97 + static_cast<unsigned>(t));
        std::vector<std::int64_t> mine(names, 0);
        try {
          auto db = open();
          session s(db, quick());
          for (int r = 0; r < rounds; ++r) {
            std::vector<int> ids(names);
            for (int i = 0; i < names; ++i) ids[i] = i;
            std::shuffle(ids.begin(), ids.end(), rng);
            ids.resize(1 + rng() % 3);
            std::vector<lock_member> set;
            for (int i : ids) set.emplace_back(name[i]);
            std::optional<multi_lease> ml;
            std::optional<lease> single;
            if (ids.size() == 1 && rng() % 2 == 0) single.emplace(s.acquire(name[ids[0]], 60s));
            else ml.emplace(acquire_all(s, set, 60s));
            for (int i : ids) {
              auto v = query_int(db, "SELECT v FROM " + table + " WHERE id = $1", {std::int64_t{i}});
              std::this_thread::yield();
              raw_query(db, "UPDATE " + table + " SET v = $1 WHERE id = $2", {v + 1, std::int64_t{i}});
              ++mine[i];
            }
            if (ml) ml->release();
            if (single) single->release();
          }
        } catch (const std::exception& e) {
          ++violations;
          std::fprintf(stderr, "worker: %s\n", e.what());
        }
        std::lock_guard l(mu);
        for (int i = 0; i < names; ++i) taken[i] += mine[i];
      });
    for (auto& th : ts) th.join();
    return violations.load();
  };
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    std::vector<std::int64_t> taken(names, 0);
    const int v = work(2, taken);
    (void)!::write(fds[1], taken.data(), taken.size() * sizeof(std::int64_t));
    ::_exit(v == 0 ? 0 : 1);
  }
  ::close(fds[1]);
  std::vector<std::int64_t> taken(names, 0), theirs(names, 0);
  EXPECT_EQ(work(1, taken), 0) << "errors or timeouts (deadlock) in this process";
  const auto want = static_cast<ssize_t>(theirs.size() * sizeof(std::int64_t));
  EXPECT_EQ(::read(fds[0], theirs.data(), static_cast<std::size_t>(want)), want);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "errors or timeouts (deadlock) in the child";
  auto db = open();
  for (int i = 0; i < names; ++i)
    EXPECT_EQ(query_int(db, "SELECT v FROM " + table + " WHERE id = $1", {std::int64_t{i}}), taken[i] + theirs[i])
        << "lost updates (overlapping holds) of name " << i;
  raw_exec(db, "DROP TABLE " + table);
}

// Read members of two sets (and a plain read lock) hold one name at once; the sets' other
// members are theirs alone. Release leaves no row in either table.
TEST_P(MultiLockConformance, ReadMembersOfSetsShareANameAndTheirReleaseLeavesNothing) {
  auto db = open();
  session a(db, quick()), b(db, quick()), c(db, quick());
  const auto x = unique_name("x"), y = unique_name("y"), z = unique_name("z");
  auto one = try_acquire_all(a, {{x, lock_mode::read}, y});
  ASSERT_TRUE(one);
  auto two = try_acquire_all(b, {z, {x, lock_mode::read}});
  ASSERT_TRUE(two) << "two sets reading the same name";
  auto plain = c.try_acquire(x, lock_mode::read);
  ASSERT_TRUE(plain) << "a plain reader beside the sets' read members";
  EXPECT_EQ(holder_rows(db, x), 3);
  EXPECT_EQ(lock_rows(db, x), 0) << "a read member is not a lease lock";
  ASSERT_EQ(one->members().size(), 2u);
  const auto& rx = one->members()[x < y ? 0 : 1];
  EXPECT_EQ(rx.name(), x);
  EXPECT_EQ(rx.mode(), lock_mode::read);
  EXPECT_EQ(one->members()[x < y ? 1 : 0].mode(), lock_mode::exclusive);
  EXPECT_NE(one->fence(x), two->fence(x)) << "each read grant has its own fence";
  EXPECT_TRUE(one->is_held());
  EXPECT_GT(one->remaining().count(), 0);
  EXPECT_FALSE(try_acquire_all(c, {{x, lock_mode::read}, y})) << "y is the first set's";
  auto work = open();
  EXPECT_NO_THROW(transact(work, [&](transaction_ref tx) { one->verify_in(tx); })) << "verify_in of a read member";
  one->release();
  two->release();
  EXPECT_FALSE(one->is_held());
  EXPECT_EQ(holder_rows(db, x), 1) << "only the plain reader is left";
  plain->release();
  EXPECT_EQ(holder_rows(db, x) + lock_rows(db, y) + lock_rows(db, z), 0);
}

// A write member keeps out read members of other sets and plain readers, and the other way
// round; a refused set holds nothing of its other members.
TEST_P(MultiLockConformance, AWriteMemberExcludesReadersAndReadersExcludeIt) {
  auto db = open();
  session a(db, quick()), b(db, quick()), c(db, quick());
  const auto x = unique_name("x"), y = unique_name("y"), z = unique_name("z");
  auto w = try_acquire_all(a, {{x, lock_mode::write}, y});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->members()[x < y ? 0 : 1].mode(), lock_mode::write);
  EXPECT_FALSE(try_acquire_all(b, {z, {x, lock_mode::read}})) << "a read member beside a write member";
  EXPECT_EQ(lock_rows(db, z), 0) << "the refused set kept a member";
  EXPECT_FALSE(try_acquire_all(b, {{x, lock_mode::write}})) << "two write members";
  EXPECT_FALSE(c.try_acquire(x, lock_mode::read)) << "a plain reader beside a write member";
  EXPECT_FALSE(c.try_acquire(x, lock_mode::write)) << "a plain writer beside a write member";
  try {
    (void)acquire_all(b, {{x, lock_mode::read}, z}, 100ms);
    ADD_FAILURE() << "acquired a read member beside a write member";
  } catch (const timeout_error& e) {
    EXPECT_NE(std::string(e.what()).find(x), std::string::npos) << e.what();
  }
  const auto wf = w->fence(x);
  w->release();
  EXPECT_EQ(holder_rows(db, x) + lock_rows(db, y), 0);
  auto r = c.try_acquire(x, lock_mode::read);
  ASSERT_TRUE(r);
  EXPECT_GT(r->fence(), wf);
  EXPECT_FALSE(try_acquire_all(b, {{x, lock_mode::write}, z})) << "a write member beside a plain reader";
  EXPECT_EQ(lock_rows(db, z), 0);
  auto shared = try_acquire_all(b, {{x, lock_mode::read}, z});
  ASSERT_TRUE(shared) << "a read member beside a plain reader";
  shared->release();
  r->release();
  auto w2 = try_acquire_all(b, {{x, lock_mode::write}, z});
  ASSERT_TRUE(w2);
  EXPECT_GT(w2->fence(x), r->fence()) << "a write member's fence is larger than every earlier grant's";
}

// As outside a set: the lease lock x and the read-write lock x do not exclude each other; a
// read or write member whose name is a semaphore is refused, and nothing of the set is held.
TEST_P(MultiLockConformance, MemberKindsFollowTheLocksOfTheirName) {
  auto db = open();
  session a(db, quick()), b(db, quick());
  const auto x = unique_name("x"), y = unique_name("y"), sem = unique_name("sem");
  auto lease_x = a.try_acquire(x);
  ASSERT_TRUE(lease_x);
  auto set = try_acquire_all(b, {{x, lock_mode::write}, y});
  ASSERT_TRUE(set) << "a write member of x beside the lease lock x";
  EXPECT_FALSE(try_acquire_all(b, {x})) << "an exclusive member of x beside the lease lock x of another owner";
  set->release();
  lease_x->release();
  auto permits = a.try_acquire_permits(sem, 2);
  ASSERT_TRUE(permits);
  for (auto mode : {lock_mode::read, lock_mode::write}) {
    try {
      (void)try_acquire_all(b, {y, {sem, mode}});
      ADD_FAILURE() << "a " << to_string(mode) << " member on a semaphore's name";
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("semaphore"), std::string::npos) << e.what();
    }
    EXPECT_EQ(lock_rows(db, y), 0) << "a member of a refused set stayed granted";
  }
  EXPECT_EQ(holder_rows(db, sem), 1);
  auto lease_sem = try_acquire_all(b, {sem});
  EXPECT_TRUE(lease_sem) << "the lease lock of a semaphore's name is another lock";
}

// Read-write members re-enter the session's holds as try_acquire(name, mode) does: same
// fence, holds + 1; the only reader's write member upgrades (a new, larger fence); an upgrade
// beside another reader is invalid_argument and the set holds nothing.
TEST_P(MultiLockConformance, ReadWriteMembersReenterAndUpgradeAsPlainLocksDo) {
  auto db = open();
  session a(db, quick()), b(db, quick());
  const auto x = unique_name("x"), y = unique_name("y");
  auto r = a.try_acquire(x, lock_mode::read);
  ASSERT_TRUE(r);
  auto again = try_acquire_all(a, {{x, lock_mode::read}, y});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->fence(x), r->fence()) << "a re-entry keeps the fence";
  EXPECT_EQ(holder_rows(db, x), 1);
  EXPECT_EQ(query_int(db, "SELECT holds FROM dblock_lock_holders WHERE name = $1", {x}), 2);
  again->release();
  EXPECT_EQ(query_int(db, "SELECT holds FROM dblock_lock_holders WHERE name = $1", {x}), 1);
  EXPECT_EQ(lock_rows(db, y), 0);
  auto up = try_acquire_all(a, {{x, lock_mode::write}, y});
  ASSERT_TRUE(up) << "the only reader upgrades";
  EXPECT_GT(up->fence(x), r->fence());
  EXPECT_FALSE(b.try_acquire(x, lock_mode::read)) << "a reader beside the upgraded set";
  up->release();  // the downgrade: the read hold stays
  EXPECT_TRUE(r->is_held());
  auto other = b.try_acquire(x, lock_mode::read);
  ASSERT_TRUE(other);
  try {
    (void)try_acquire_all(a, {y, {x, lock_mode::write}});
    ADD_FAILURE() << "upgraded beside another reader";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2 readers"), std::string::npos) << e.what();
  }
  EXPECT_EQ(lock_rows(db, y), 0) << "a member of the refused set stayed granted";
  other->release();
  r->release();
  EXPECT_EQ(holder_rows(db, x), 0);
}

// A set takes no ticket and passes no waiter: a waiting plain writer keeps a set's read
// member out; once the writer is done, a waiting set with a write member gets the name.
TEST_P(MultiLockConformance, ASetWaitsBehindAWaitingWriterAndIsGrantedWhenReadersLeave) {
  auto db = open();
  session reader(db, quick());
  const auto x = unique_name("x"), y = unique_name("y");
  auto r = reader.try_acquire(x, lock_mode::read);
  ASSERT_TRUE(r);
  auto wdb = open();
  auto writer = std::async(std::launch::async, [&] {
    session w(wdb, quick());
    auto l = w.acquire(x, lock_mode::write, 60s);
    return l.fence();  // released on return
  });
  auto ldb = open();
  for (int i = 0; i < 3000 && tickets(ldb, x) == 0; ++i) std::this_thread::sleep_for(5ms);
  ASSERT_EQ(tickets(ldb, x), 1) << "the writer waits in line";
  session late(ldb, quick());
  EXPECT_FALSE(try_acquire_all(late, {{x, lock_mode::read}, y})) << "a read member passed a waiting writer";
  EXPECT_EQ(lock_rows(ldb, y), 0);
  auto sdb = open();
  session setter(sdb, quick());
  auto waiting = std::async(std::launch::async, [&] { return acquire_all(setter, {y, {x, lock_mode::write}}, 60s); });
  r->release();
  const auto wf = writer.get();
  auto set = waiting.get();
  EXPECT_TRUE(set.is_held());
  EXPECT_GT(set.fence(x), wf);
  EXPECT_EQ(tickets(ldb, x), 0) << "the set took no ticket";
  set.release();
  EXPECT_EQ(holder_rows(ldb, x) + lock_rows(ldb, y), 0);
}

// BEGIN, each member's grant, COMMIT: a read or write member costs its read-write grant
// steps (gate, clear, live, line, fence, insert; the fence two statements on MySQL 8.0).
TEST_P(MultiLockConformance, RoundTripsOfAMixedSet) {
  auto db = open();
  auto other = open();
  session s(db, quick()), t(other, quick());
  for (int pass = 0; pass < 2; ++pass) {  // measured the second time: statements are prepared once
    const auto x = unique_name("x"), y = unique_name("y"), z = unique_name("z");
    std::optional<multi_lease> set;
    const auto acquire =
        round_trips_of(db, [&] { set = try_acquire_all(s, {x, {y, lock_mode::read}, {z, lock_mode::write}}); });
    ASSERT_TRUE(set);
    const auto release = round_trips_of(db, [&] { set->release(); });
    auto reader = t.try_acquire(y, lock_mode::read);
    ASSERT_TRUE(reader);
    // Refused at the write member y: BEGIN, x's grant, y's gate, clear and read, ROLLBACK.
    const auto refused = round_trips_of(db, [&] { EXPECT_FALSE(try_acquire_all(s, {x, {y, lock_mode::write}})); });
    if (pass == 0) continue;
    const std::uint64_t rw_grant = kind() == dialect::mysql8 ? 7u : 6u;
    EXPECT_EQ(acquire, 2 + acquire_trips(true) + 2 * rw_grant);
    EXPECT_EQ(release, 3u);
    EXPECT_EQ(refused, 2 + acquire_trips(true) + 3u);
  }
}

// Threads in two processes take random sets of 1-3 of six names, given in random order: names
// 0-2 as exclusive members, names 3-5 as read or write members; or one name alone as a plain
// lease or read-write lock. Under each hold a write or exclusive member counts itself in by
// read-then-write (a lost update is an overlap), writers and readers count themselves in
// and out and check nobody excluded is inside. Acquires that run out of their (long) wait
// (a deadlock or starvation) and overlaps are counted: both must be 0.
TEST_P(MultiLockConformance, OverlappingMixedSetsInAnyOrderNeverDeadlockNorOverlap) {
  const int threads = 5, rounds = kind() == dialect::sqlite ? 10 : 20, names = 6, lease_names = 3;
  std::vector<std::string> name;
  for (int i = 0; i < names; ++i) name.push_back(unique_name("m" + std::to_string(i)));
  const auto table = unique_name("ctr");
  {
    auto db = open();
    raw_exec(db, "CREATE TABLE " + table +
                     " (id INTEGER PRIMARY KEY, v INTEGER NOT NULL, readers INTEGER NOT NULL,"
                     " writers INTEGER NOT NULL)");
    for (int i = 0; i < names; ++i)
      raw_query(db, "INSERT INTO " + table + " (id, v, readers, writers) VALUES ($1, 0, 0, 0)", {std::int64_t{i}});
  }
  // Each process writes how many times it counted itself into each name's v to a pipe.
  auto work = [&](unsigned seed, std::vector<std::int64_t>& taken) -> int {
    std::atomic<int> violations{0};
    std::mutex mu;
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        std::mt19937 rng(seed * 131 + static_cast<unsigned>(t));
        std::vector<std::int64_t> mine(names, 0);
        try {
          auto db = open();
          session s(db, quick());
          for (int r = 0; r < rounds; ++r) {
            std::vector<int> ids(names);
            for (int i = 0; i < names; ++i) ids[i] = i;
            std::shuffle(ids.begin(), ids.end(), rng);
            ids.resize(1 + rng() % 3);
            std::vector<lock_member> set;
            for (int i : ids)
              set.emplace_back(name[i], i < lease_names ? lock_mode::exclusive
                                        : rng() % 2       ? lock_mode::write
                                                          : lock_mode::read);
            std::optional<multi_lease> ml;
            std::optional<lease> single;
            if (ids.size() == 1 && rng() % 2 == 0) single.emplace(s.acquire(set[0].name, set[0].mode, 60s));
            else ml.emplace(acquire_all(s, set, 60s));
            const auto id = [](int i) { return std::int64_t{i}; };
            for (std::size_t k = 0; k < ids.size(); ++k) {
              const int i = ids[k];
              if (set[k].mode == lock_mode::read) {
                raw_query(db, "UPDATE " + table + " SET readers = readers + 1 WHERE id = $1", {id(i)});
                continue;
              }
              if (set[k].mode == lock_mode::write) {
                raw_query(db, "UPDATE " + table + " SET writers = writers + 1 WHERE id = $1", {id(i)});
                if (query_int(db, "SELECT readers FROM " + table + " WHERE id = $1", {id(i)}) != 0) ++violations;
              }
              auto v = query_int(db, "SELECT v FROM " + table + " WHERE id = $1", {id(i)});
              std::this_thread::yield();
              raw_query(db, "UPDATE " + table + " SET v = $1 WHERE id = $2", {v + 1, id(i)});
              ++mine[i];
            }
            for (std::size_t k = 0; k < ids.size(); ++k) {
              const int i = ids[k];
              if (set[k].mode == lock_mode::read) {
                if (query_int(db, "SELECT writers FROM " + table + " WHERE id = $1", {id(i)}) != 0) ++violations;
                raw_query(db, "UPDATE " + table + " SET readers = readers - 1 WHERE id = $1", {id(i)});
              } else if (set[k].mode == lock_mode::write) {
                raw_query(db, "UPDATE " + table + " SET writers = writers - 1 WHERE id = $1", {id(i)});
              }
            }
            if (ml) ml->release();
            if (single) single->release();
          }
        } catch (const std::exception& e) {
          ++violations;
          std::fprintf(stderr, "worker: %s\n", e.what());
        }
        std::lock_guard l(mu);
        for (int i = 0; i < names; ++i) taken[i] += mine[i];
      });
    for (auto& th : ts) th.join();
    return violations.load();
  };
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    std::vector<std::int64_t> taken(names, 0);
    const int v = work(2, taken);
    (void)!::write(fds[1], taken.data(), taken.size() * sizeof(std::int64_t));
    ::_exit(v == 0 ? 0 : 1);
  }
  ::close(fds[1]);
  std::vector<std::int64_t> taken(names, 0), theirs(names, 0);
  EXPECT_EQ(work(1, taken), 0) << "errors, timeouts (deadlock) or readers beside writers in this process";
  const auto want = static_cast<ssize_t>(theirs.size() * sizeof(std::int64_t));
  EXPECT_EQ(::read(fds[0], theirs.data(), static_cast<std::size_t>(want)), want);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "errors, timeouts (deadlock) or readers beside writers in the child";
  auto db = open();
  for (int i = 0; i < names; ++i) {
    EXPECT_EQ(query_int(db, "SELECT v FROM " + table + " WHERE id = $1", {std::int64_t{i}}), taken[i] + theirs[i])
        << "lost updates (overlapping holds) of name " << i;
    EXPECT_EQ(query_int(db, "SELECT readers + writers FROM " + table + " WHERE id = $1", {std::int64_t{i}}), 0);
    EXPECT_EQ(lock_rows(db, name[i]) + holder_rows(db, name[i]), 0) << "rows left of name " << i;
  }
  raw_exec(db, "DROP TABLE " + table);
}

}  // namespace

DBLOCK_CONFORMANCE_SUITE(MultiLockConformance);

}  // namespace dblock::test
