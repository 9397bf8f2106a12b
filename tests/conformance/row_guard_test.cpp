// tests/conformance/row_guard_test.cpp — transactional row guards, retry, optimistic
// updates and fenced writes (dblock/row_guard.hpp, retry.hpp, optimistic.hpp) on all
// seven combinations: insert-first dedup under 16 threads (and the textbook pattern
// failing next to it), NOWAIT / SKIP LOCKED / bounded waits against a real concurrent
// holder, retry of a provoked deadlock, 8 x 200 optimistic increments, fenced writes
// with a lease lock taken over after its TTL, identifier injection refused.
// Every thread opens its own connection. Concurrency is proven by counting.
#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "conformance/fixture.hpp"
#include "dblock/lock.hpp"
#include "dblock/optimistic.hpp"
#include "dblock/retry.hpp"
#include "dblock/row_guard.hpp"

namespace dblock::test {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using clock_type = std::chrono::steady_clock;

class RowGuardConformance : public conformance {
 protected:
  void TearDown() override {
    if (!made_tables_.empty()) {
      try {
        auto db = open_unmigrated();
        for (const auto& t : made_tables_) raw_exec(db, "DROP TABLE IF EXISTS " + t);
      } catch (...) {
      }
    }
    conformance::TearDown();
  }

  // A user table with a unique name, dropped in TearDown. `columns` is the column list.
  std::string make_table(database& db, std::string_view stem, const std::string& columns) {
    auto name = unique_name(stem);
    raw_exec(db, "CREATE TABLE " + name + " (" + columns + ")");
    made_tables_.push_back(name);
    return name;
  }
  std::string orders_table(database& db) {
    return make_table(db, "orders", "order_no VARCHAR(64) NOT NULL PRIMARY KEY, customer VARCHAR(64), amount BIGINT");
  }

  // Runs fn(i) on n threads, each released at the same moment; returns when all finished.
  static void on_threads(int n, const std::function<void(int)>& fn) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> ts;
    for (int i = 0; i < n; ++i)
      ts.emplace_back([&, i] {
        ++ready;
        while (!go.load()) std::this_thread::yield();
        fn(i);
      });
    while (ready.load() < n) std::this_thread::yield();
    go = true;
    for (auto& t : ts) t.join();
  }

  // A transaction on its own connection holding row `key` of `table` until release() is
  // called (runs on a thread; returns once the lock is held).
  class holder {
   public:
    holder(const std::string& url, std::string table, std::string key_column, value key)
        : thread_([this, url, table = std::move(table), key_column = std::move(key_column), key = std::move(key)] {
            try {
              auto db = dblock::open(url);
              transact(db, [&](transaction_ref tx) {
                auto r = lock_row(tx, table, key_column, key);
                locked_.set_value(r.outcome);
                release_.get_future().wait();
              });
            } catch (...) {
              try {
                locked_.set_exception(std::current_exception());
              } catch (...) {
              }
            }
          }) {}
    ~holder() {
      release();
      thread_.join();
    }
    lock_outcome wait_locked() { return locked_future_.get(); }
    void release() {
      if (!released_.exchange(true)) release_.set_value();
    }

   private:
    std::promise<lock_outcome> locked_;
    std::future<lock_outcome> locked_future_ = locked_.get_future();
    std::promise<void> release_;
    std::atomic<bool> released_{false};
    std::thread thread_;
  };

  std::vector<std::string> made_tables_;
};

// --- insert-first dedup -------------------------------------------------------------

TEST_P(RowGuardConformance, SixteenThreadsCreatingTheSameOrderMakeExactlyOneRow) {
  auto db = open_unmigrated();
  const auto orders = orders_table(db);
  constexpr int threads = 16;
  constexpr int rounds = 5;
  for (int round = 0; round < rounds; ++round) {
    const std::string order_no = "A-" + std::to_string(1000 + round);
    std::atomic<int> inserted{0}, existing{0}, errors{0};
    std::string first_error;
    std::mutex mu;
    std::vector<database> conns;
    for (int i = 0; i < threads; ++i) conns.push_back(dblock::open(url()));
    on_threads(threads, [&](int i) {
      try {
        transact(conns[static_cast<std::size_t>(i)], [&](transaction_ref tx) {
          auto r = insert_or_lock(tx, orders, "order_no", order_no,
                                  {{"customer", "c" + std::to_string(i)}, {"amount", std::int64_t{i}}});
          (r.inserted() ? inserted : existing)++;
        });
      } catch (const std::exception& e) {
        ++errors;
        std::lock_guard lock(mu);
        if (first_error.empty()) first_error = e.what();
      }
    });
    EXPECT_EQ(errors.load(), 0) << first_error;
    EXPECT_EQ(inserted.load(), 1) << "round " << round;
    EXPECT_EQ(existing.load(), threads - 1) << "round " << round;
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM " + orders + " WHERE order_no = $1", {order_no}), 1);
  }
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM " + orders), rounds);
}

