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

using namespace std::chrono_literals;
using std::chrono::milliseconds;

class MultiLockConformance : public conformance {
 protected:
  session_options quick(milliseconds ttl = 5000ms) {
    session_options o;
    o.ttl = ttl;
    return o;
  }
  std::int64_t rows_of(database& db, const std::string& name) {
    return query_int(db, "SELECT COUNT(*) FROM dblock_locks WHERE name = $1", {name});
  }
};

TEST_P(MultiLockConformance, ARefusedMemberLeavesNothingHeld) {
  auto db = open();
  session a(db, quick()), b(db, quick());
  const auto x = unique_name("x"), y = unique_name("y"), z = unique_name("z");
  auto held = a.try_acquire(y);
  ASSERT_TRUE(held);
  EXPECT_FALSE(try_acquire_all(b, {z, y, x}));
  EXPECT_EQ(rows_of(db, x), 0) << "a member before the refused one stayed granted";
  EXPECT_EQ(rows_of(db, z), 0);
  EXPECT_EQ(rows_of(db, y), 1);
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
  EXPECT_EQ(rows_of(db, x) + rows_of(db, y) + rows_of(db, z), 0);
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
  EXPECT_EQ(rows_of(db, x), 1) << "the set's release took the single hold too";
  EXPECT_EQ(rows_of(db, y), 0);
  single->release();
  EXPECT_EQ(rows_of(db, x), 0);
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
    // ROLLBACK (a refusal on MySQL 8.0 is its upsert, the fence draw that matches nothing,
    // the read; on SQLite the upsert and the read of the holder).
    EXPECT_EQ(refused, 2 + acquire_trips(true) + (kind() == dialect::mysql8 ? 3u : kind() == dialect::sqlite ? 2u : 1u));
  }
}

TEST_P(MultiLockConformance, BadSetsAreRefused) {
  auto db = open();
  session s(db, quick());
  EXPECT_THROW((void)try_acquire_all(s, {}), invalid_argument);
  EXPECT_THROW((void)try_acquire_all(s, {"a", "b", "a"}), invalid_argument);
  EXPECT_THROW((void)try_acquire_all(s, {"a", ""}), invalid_argument);
  EXPECT_THROW((void)acquire_all(s, {"a"}, -1ms), invalid_argument);
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
  EXPECT_EQ(rows_of(db, x), 0);
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

}  // namespace

DBLOCK_CONFORMANCE_SUITE(MultiLockConformance);

}  // namespace dblock::test