// The textbook "SELECT ... FOR UPDATE, then INSERT if absent" next to insert_or_lock, same
// load: on PostgreSQL a missing row locks nothing (duplicate-key errors), on InnoDB the
// gap locks deadlock. Rounds repeat until the textbook failure shows (capped); ours must
// have none over the same number of rounds.
// SQLite has no FOR UPDATE and no row locks: dblock's transactions are BEGIN IMMEDIATE,
// which takes the database's write lock before the SELECT, so the textbook "SELECT, then
// INSERT if absent" is serialized and correct there: 20 rounds, no error, one row each,
// and the same for insert_or_lock (a deferred BEGIN would fail here with SQLITE_BUSY).
TEST_P(RowGuardConformance, TextbookSelectForUpdateThenInsertFailsWhereInsertFirstDoesNot) {
  const bool sqlite = kind() == dialect::sqlite;
  auto db = open_unmigrated();
  const auto orders = orders_table(db);
  constexpr int threads = 16;
  std::vector<database> conns;
  for (int i = 0; i < threads; ++i) conns.push_back(dblock::open(url()));

  auto run_rounds = [&](int max_rounds, bool textbook, int stop_after_failures) {
    int failures = 0, rounds = 0, duplicates = 0, deadlocks = 0, other = 0;
    const auto deadline = clock_type::now() + 20s;
    for (; rounds < max_rounds && clock_type::now() < deadline; ++rounds) {
      const std::string order_no = std::string(textbook ? "T-" : "O-") + std::to_string(rounds);
      std::atomic<int> dup{0}, dead{0}, oth{0};
      on_threads(threads, [&](int i) {
        auto& c = conns[static_cast<std::size_t>(i)];
        try {
          transact(c, [&](transaction_ref tx) {
            if (textbook) {
              auto r = raw_query(c, "SELECT order_no FROM " + orders + " WHERE order_no = $1" + (sqlite ? "" : " FOR UPDATE"),
                                 {order_no});
              if (r.rows.empty())
                raw_query(c, "INSERT INTO " + orders + " (order_no, customer) VALUES ($1, $2)",
                          {order_no, std::string("c")});
            } else {
              (void)insert_or_lock(tx, orders, "order_no", order_no, {{"customer", std::string("c")}});
            }
          });
        } catch (const unique_violation&) {
          ++dup;
        } catch (const deadlock&) {
          ++dead;
        } catch (const std::exception&) {
          ++oth;
        }
      });
      duplicates += dup;
      deadlocks += dead;
      other += oth;
      failures += dup + dead + oth;
      EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM " + orders + " WHERE order_no = $1", {order_no}), 1);
      if (stop_after_failures > 0 && failures >= stop_after_failures) {
        ++rounds;
        break;
      }
    }
    std::cout << (textbook ? "[ textbook ] " : "[ insert-first ] ") << rounds << " rounds x " << threads
              << " threads: " << duplicates << " duplicate-key, " << deadlocks << " deadlock, " << other
              << " other errors\n";
    return std::pair{failures, rounds};
  };

  if (sqlite) {
    auto [textbook_failures, rounds] = run_rounds(20, true, 0);
    EXPECT_EQ(textbook_failures, 0) << "SELECT-then-INSERT failed under BEGIN IMMEDIATE in " << rounds << " rounds";
    EXPECT_GE(rounds, 10);
    auto [ours, ours_rounds] = run_rounds(20, false, 0);
    EXPECT_EQ(ours, 0) << "insert_or_lock failed over " << ours_rounds << " rounds";
    EXPECT_GE(ours_rounds, 10);
    return;
  }
  auto [textbook_failures, rounds] = run_rounds(200, true, 1);
  EXPECT_GT(textbook_failures, 0) << "the textbook pattern never failed in " << rounds << " rounds";
  auto [ours, ours_rounds] = run_rounds(std::max(rounds, 10), false, 0);
  EXPECT_EQ(ours, 0) << "insert_or_lock failed over " << ours_rounds << " rounds";
}

TEST_P(RowGuardConformance, InsertOrLockReportsAndLocksExistingRows) {
  auto db = open_unmigrated();
  const auto orders = orders_table(db);
  transact(db, [&](transaction_ref tx) {
    EXPECT_TRUE(insert_or_lock(tx, orders, "order_no", "B-1", {{"customer", "ann"}, {"amount", std::int64_t{5}}}).inserted());
    EXPECT_EQ(insert_or_lock(tx, orders, "order_no", "B-1", {{"customer", "bob"}}).outcome, insert_outcome::existing);
    EXPECT_TRUE(insert_or_lock(tx, orders, "order_no", "B-2").inserted());
  });
  auto r = raw_query(db, "SELECT customer, amount FROM " + orders + " WHERE order_no = $1", {std::string("B-1")});
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0][0].value_or(""), "ann");  // the existing row is left unchanged
  EXPECT_EQ(r.rows[0][1].value_or(""), "5");
  // A rolled-back insert leaves nothing behind.
  EXPECT_THROW(transact(db,
                        [&](transaction_ref tx) {
                          EXPECT_TRUE(insert_or_lock(tx, orders, "order_no", "B-3").inserted());
                          throw std::runtime_error("business rule says no");
                        }),
               std::runtime_error);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM " + orders + " WHERE order_no = $1", {std::string("B-3")}), 0);
}

TEST_P(RowGuardConformance, InsertOrLockDoesNotSwallowAnotherUniqueIndex) {
  auto db = open_unmigrated();
  const auto t = make_table(db, "uq", "order_no VARCHAR(64) NOT NULL PRIMARY KEY, ext_ref VARCHAR(64) NOT NULL UNIQUE");
  transact(db, [&](transaction_ref tx) {
    EXPECT_TRUE(insert_or_lock(tx, t, "order_no", "U-1", {{"ext_ref", "R-1"}}).inserted());
  });
  EXPECT_THROW(transact(db, [&](transaction_ref tx) { (void)insert_or_lock(tx, t, "order_no", "U-2", {{"ext_ref", "R-1"}}); }),
               unique_violation);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM " + t), 1);
}

TEST_P(RowGuardConformance, RoundTripsAreTheDocumentedOnes) {
  auto db = open_unmigrated();
  const auto orders = orders_table(db);
  std::uint64_t ins = 0, ex = 0, lk = 0, skip_miss = 0;
  transact(db, [&](transaction_ref tx) {
    ins = round_trips_of(db, [&] { (void)insert_or_lock(tx, orders, "order_no", "R-1"); });
    ex = round_trips_of(db, [&] { (void)insert_or_lock(tx, orders, "order_no", "R-1"); });
    lk = round_trips_of(db, [&] { (void)lock_row(tx, orders, "order_no", "R-1"); });
    skip_miss = round_trips_of(db, [&] {
      (void)lock_row(tx, orders, "order_no", "nope", {lock_wait::skip_locked});
    });
  });
  // Connector/C++, and libpqxx on a connection dblock opened, prepare each statement once
  // per connection: one more round trip the first time a statement kind is used.
  const bool prepares = client() == client_library::mysql || client() == client_library::pqxx;
  switch (kind()) {
    case dialect::postgresql:
      EXPECT_EQ(ins, prepares ? 2u : 1u);
      EXPECT_EQ(ex, prepares ? 3u : 2u);
      EXPECT_EQ(lk, 1u);
      EXPECT_EQ(skip_miss, prepares ? 4u : 2u);
      break;
    case dialect::mysql8:
    case dialect::mysql:
      EXPECT_EQ(ins, prepares ? 6u : 3u);
      EXPECT_EQ(ex, 3u);
      EXPECT_EQ(lk, prepares ? 2u : 1u);
      EXPECT_EQ(skip_miss, prepares ? 4u : 2u);
      break;
    case dialect::sqlite: EXPECT_EQ(ins, 1u); EXPECT_EQ(ex, 1u); EXPECT_EQ(lk, 1u); EXPECT_EQ(skip_miss, 1u); break;
  }
}

// --- row locks against a real concurrent holder ---------------------------------------

TEST_P(RowGuardConformance, NowaitSkipLockedAndBoundedWaitAgainstARealHolder) {
  auto db = open_unmigrated();
  const auto t = make_table(db, "acct", "id BIGINT NOT NULL PRIMARY KEY, balance BIGINT NOT NULL");
  raw_query(db, "INSERT INTO " + t + " (id, balance) VALUES (1, 100)");
  raw_query(db, "INSERT INTO " + t + " (id, balance) VALUES (2, 200)");

  if (kind() == dialect::sqlite) {
    // No row locks: the holder's BEGIN IMMEDIATE holds the writer lock, so a second
    // transaction does not even begin; it fails after the busy timeout (here 1 s).
    holder h(url(), t, "id", std::int64_t{1});
    ASSERT_EQ(h.wait_locked(), lock_outcome::locked);
    auto other = dblock::open(url() + "?timeout=1");
    const auto start = clock_type::now();
    EXPECT_THROW(transact(other, [&](transaction_ref tx) { (void)lock_row(tx, t, "id", std::int64_t{1}, {lock_wait::nowait}); }),
                 lock_not_available);
    EXPECT_GE(clock_type::now() - start, 900ms);
    h.release();
    // Alone, every mode just locks.
    for (auto mode : {lock_wait::wait, lock_wait::nowait, lock_wait::skip_locked, lock_wait::bounded})
      transact(other, [&](transaction_ref tx) {
        EXPECT_EQ(lock_row(tx, t, "id", std::int64_t{1}, {mode, 100ms}).outcome, lock_outcome::locked);
        EXPECT_EQ(lock_row(tx, t, "id", std::int64_t{9}, {mode, 100ms}).outcome, lock_outcome::not_found);
      });
    return;
  }

  holder h(url(), t, "id", std::int64_t{1});
  ASSERT_EQ(h.wait_locked(), lock_outcome::locked);
  auto b = dblock::open(url());
  const milliseconds bound = mysql_family() ? 1000ms : 300ms;  // MariaDB counts whole seconds
  transact(b, [&](transaction_ref tx) {
    EXPECT_EQ(lock_row(tx, t, "id", std::int64_t{1}, {lock_wait::nowait}).outcome, lock_outcome::busy);
    // The transaction survived the busy attempt (PostgreSQL: thanks to the savepoint).
    EXPECT_EQ(lock_row(tx, t, "id", std::int64_t{2}, {lock_wait::nowait}).outcome, lock_outcome::locked);
    EXPECT_EQ(lock_row(tx, t, "id", std::int64_t{9}, {lock_wait::nowait}).outcome, lock_outcome::not_found);
    EXPECT_EQ(lock_row(tx, t, "id", std::int64_t{1}, {lock_wait::skip_locked}).outcome, lock_outcome::busy);
    EXPECT_EQ(lock_row(tx, t, "id", std::int64_t{9}, {lock_wait::skip_locked}).outcome, lock_outcome::not_found);
    auto start = clock_type::now();
    EXPECT_EQ(lock_row(tx, t, "id", std::int64_t{1}, {lock_wait::bounded, bound}).outcome, lock_outcome::busy);
    const auto waited = clock_type::now() - start;
    EXPECT_GE(waited, bound - 50ms);
    EXPECT_LT(waited, bound + 3s);
    // The bounded wait did not leak its timeout into the rest of the transaction.
    if (kind() == dialect::postgresql)
      EXPECT_EQ(raw_query(b, "SELECT current_setting('lock_timeout')").rows.at(0).at(0).value_or("?"), "0");
    else
      EXPECT_EQ(query_int(b, "SELECT @@SESSION.innodb_lock_wait_timeout"), 50);
    // Still usable: write through the transaction and commit.
    raw_query(b, "UPDATE " + t + " SET balance = balance + 1 WHERE id = 2");
  });
  EXPECT_EQ(query_int(b, "SELECT balance FROM " + t + " WHERE id = 2"), 201);

  // Wait mode waits for the holder; a bounded wait longer than the hold locks too.
  std::atomic<bool> started{false};
  auto waiter = std::async(std::launch::async, [&] {
    auto c = dblock::open(url());
    lock_outcome out{};
    transact(c, [&](transaction_ref tx) {
      started = true;
      out = lock_row(tx, t, "id", std::int64_t{1}, {lock_wait::bounded, 20s}).outcome;
      // After a bounded wait that locked, the session's own timeout is back too.
      if (c.kind() == dialect::postgresql)
        EXPECT_EQ(raw_query(c, "SELECT current_setting('lock_timeout')").rows.at(0).at(0).value_or("?"), "0");
      else
        EXPECT_EQ(query_int(c, "SELECT @@SESSION.innodb_lock_wait_timeout"), 50);
    });
    return out;
  });
  while (!started) std::this_thread::yield();
  h.release();
  EXPECT_EQ(waiter.get(), lock_outcome::locked);
}

TEST_P(RowGuardConformance, LockRowNeedsATransactionAndANonNullKey) {
  auto db = open_unmigrated();
  const auto orders = orders_table(db);
  const auto before = db.round_trips();
  // Outside a transaction a row lock would be released at once: refused.
  EXPECT_THROW((void)lock_row(detail::make_transaction_ref(db), orders, "order_no", "x"), invalid_argument);
  transact(db, [&](transaction_ref tx) {
    EXPECT_THROW((void)lock_row(tx, orders, "order_no", nullptr), invalid_argument);
    EXPECT_THROW((void)insert_or_lock(tx, orders, "order_no", nullptr), invalid_argument);
  });
  EXPECT_EQ(db.round_trips() - before, 2u);  // BEGIN and COMMIT only
}

// --- retry ----------------------------------------------------------------------------

// SQLite has no row locks: BEGIN IMMEDIATE serializes the two transactions, so the same
// scenario cannot deadlock there. Asserted instead: the second transaction never gets its
// first row while the first is still inside (it is given 300 ms to), no deadlock is seen,
// each transaction commits on its first attempt, and both increments are there.
TEST_P(RowGuardConformance, RetryTransactionRecoversFromAProvokedDeadlock) {
  const bool sqlite = kind() == dialect::sqlite;
  auto db = open_unmigrated();
  const auto t = make_table(db, "dl", "id BIGINT NOT NULL PRIMARY KEY, n BIGINT NOT NULL");
  raw_query(db, "INSERT INTO " + t + " (id, n) VALUES (1, 0)");
  raw_query(db, "INSERT INTO " + t + " (id, n) VALUES (2, 0)");
  std::atomic<int> first_locks{0};
  std::atomic<int> deadlocks_seen{0};
  std::atomic<int> inside{0}, max_inside{0};  // transactions past their first lock_row at once
  std::vector<retry_result> results(2);
  std::vector<std::string> errors(2);
  retry_policy policy;
  policy.max_attempts = 5;
  policy.on_retry = [&](int, const error& e, milliseconds) {
    if (e.kind() == error_kind::deadlock) ++deadlocks_seen;
  };
  on_threads(2, [&](int i) {
    auto c = dblock::open(url());
    const std::int64_t first = i == 0 ? 1 : 2, second = i == 0 ? 2 : 1;
    int attempt = 0;
    try {
      results[static_cast<std::size_t>(i)] = retry_transaction(c, [&](transaction_ref tx) {
        ++attempt;
        EXPECT_EQ(lock_row(tx, t, "id", first).outcome, lock_outcome::locked);
        const int now_inside = ++inside;
        struct leave {
          std::atomic<int>& n;
          ~leave() { --n; }
        } leaving{inside};  // also when lock_row throws (the deadlock victim)
        for (int m = max_inside.load(); now_inside > m && !max_inside.compare_exchange_weak(m, now_inside);) {
        }
        if (attempt == 1) {
          // Both hold their first row before either asks for its second: a certain deadlock.
          // (SQLite: the other one cannot get in; give it 300 ms to prove it.)
          ++first_locks;
          const auto until = clock_type::now() + (sqlite ? milliseconds(300) : milliseconds(10s));
          while (first_locks.load() < 2 && clock_type::now() < until) std::this_thread::yield();
        }
        EXPECT_EQ(lock_row(tx, t, "id", second).outcome, lock_outcome::locked);
        raw_query(c, "UPDATE " + t + " SET n = n + 1 WHERE id IN (1, 2)");
      }, policy);
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(i)] = e.what();
    }
  });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  if (sqlite) {
    EXPECT_EQ(max_inside.load(), 1) << "two SQLite write transactions held rows at once";
    EXPECT_EQ(deadlocks_seen.load(), 0);
    EXPECT_EQ(results[0].attempts, 1);
    EXPECT_EQ(results[1].attempts, 1);
  } else {
    EXPECT_EQ(max_inside.load(), 2);  // both held their first row: the deadlock was set up
    EXPECT_GE(deadlocks_seen.load(), 1);
    EXPECT_GE(results[0].attempts + results[1].attempts, 3);
  }
  EXPECT_EQ(query_int(db, "SELECT SUM(n) FROM " + t), 4);  // both transactions committed once
}

TEST_P(RowGuardConformance, RetryGivesUpAfterMaxAttemptsWithTheLastError) {
  auto db = open_unmigrated();
  int calls = 0;
  retry_policy p;
  p.max_attempts = 3;
  p.initial_backoff = 1ms;
  EXPECT_THROW(retry_transaction(db, [&](transaction_ref) {
    ++calls;
    throw serialization_failure("provoked", "40001");
  }, p), serialization_failure);
  EXPECT_EQ(calls, 3);
  calls = 0;
  EXPECT_THROW(retry_transaction(db, [&](transaction_ref) {
    ++calls;
    throw commit_unknown("provoked");
  }, p), commit_unknown);
  EXPECT_EQ(calls, 1);  // never retried
}

// --- optimistic -----------------------------------------------------------------------

TEST_P(RowGuardConformance, EightThreadsTimesTwoHundredOptimisticIncrementsLoseNothing) {
  auto db = open_unmigrated();
  const auto t = make_table(db, "ctr", "id BIGINT NOT NULL PRIMARY KEY, n BIGINT NOT NULL, version BIGINT NOT NULL");
  raw_query(db, "INSERT INTO " + t + " (id, n, version) VALUES (1, 0, 0)");
  constexpr int threads = 8, increments = 200;
  std::atomic<int> conflicts{0}, attempts{0}, failures{0};
  std::vector<database> conns;
  for (int i = 0; i < threads; ++i) conns.push_back(dblock::open(url()));
  const versioned_table vt{t, "id", "version"};
  retry_policy p;
  p.max_attempts = 100'000;
  p.initial_backoff = 1ms;
  p.max_backoff = 16ms;
  on_threads(threads, [&](int i) {
    auto& c = conns[static_cast<std::size_t>(i)];
    for (int k = 0; k < increments; ++k) {
      try {
        auto r = optimistic_update(c, vt, std::int64_t{1}, {"n"}, [](const versioned_row& row) {
          return std::vector<value>{std::stoll(row.values.at(0).value()) + 1};
        }, p);
        if (!r) ++failures;
        conflicts += r.conflicts;
        attempts += r.attempts;
      } catch (const std::exception&) {
        ++failures;
      }
    }
  });
  std::cout << "[ optimistic ] " << threads * increments << " increments, " << conflicts.load()
            << " version conflicts retried\n";
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(query_int(db, "SELECT n FROM " + t + " WHERE id = 1"), threads * increments);
  EXPECT_EQ(query_int(db, "SELECT version FROM " + t + " WHERE id = 1"), threads * increments);
  EXPECT_EQ(attempts.load(), threads * increments + conflicts.load());
}

TEST_P(RowGuardConformance, UpdateIfVersionAppliesOnceThenConflicts) {
  auto db = open_unmigrated();
  const auto t = make_table(db, "v", "id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(64), qty BIGINT, version BIGINT NOT NULL");
  raw_query(db, "INSERT INTO " + t + " (id, name, qty, version) VALUES (7, 'old', 1, 3)");
  const versioned_table vt{t, "id", "version"};
  auto row = read_versioned(db, vt, std::int64_t{7}, {"name", "qty"});
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->version, 3);
  EXPECT_EQ(row->values.at(0).value_or(""), "old");
  EXPECT_EQ(row->values.at(1).value_or(""), "1");
  auto u = update_if_version(db, vt, std::int64_t{7}, 3, {{"name", "new"}, {"qty", nullptr}});
  EXPECT_TRUE(u.applied);
  EXPECT_EQ(u.version, 4);
  EXPECT_FALSE(update_if_version(db, vt, std::int64_t{7}, 3, {{"name", "lost"}}).applied);
  EXPECT_FALSE(update_if_version(db, vt, std::int64_t{8}, 4, {{"name", "nobody"}}).applied);
  row = read_versioned(db, vt, std::int64_t{7}, {"name", "qty"});
  EXPECT_EQ(row->values.at(0).value_or(""), "new");
  EXPECT_FALSE(row->values.at(1).has_value());
  EXPECT_FALSE(read_versioned(db, vt, std::int64_t{8}).has_value());
  // Declined and not found are values too; inside a transaction works the same.
  auto d = optimistic_update(db, vt, std::int64_t{7}, {"qty"}, [](const versioned_row&) { return std::nullopt; });
  EXPECT_EQ(d.outcome, optimistic_outcome::declined);
  auto nf = optimistic_update(db, vt, std::int64_t{8}, {"qty"}, [](const versioned_row&) { return std::vector<value>{1}; });
  EXPECT_EQ(nf.outcome, optimistic_outcome::not_found);
  transact(db, [&](transaction_ref tx) {
    EXPECT_TRUE(update_if_version(tx, vt, std::int64_t{7}, 4, {{"qty", std::int64_t{9}}}).applied);
  });
  EXPECT_EQ(query_int(db, "SELECT qty FROM " + t + " WHERE id = 7"), 9);
}

// --- fenced writes --------------------------------------------------------------------

TEST_P(RowGuardConformance, FencedWriteRejectsAnOlderToken) {
  auto db = open_unmigrated();
  const auto t = make_table(db, "fw", "id BIGINT NOT NULL PRIMARY KEY, owner VARCHAR(64), fence BIGINT");
  raw_query(db, "INSERT INTO " + t + " (id, owner) VALUES (1, 'nobody')");
  const fenced_table ft{t, "id", "fence"};
  EXPECT_TRUE(fenced_write(db, ft, std::int64_t{1}, 5, {{"owner", "five"}}).applied);   // NULL fence: first writer
  EXPECT_TRUE(fenced_write(db, ft, std::int64_t{1}, 7, {{"owner", "seven"}}).applied);  // larger token
  EXPECT_FALSE(fenced_write(db, ft, std::int64_t{1}, 5, {{"owner", "five again"}}).applied);  // stale
  EXPECT_TRUE(fenced_write(db, ft, std::int64_t{1}, 7, {{"owner", "seven"}}).applied);  // same holder, same values
  EXPECT_FALSE(fenced_write(db, ft, std::int64_t{2}, 9, {{"owner", "ghost"}}).applied);  // no such row
  auto r = raw_query(db, "SELECT owner, fence FROM " + t + " WHERE id = 1");
  EXPECT_EQ(r.rows.at(0).at(0).value_or(""), "seven");
  EXPECT_EQ(r.rows.at(0).at(1).value_or(""), "7");
}

// Holder A pauses past its TTL (its session, and so its watchdog, is gone), B takes the
// lease over with a larger token and writes; A's late write is rejected by the row.
TEST_P(RowGuardConformance, StaleLeaseHolderLateWriteIsRejectedByTheFence) {
  auto db_a = open();
  auto db_b = open();
  const auto t = make_table(db_a, "res", "id BIGINT NOT NULL PRIMARY KEY, data VARCHAR(64), fence BIGINT");
  raw_query(db_a, "INSERT INTO " + t + " (id, data) VALUES (1, 'initial')");
  const fenced_table ft{t, "id", "fence"};
  const auto name = unique_name("fenced");
  session_options quick;
  quick.ttl = 500ms;
  std::optional<lease> a_lease;
  std::int64_t a_token = 0;
  {
    auto a = std::make_unique<session>(db_a, quick);
    a_lease = a->try_acquire(name);
    ASSERT_TRUE(a_lease.has_value());
    a_token = a_lease->fence();
    EXPECT_TRUE(fenced_write(db_a, ft, std::int64_t{1}, a_token, {{"data", "written by A"}}).applied);
    a.reset();  // A "pauses": nothing renews its lease any more
  }
  session b(db_b, quick);
  auto b_lease = b.acquire(name, 10s);  // waits until A's lease expired by the server's clock
  EXPECT_GT(b_lease.fence(), a_token);
  EXPECT_TRUE(fenced_write(db_b, ft, std::int64_t{1}, b_lease.fence(), {{"data", "written by B"}}).applied);
  // A wakes up and writes with the token it had: refused by the resource itself.
  EXPECT_FALSE(fenced_write(db_a, ft, std::int64_t{1}, a_token, {{"data", "late write by A"}}).applied);
  auto r = raw_query(db_b, "SELECT data FROM " + t + " WHERE id = 1");
  EXPECT_EQ(r.rows.at(0).at(0).value_or(""), "written by B");
}

// --- identifiers ----------------------------------------------------------------------

TEST_P(RowGuardConformance, IdentifierInjectionIsRefusedAndNothingRuns) {
  auto db = open_unmigrated();
  const auto orders = orders_table(db);
  const std::vector<std::string> bad = {orders + "; DROP TABLE " + orders, "x\" OR 1=1 --", "a`b", "", "1abc",
                                        "a.b.c", std::string(64, 'a'), "orders where 1=1"};
  const versioned_table good_vt{orders, "order_no", "amount"};
  for (const auto& b : bad) {
    std::uint64_t trips = 0;
    transact(db, [&](transaction_ref tx) {
      trips = round_trips_of(db, [&] {
        EXPECT_THROW((void)lock_row(tx, b, "order_no", "k"), invalid_argument) << b;
        EXPECT_THROW((void)lock_row(tx, orders, b, "k", {lock_wait::bounded, 100ms}), invalid_argument) << b;
        EXPECT_THROW((void)insert_or_lock(tx, b, "order_no", "k"), invalid_argument) << b;
        EXPECT_THROW((void)insert_or_lock(tx, orders, "order_no", "k", {{b, "v"}}), invalid_argument) << b;
        EXPECT_THROW((void)update_if_version(tx, {orders, "order_no", b}, "k", 1, {{"customer", "v"}}), invalid_argument) << b;
        EXPECT_THROW((void)update_if_version(tx, good_vt, "k", 1, {{b, "v"}}), invalid_argument) << b;
        EXPECT_THROW((void)fenced_write(tx, {b, "order_no", "amount"}, "k", 1, {{"customer", "v"}}), invalid_argument) << b;
        EXPECT_THROW((void)read_versioned(tx, good_vt, "k", {b}), invalid_argument) << b;
      });
    });
    EXPECT_EQ(trips, 0u) << "a statement ran for identifier " << b;
  }
  // Misuse of column lists is refused the same way.
  transact(db, [&](transaction_ref tx) {
    EXPECT_THROW((void)insert_or_lock(tx, orders, "order_no", "k", {{"customer", "a"}, {"customer", "b"}}), invalid_argument);
    EXPECT_THROW((void)insert_or_lock(tx, orders, "order_no", "k", {{"order_no", "a"}}), invalid_argument);
    EXPECT_THROW((void)update_if_version(tx, good_vt, "k", 1, {}), invalid_argument);
    EXPECT_THROW((void)update_if_version(tx, good_vt, "k", 1, {{"amount", std::int64_t{1}}}), invalid_argument);
    EXPECT_THROW((void)update_if_version(tx, good_vt, "k", 1,
                                         {{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}}),
                 invalid_argument);
  });
  EXPECT_TRUE(table_exists(db, orders));
  // Column names differing only in case: one column twice on MySQL/MariaDB and SQLite
  // (refused before anything runs); two columns on PostgreSQL, where dblock's quoted names
  // are case-sensitive (the server then answers that "CUSTOMER" does not exist).
  if (db.kind() == dialect::postgresql) {
    EXPECT_THROW(transact(db,
                          [&](transaction_ref tx) {
                            (void)insert_or_lock(tx, orders, "order_no", "k", {{"customer", "a"}, {"CUSTOMER", "b"}});
                          }),
                 database_error);
  } else {
    transact(db, [&](transaction_ref tx) {
      const auto before = tx.round_trips();
      EXPECT_THROW((void)insert_or_lock(tx, orders, "order_no", "k", {{"customer", "a"}, {"CUSTOMER", "b"}}),
                   invalid_argument);
      EXPECT_THROW((void)insert_or_lock(tx, orders, "order_no", "k", {{"Order_No", "a"}}), invalid_argument);
      EXPECT_EQ(tx.round_trips() - before, 0u);
    });
  }
  // A value is never SQL: a key that looks like injection is just a key.
  transact(db, [&](transaction_ref tx) {
    const std::string evil = "x'; DROP TABLE t; --";
    EXPECT_TRUE(insert_or_lock(tx, orders, "order_no", evil, {{"customer", "' OR '1'='1"}}).inserted());
    EXPECT_EQ(lock_row(tx, orders, "order_no", evil).outcome, lock_outcome::locked);
  });
  EXPECT_TRUE(table_exists(db, orders));
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM " + orders), 1);
}

DBLOCK_CONFORMANCE_SUITE(RowGuardConformance);

}  // namespace
}  // namespace dblock::test
