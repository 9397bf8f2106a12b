// tests/conformance/idempotency_test.cpp — the idempotency-key store (dblock/idempotency.hpp)
// on all seven combinations: duplicate storm across threads and processes (side effect
// counted), takeover after a lapsed lease with attempt N+1 and the recovery point, a
// crashed worker process taken over, the stale worker's late writes rejected, byte-exact
// binary replay, mismatch on every path, run_once commit / rollback / killed before commit /
// concurrent duplicate, bounded waiting, bad input refused with nothing written, expiry,
// operators' get/list, and round trips per operation.
//
// Worker processes re-run this test binary with --gtest_filter=IdempotencyChild.* and an
// environment describing the role (see child_main below).
#include <cppconn/connection.h>
#include <cppconn/driver.h>
#include <cppconn/statement.h>
#include <fcntl.h>
#include <signal.h>
#include <soci/mysql/soci-mysql.h>
#include <soci/postgresql/soci-postgresql.h>
#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>
#include <unistd.h>

#include <pqxx/pqxx>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <latch>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "conformance/fixture.hpp"
#include "core/idempotency_detail.hpp"
#include "dblock/idempotency.hpp"
#include "dblock/mysql.hpp"
#include "dblock/pqxx.hpp"
#include "dblock/soci.hpp"
#include "support/process.hpp"

namespace dblock::test {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using clock_type = std::chrono::steady_clock;

constexpr const char* role_env = "DBLOCK_IDEM_CHILD_ROLE";
constexpr const char* url_env = "DBLOCK_IDEM_CHILD_URL";
constexpr const char* scope_env = "DBLOCK_IDEM_CHILD_SCOPE";
constexpr const char* key_env = "DBLOCK_IDEM_CHILD_KEY";
constexpr const char* table_env = "DBLOCK_IDEM_CHILD_TABLE";
constexpr const char* out_env = "DBLOCK_IDEM_CHILD_OUT";

// Raw test SQL from outside a conformance test (the child processes).
struct sql_access : conformance {
  using conformance::query_int;
  using conformance::raw_exec;
  using conformance::raw_query;
  void TestBody() override {}
};

idempotency_options opts(milliseconds lease = 30s, milliseconds wait = 0ms) {
  idempotency_options o;
  o.lease = lease;
  o.wait = wait;
  return o;
}

// Every byte value, NULs, 0xFF, invalid UTF-8 and a stray quote/backslash.
std::string binary_body() {
  std::string b;
  for (int i = 0; i < 256; ++i) b += static_cast<char>(i);
  b += std::string("\0\0\xff\xfe\xc3\x28\xa0\xa1\xe2\x28\xa1'\\\"", 15);
  b += std::string("\0", 1);
  return b;
}

void append_line(const std::string& path, const std::string& line) {
  // O_APPEND: lines from several threads and processes never interleave.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd < 0) return;
  std::string l = line + "\n";
  [[maybe_unused]] auto n = ::write(fd, l.data(), l.size());
  ::close(fd);
}

std::vector<std::string> read_lines(const std::filesystem::path& p) {
  std::vector<std::string> out;
  std::ifstream in(p);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

const char* env_or_empty(const char* n) {
  const char* v = std::getenv(n);
  return v ? v : "";
}

class IdempotencyConformance : public conformance {
 protected:
  std::int64_t record_count(database& db, const std::string& scope) {
    return query_int(db, "SELECT COUNT(*) FROM dblock_idempotency WHERE scope = $1", {scope});
  }
  // A business table of this test: (k, v).
  std::string make_table(database& db, std::string_view stem) {
    auto t = unique_name(stem);
    raw_exec(db, "CREATE TABLE " + t + " (k VARCHAR(200) NOT NULL, v INTEGER NOT NULL)");
    tables_.push_back(t);
    return t;
  }
  std::int64_t rows_for(database& db, const std::string& table, const std::string& k) {
    return query_int(db, "SELECT COUNT(*) FROM " + table + " WHERE k = $1", {k});
  }
  void TearDown() override {
    if (!tables_.empty() && !HasFatalFailure()) {
      try {
        auto db = open_unmigrated();
        for (const auto& t : tables_) raw_exec(db, "DROP TABLE " + t);
      } catch (...) {
        // a leftover test table in a throwaway database is harmless
      }
    }
    conformance::TearDown();
  }

  // Starts this test binary as a worker process (see child_main).
  child start_child(const std::string& role, const std::string& scope, const std::string& key,
                    const std::string& table, const std::filesystem::path& out, start_barrier* gate = nullptr) {
    process_options o;
    o.argv = {std::filesystem::read_symlink("/proc/self/exe").string(),
              "--gtest_filter=IdempotencyChild.DISABLED_Worker", "--gtest_also_run_disabled_tests"};
    o.env[role_env] = role;
    o.env[url_env] = url();
    o.env[scope_env] = scope;
    o.env[key_env] = key;
    o.env[table_env] = table;
    o.env[out_env] = out.string();
    o.timeout = 90s;
    return start_process(o, gate);
  }

  std::vector<std::string> tables_;
};

// ---------------------------------------------------------------------------------------
// Outcomes, responses, round trips

TEST_P(IdempotencyConformance, NewKeyStartsCompleteRecordsAndDuplicatesReplay) {
  auto db = open();
  idempotency_store s(db);
  const auto scope = unique_name("s");
  const auto fp = fingerprint_fields({{"amount", "1000"}, {"currency", "EUR"}});

  auto r = s.begin(scope, "order-1", fp);
  ASSERT_EQ(r.outcome, idempotency_outcome::started);
  EXPECT_EQ(r.attempt.number, 1);
  EXPECT_EQ(r.attempt.owner.size(), 32u);
  EXPECT_FALSE(r.recovery_point);

  auto dup = s.begin(scope, "order-1", fp);
  EXPECT_EQ(dup.outcome, idempotency_outcome::in_progress);
  EXPECT_GT(dup.retry_after, 25s);
  EXPECT_LE(dup.retry_after, 30s);
  EXPECT_TRUE(dup.attempt.owner.empty());

  EXPECT_EQ(s.complete(r.attempt, {201, R"({"id":"pay_1","amount":1000})"}), finish_status::recorded);
  for (int i = 0; i < 3; ++i) {
    auto rep = s.begin(scope, "order-1", fp);
    ASSERT_EQ(rep.outcome, idempotency_outcome::replay);
    EXPECT_EQ(rep.response.code, 201);
    EXPECT_EQ(rep.response.body, R"({"id":"pay_1","amount":1000})");
    EXPECT_FALSE(rep.failed);
    EXPECT_EQ(rep.attempt.number, 1);
  }
  // A finished attempt cannot be finished again.
  EXPECT_EQ(s.complete(r.attempt, {500, "again"}), finish_status::not_owner);
  EXPECT_EQ(s.begin(scope, "order-1", fp).response.code, 201);
  // Keys are per scope, and byte-exact (case matters).
  EXPECT_EQ(s.begin(scope, "ORDER-1", fp).outcome, idempotency_outcome::started);
  EXPECT_EQ(s.begin(scope + "x", "order-1", fp).outcome, idempotency_outcome::started);
  EXPECT_EQ(record_count(db, scope), 2);
}

TEST_P(IdempotencyConformance, RoundTripsPerOperation) {
  auto db = open();
  idempotency_store s(db);
  const auto scope = unique_name("rt");
  const auto fp = fingerprint("request");
  // Warm-up on other keys: the Connector/C++ driver prepares each statement once per connection.
  {
    auto w = s.begin(scope, "warm", fp);
    ASSERT_TRUE(w.started());
    (void)s.checkpoint(w.attempt, "p");
    (void)s.complete(w.attempt, {200, "w"});
    auto w2 = s.begin(scope, "warm2", fp);
    (void)s.fail(w2.attempt, failure_kind::retryable);
    auto w3 = s.begin(scope, "warm2", fp);
    (void)s.fail(w3.attempt, failure_kind::terminal, {500, "x"});
    (void)s.get(scope, "warm");
    (void)s.list({});
  }
  // A claim is one statement (MySQL 8.0 too: a stored function reads, upserts and reads back),
  // with one exception: SQLite reads before it claims (idem_peek.sql, in process): two when
  // the claim writes (a new key), one when it does not (in progress, replay, mismatch).
  const std::uint64_t claim = 1u;
  const std::uint64_t writing_claim = kind() == dialect::sqlite ? 2u : claim;
  std::optional<begin_result> r;
  EXPECT_EQ(round_trips_of(db, [&] { r = s.begin(scope, "k", fp); }), writing_claim) << "new key";
  ASSERT_TRUE(r && r->started());
  EXPECT_EQ(round_trips_of(db, [&] { (void)s.begin(scope, "k", fp); }), claim) << "in progress";
  EXPECT_EQ(round_trips_of(db, [&] { (void)s.checkpoint(r->attempt, "charged"); }), 1u) << "checkpoint";
  EXPECT_EQ(round_trips_of(db, [&] { (void)s.extend(r->attempt); }), 1u) << "extend";
  EXPECT_EQ(round_trips_of(db, [&] { (void)s.complete(r->attempt, {200, "ok"}); }), 1u) << "complete";
  EXPECT_EQ(round_trips_of(db, [&] { (void)s.begin(scope, "k", fp); }), claim) << "replay";
  EXPECT_EQ(round_trips_of(db, [&] { (void)s.begin(scope, "k", fingerprint("other")); }), claim) << "mismatch";
  EXPECT_EQ(round_trips_of(db, [&] { (void)s.get(scope, "k"); }), 1u) << "get";
  // Refused input costs nothing.
  EXPECT_EQ(round_trips_of(db, [&] { EXPECT_THROW((void)s.begin(scope, "", fp), invalid_argument); }), 0u);
  // run_once inside a transaction: claim + record, plus fn's own statements; replay = 1.
  std::uint64_t inside = 0;
  transact(db, [&](transaction_ref tx) {
    const auto before = tx.round_trips();
    auto ro = s.run_once(tx, scope, "ro", fp, [](transaction_ref) { return idempotent_response{200, "ro"}; });
    inside = tx.round_trips() - before;
    EXPECT_EQ(ro.outcome, idempotency_outcome::started);
  });
  EXPECT_EQ(inside, writing_claim + 1) << "run_once that runs fn";
  transact(db, [&](transaction_ref tx) {
    const auto before = tx.round_trips();
    auto ro = s.run_once(tx, scope, "ro", fp, [](transaction_ref) { return idempotent_response{500, "no"}; });
    inside = tx.round_trips() - before;
    EXPECT_EQ(ro.outcome, idempotency_outcome::replay);
  });
  EXPECT_EQ(inside, claim) << "run_once replay";
}

// Not a timing claim (bench/ owns targets): prints the cost of a new key and a replay next
// to a raw INSERT and a raw SELECT by primary key on the same connection, for the record.
TEST_P(IdempotencyConformance, CostNextToRawInsertAndSelect) {
  auto db = open();
  idempotency_store s(db);
  const auto scope = unique_name("cost");
  const auto table = unique_name("raw");
  raw_exec(db, "CREATE TABLE " + table + " (k VARCHAR(200) NOT NULL PRIMARY KEY, v INTEGER NOT NULL)");
  tables_.push_back(table);
  const auto fp = fingerprint("cost");
  const int n = 100;
  // Warm-up (prepares, caches).
  raw_query(db, "INSERT INTO " + table + " (k, v) VALUES ($1, $2)", {std::string("warm"), std::int64_t{1}});
  (void)query_int(db, "SELECT v FROM " + table + " WHERE k = $1", {std::string("warm")});
  (void)s.complete(s.begin(scope, "warm", fp).attempt, {200, "w"});
  (void)s.begin(scope, "warm", fp);
  auto time_of = [&](const std::function<void(int)>& op) {
    const auto t0 = clock_type::now();
    for (int i = 0; i < n; ++i) op(i);
    return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count() / n;
  };
  const double raw_insert = time_of([&](int i) {
    raw_query(db, "INSERT INTO " + table + " (k, v) VALUES ($1, $2)", {"k" + std::to_string(i), std::int64_t{i}});
  });
  const double raw_select = time_of([&](int i) {
    (void)query_int(db, "SELECT v FROM " + table + " WHERE k = $1", {"k" + std::to_string(i)});
  });
  std::vector<idempotency_attempt> started;
  const double new_key = time_of([&](int i) { started.push_back(s.begin(scope, "k" + std::to_string(i), fp).attempt); });
  for (auto& a : started) (void)s.complete(a, {200, "body"});
  const double replay = time_of([&](int i) {
    auto r = s.begin(scope, "k" + std::to_string(i), fp);
    EXPECT_EQ(r.outcome, idempotency_outcome::replay);
  });
  std::printf("[cost %s] per op, n=%d: raw INSERT %.0f us, raw SELECT %.0f us, begin(new key) %.0f us (%.2fx), "
              "begin(replay) %.0f us (%.2fx)\n",
              combo().name, n, raw_insert, raw_select, new_key, new_key / raw_insert, replay, replay / raw_select);
  RecordProperty("raw_insert_us", static_cast<int>(raw_insert));
  RecordProperty("raw_select_us", static_cast<int>(raw_select));
  RecordProperty("begin_new_us", static_cast<int>(new_key));
  RecordProperty("begin_replay_us", static_cast<int>(replay));
}

TEST_P(IdempotencyConformance, BinaryBodiesReplayByteExact) {
  auto db = open();
  idempotency_store s(db);
  const auto scope = unique_name("bin");
  const auto fp = fingerprint("bin");
  std::string big(s.options().max_body_bytes, '\0');  // exactly at the limit (1 MiB)
  std::uint32_t x = 2463534242u;
  for (auto& c : big) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x & 0xff);
  }
  const std::map<std::string, std::string> bodies = {
      {"all-bytes", binary_body()}, {"empty", std::string()}, {"nul", std::string(1, '\0')}, {"big", big}};
  for (const auto& [key, body] : bodies) {
    auto r = s.begin(scope, key, fp);
    ASSERT_TRUE(r.started()) << key;
    ASSERT_EQ(s.complete(r.attempt, {200, body}), finish_status::recorded) << key;
  }
  for (const auto& [key, body] : bodies) {
    auto rep = s.begin(scope, key, fp);
    ASSERT_EQ(rep.outcome, idempotency_outcome::replay) << key;
    EXPECT_EQ(rep.response.body.size(), body.size()) << key;
    EXPECT_TRUE(rep.response.body == body) << key << ": body differs";
    auto rec = s.get(scope, key);
    ASSERT_TRUE(rec) << key;
    ASSERT_TRUE(rec->response_body) << key;
    EXPECT_TRUE(*rec->response_body == body) << key;
    EXPECT_EQ(rec->body_bytes, body.size()) << key;
  }
  // A failure body is byte-exact too.
  auto f = s.begin(scope, "failed", fp);
  ASSERT_TRUE(f.started());
  ASSERT_EQ(s.fail(f.attempt, failure_kind::terminal, {402, binary_body()}), finish_status::recorded);
  auto rep = s.begin(scope, "failed", fp);
  EXPECT_EQ(rep.outcome, idempotency_outcome::replay);
  EXPECT_TRUE(rep.failed);
  EXPECT_EQ(rep.response.code, 402);
  EXPECT_TRUE(rep.response.body == binary_body());
}

// ---------------------------------------------------------------------------------------
// Mismatch on every path

TEST_P(IdempotencyConformance, MismatchOnEveryPath) {
  auto db = open();
  auto other_db = open();
  const auto scope = unique_name("mm");
  const auto fp1 = fingerprint_fields({{"amount", "1000"}});
  const auto fp2 = fingerprint_fields({{"amount", "9999"}});
  idempotency_store s(db);

  // 1. Live in-progress attempt: mismatch, not in_progress.
  auto a = s.begin(scope, "live", fp1);
  ASSERT_TRUE(a.started());
  EXPECT_EQ(s.begin(scope, "live", fp2).outcome, idempotency_outcome::mismatch);
  // 2. The waiting path returns mismatch at once instead of waiting.
  {
    idempotency_store waiting(other_db, opts(30s, 5s));
    const auto t0 = clock_type::now();
    EXPECT_EQ(waiting.begin(scope, "live", fp2).outcome, idempotency_outcome::mismatch);
    EXPECT_LT(clock_type::now() - t0, 2s);
  }
  // 3. A lapsed lease is not taken over by a different request.
  idempotency_store short_lease(db, opts(1ms));
  auto l = short_lease.begin(scope, "lapsed", fp1);
  ASSERT_TRUE(l.started());
  std::this_thread::sleep_for(20ms);  // let the server's clock pass the 1 ms lease
  EXPECT_EQ(short_lease.begin(scope, "lapsed", fp2).outcome, idempotency_outcome::mismatch);
  auto l2 = short_lease.begin(scope, "lapsed", fp1);
  EXPECT_EQ(l2.outcome, idempotency_outcome::started);
  EXPECT_EQ(l2.attempt.number, 2);
  // 4. A reopened key (retryable failure) is not taken over by a different request.
  auto o = s.begin(scope, "reopened", fp1);
  ASSERT_EQ(s.fail(o.attempt, failure_kind::retryable), finish_status::recorded);
  EXPECT_EQ(s.begin(scope, "reopened", fp2).outcome, idempotency_outcome::mismatch);
  // 5. Completed and failed records: mismatch, and no stored response leaks out.
  ASSERT_EQ(s.complete(a.attempt, {201, "secret"}), finish_status::recorded);
  auto m = s.begin(scope, "live", fp2);
  EXPECT_EQ(m.outcome, idempotency_outcome::mismatch);
  EXPECT_EQ(m.response.code, 0);
  EXPECT_TRUE(m.response.body.empty());
  auto f = s.begin(scope, "failed", fp1);
  ASSERT_EQ(s.fail(f.attempt, failure_kind::terminal, {402, "declined"}), finish_status::recorded);
  EXPECT_EQ(s.begin(scope, "failed", fp2).outcome, idempotency_outcome::mismatch);
  // 6. run_once's claim checks it too, and fn does not run.
  int ran = 0;
  transact(db, [&](transaction_ref tx) {
    auto r = s.run_once(tx, scope, "live", fp2, [&](transaction_ref) {
      ++ran;
      return idempotent_response{200, "x"};
    });
    EXPECT_EQ(r.outcome, idempotency_outcome::mismatch);
    EXPECT_TRUE(r.response.body.empty());
  });
  EXPECT_EQ(ran, 0);
  // 7. Finishing with an attempt whose fingerprint was altered matches nothing.
  auto g = s.begin(scope, "fenced", fp1);
  auto forged = g.attempt;
  forged.fingerprint = fp2;
  EXPECT_EQ(s.complete(forged, {200, "forged"}), finish_status::not_owner);
  EXPECT_EQ(s.complete(g.attempt, {200, "real"}), finish_status::recorded);
  EXPECT_EQ(s.begin(scope, "fenced", fp1).response.body, "real");
  // Fingerprints compare case-insensitively as hex (normalized).
  std::string upper = fp1;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(s.begin(scope, "live", upper).outcome, idempotency_outcome::replay);
}

// ---------------------------------------------------------------------------------------
// Leases, takeover, recovery points, stale workers, failures

TEST_P(IdempotencyConformance, TakeoverAfterLeaseLapsesWithAttemptTwoAndRecoveryPoint) {
  auto db_a = open();
  auto db_b = open();
  const auto scope = unique_name("to");
  const auto fp = fingerprint("charge 10 EUR");
  idempotency_store a_store(db_a, opts(300ms));
  idempotency_store b_store(db_b, opts(300ms, 10s));  // waits for the lease to lapse

  auto a = a_store.begin(scope, "pay", fp);
  ASSERT_TRUE(a.started());
  ASSERT_EQ(a_store.checkpoint(a.attempt, "card_charged"), finish_status::recorded);

  auto b = b_store.begin(scope, "pay", fp);  // in progress until A's lease lapses, then ours
  ASSERT_EQ(b.outcome, idempotency_outcome::started);
  EXPECT_EQ(b.attempt.number, 2);
  ASSERT_TRUE(b.recovery_point);
  EXPECT_EQ(*b.recovery_point, "card_charged");
  EXPECT_NE(b.attempt.owner, a.attempt.owner);

  // The stale worker wakes up: every write of attempt 1 is rejected.
  EXPECT_EQ(a_store.checkpoint(a.attempt, "receipt_sent"), finish_status::not_owner);
  EXPECT_EQ(a_store.extend(a.attempt), finish_status::not_owner);
  EXPECT_EQ(a_store.complete(a.attempt, {200, "from A"}), finish_status::not_owner);
  EXPECT_EQ(a_store.fail(a.attempt, failure_kind::retryable), finish_status::not_owner);
  EXPECT_EQ(a_store.fail(a.attempt, failure_kind::terminal, {500, "A"}), finish_status::not_owner);

  auto rec = a_store.get(scope, "pay");
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->status, idempotency_status::in_progress);
  EXPECT_EQ(rec->attempt, 2);
  EXPECT_EQ(rec->recovery_point, std::optional<std::string>("card_charged"));

  ASSERT_EQ(b_store.checkpoint(b.attempt, "receipt_sent"), finish_status::recorded);
  ASSERT_EQ(b_store.complete(b.attempt, {201, "from B"}), finish_status::recorded);
  EXPECT_EQ(a_store.complete(a.attempt, {200, "from A"}), finish_status::not_owner);
  auto rep = a_store.begin(scope, "pay", fp);
  ASSERT_EQ(rep.outcome, idempotency_outcome::replay);
  EXPECT_EQ(rep.response, (idempotent_response{201, "from B"}));
  EXPECT_EQ(rep.attempt.number, 2);
}

// Many claims of one attempt whose lease lapsed, at once: exactly one takes it over. Outside
// a transaction (begin) the others see it in progress; inside their own transactions
// (run_once) the others wait for the winner's commit and replay its answer. No claim fails:
// none is chosen as a deadlock victim (on MySQL 8.0 a takeover must not run under the shared
// lock an insert's duplicate check leaves, which inside a transaction lasts until commit).
TEST_P(IdempotencyConformance, ConcurrentTakeoversOfALapsedAttemptStartOneAndNeverDeadlock) {
  auto db = open();
  const auto scope = unique_name("cto");
  const auto fp = fingerprint("refund 3 EUR");
  const int threads = kind() == dialect::sqlite ? 4 : 12;
  std::vector<database> dbs;
  for (int t = 0; t < threads; ++t) dbs.push_back(open());
  idempotency_store short_lease(db, opts(1ms));
  for (int round = 0; round < 3; ++round) {
    for (const bool in_transaction : {false, true}) {
      const std::string key = std::string(in_transaction ? "tx" : "auto") + std::to_string(round);
      ASSERT_TRUE(short_lease.begin(scope, key, fp).started());
      std::this_thread::sleep_for(20ms);  // let the server's clock pass the 1 ms lease
      std::latch ready(threads);
      std::atomic<int> started{0}, in_progress{0}, replay{0}, ran{0}, failed{0};
      std::vector<std::thread> ts;
      for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
          auto& mine = dbs[static_cast<std::size_t>(t)];
          idempotency_store s(mine, opts(30s));
          try {
            ready.arrive_and_wait();
            idempotency_outcome got{};
            if (in_transaction) {
              transact(mine, [&](transaction_ref tx) {
                got = s.run_once(tx, scope, key, fp, [&](transaction_ref) {
                       ++ran;
                       return idempotent_response{200, "refunded"};
                     }).outcome;
              });
            } else {
              got = s.begin(scope, key, fp).outcome;
            }
            if (got == idempotency_outcome::started) ++started;
            else if (got == idempotency_outcome::in_progress) ++in_progress;
            else if (got == idempotency_outcome::replay) ++replay;
          } catch (const std::exception& e) {
            ++failed;
            ADD_FAILURE() << (in_transaction ? "run_once: " : "begin: ") << e.what();
          }
        });
      for (auto& t : ts) t.join();
      const std::string where = std::string(in_transaction ? "run_once" : "begin") + ", round " + std::to_string(round);
      EXPECT_EQ(failed.load(), 0) << where;
      EXPECT_EQ(started.load(), 1) << where;
      if (in_transaction) {
        EXPECT_EQ(ran.load(), 1) << where;
        EXPECT_EQ(replay.load(), threads - 1) << where;
      } else {
        EXPECT_EQ(in_progress.load(), threads - 1) << where;
      }
      auto rec = short_lease.get(scope, key);
      ASSERT_TRUE(rec) << where;
      EXPECT_EQ(rec->attempt, 2) << where;
    }
  }
}

TEST_P(IdempotencyConformance, OwnerMayFinishAfterItsLeaseLapsedWhileNobodyTookOver) {
  auto db = open();
  const auto scope = unique_name("late");
  idempotency_store s(db, opts(1ms));
  auto a = s.begin(scope, "k", fingerprint("x"));
  ASSERT_TRUE(a.started());
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(s.complete(a.attempt, {200, "late but first"}), finish_status::recorded);
  EXPECT_EQ(s.begin(scope, "k", fingerprint("x")).response.body, "late but first");
}

TEST_P(IdempotencyConformance, CheckpointRenewsTheLeaseAndKeepsTheRecordAlive) {
  auto db = open();
  auto other = open();
  const auto scope = unique_name("cp");
  const auto fp = fingerprint("x");
  // Retention as short as the lease: renewals must keep the record alive too (a live
  // attempt is never treated as expired).
  idempotency_options o400 = opts(400ms);
  o400.retention = 400ms;
  idempotency_store s(db, o400);
  idempotency_store o(other, o400);
  auto a = s.begin(scope, "k", fp);
  ASSERT_TRUE(a.started());
  // Keep checkpointing for > 3 leases: nobody may take over meanwhile.
  int takeovers = 0;
  const auto until = clock_type::now() + 1300ms;
  for (int i = 0; clock_type::now() < until; ++i) {
    ASSERT_EQ(s.checkpoint(a.attempt, "step" + std::to_string(i)), finish_status::recorded);
    if (o.begin(scope, "k", fp).outcome != idempotency_outcome::in_progress) ++takeovers;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(takeovers, 0);
  EXPECT_EQ(s.complete(a.attempt, {200, "done"}), finish_status::recorded);
}

TEST_P(IdempotencyConformance, RetryableFailureReopensForAttemptTwoWithRecoveryPoint) {
  auto db = open();
  idempotency_store s(db);
  const auto scope = unique_name("rf");
  const auto fp = fingerprint("x");
  auto a = s.begin(scope, "k", fp);
  ASSERT_TRUE(a.started());
  ASSERT_EQ(s.checkpoint(a.attempt, "order_created"), finish_status::recorded);
  ASSERT_EQ(s.fail(a.attempt, failure_kind::retryable), finish_status::recorded);
  auto rec = s.get(scope, "k");
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->status, idempotency_status::in_progress);
  EXPECT_FALSE(rec->owner);
  auto b = s.begin(scope, "k", fp);  // at once, no lease to wait for
  ASSERT_EQ(b.outcome, idempotency_outcome::started);
  EXPECT_EQ(b.attempt.number, 2);
  EXPECT_EQ(b.recovery_point, std::optional<std::string>("order_created"));
  EXPECT_EQ(s.complete(a.attempt, {200, "stale"}), finish_status::not_owner);
  EXPECT_EQ(s.complete(b.attempt, {200, "second"}), finish_status::recorded);
}

TEST_P(IdempotencyConformance, TerminalFailuresAreStoredOrFreeTheKey) {
  auto db = open();
  const auto scope = unique_name("tf");
  const auto fp = fingerprint("x");
  idempotency_store stored(db);
  auto a = stored.begin(scope, "stored", fp);
  ASSERT_EQ(stored.fail(a.attempt, failure_kind::terminal, {402, "card declined"}), finish_status::recorded);
  auto rep = stored.begin(scope, "stored", fp);
  EXPECT_EQ(rep.outcome, idempotency_outcome::replay);
  EXPECT_TRUE(rep.failed);
  EXPECT_EQ(rep.response, (idempotent_response{402, "card declined"}));
  EXPECT_EQ(stored.get(scope, "stored")->status, idempotency_status::failed);

  idempotency_options o;
  o.store_failures = false;
  idempotency_store unstored(db, o);
  auto b = unstored.begin(scope, "unstored", fp);
  ASSERT_EQ(unstored.fail(b.attempt, failure_kind::terminal, {400, "bad"}), finish_status::recorded);
  EXPECT_FALSE(unstored.get(scope, "unstored"));
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_idempotency WHERE scope = $1 AND idem_key = $2",
                      {scope, std::string("unstored")}),
            0);
  auto c = unstored.begin(scope, "unstored", fingerprint("a corrected request"));
  EXPECT_EQ(c.outcome, idempotency_outcome::started);
  EXPECT_EQ(c.attempt.number, 1);
}

// ---------------------------------------------------------------------------------------
// Waiting

TEST_P(IdempotencyConformance, BoundedWaitReturnsInProgressAfterTheBound) {
  auto db = open();
  auto other = open();
  const auto scope = unique_name("bw");
  const auto fp = fingerprint("x");
  idempotency_store s(db);
  auto a = s.begin(scope, "k", fp);
  ASSERT_TRUE(a.started());
  idempotency_store w(other, opts(30s, 300ms));
  const auto t0 = clock_type::now();
  auto r = w.begin(scope, "k", fp);
  const auto took = clock_type::now() - t0;
  EXPECT_EQ(r.outcome, idempotency_outcome::in_progress);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 5s);
  EXPECT_GT(r.retry_after, 20s);
}

TEST_P(IdempotencyConformance, WaiterReplaysTheAnswerOfTheAttemptItWaitedFor) {
  auto db = open();
  auto other = open();
  const auto scope = unique_name("wr");
  const auto fp = fingerprint("x");
  idempotency_store s(db);
  auto a = s.begin(scope, "k", fp);
  ASSERT_TRUE(a.started());
  idempotency_store w(other, opts(30s, 20s));
  std::optional<begin_result> got;
  std::thread waiter([&] { got = w.begin(scope, "k", fp); });
  // Complete once the waiter has polled at least twice (it is really waiting).
  const auto deadline = clock_type::now() + 10s;
  while (other.round_trips() < 2 && clock_type::now() < deadline) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(s.complete(a.attempt, {200, binary_body()}), finish_status::recorded);
  waiter.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->outcome, idempotency_outcome::replay);
  EXPECT_TRUE(got->response.body == binary_body());
}

// ---------------------------------------------------------------------------------------
// Concurrency: duplicate storm, crashed worker process

// 32 threads x 2 processes send the same key at the same instant: the side effect (a row in
// a business table) happens exactly once and all 64 callers get the identical response.
TEST_P(IdempotencyConformance, DuplicateStormAcrossThreadsAndProcessesRunsTheSideEffectOnce) {
  auto db = open();
  const auto scope = unique_name("storm");
  const auto table = make_table(db, "effects");
  const auto out = temp_path() / "storm.txt";
  start_barrier gate;
  std::vector<child> kids;
  for (int p = 0; p < 2; ++p) kids.push_back(start_child("storm", scope, "pay-1", table, out, &gate));
  gate.open();
  for (auto& k : kids) {
    auto r = k.wait();
    EXPECT_EQ(r.exit_code, 0) << scrubbed(r.out + r.err);
  }
  auto lines = read_lines(out);
  ASSERT_EQ(lines.size(), 64u);
  int started = 0, replays = 0, other = 0;
  std::map<std::string, int> responses;
  for (const auto& l : lines) {
    std::istringstream in(l);
    std::string outcome, code, hex;
    in >> outcome >> code >> hex;
    if (outcome == "started") ++started;
    else if (outcome == "replay") ++replays;
    else ++other;
    ++responses[code + " " + hex];
  }
  EXPECT_EQ(started, 1) << "exactly one caller ran the side effect";
  EXPECT_EQ(replays, 63);
  EXPECT_EQ(other, 0) << "a caller got in_progress/mismatch/error despite waiting";
  EXPECT_EQ(responses.size(), 1u) << "every caller got the identical response";
  EXPECT_EQ(rows_for(db, table, "pay-1"), 1) << "side effect ran more than once";
  idempotency_store s(db);
  auto rec = s.get(scope, "pay-1");
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->status, idempotency_status::completed);
  EXPECT_EQ(rec->attempt, 1);
}

// A worker process is killed (SIGKILL) right after started + a checkpoint: after the lease
// another worker takes over with attempt 2 and sees the checkpoint; the key completes once.
TEST_P(IdempotencyConformance, CrashedWorkerProcessIsTakenOverAfterTheLease) {
  auto db = open();
  const auto scope = unique_name("crash");
  const auto out = temp_path() / "crash.txt";
  auto k = start_child("crash_after_start", scope, "pay-2", "", out);
  auto res = k.wait();
  ASSERT_EQ(res.exit_code, 128 + SIGKILL) << scrubbed(res.out + res.err);
  auto lines = read_lines(out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "started 1 charged");

  idempotency_store s(db, opts(1s, 15s));  // the child's lease is 1 s
  auto r = s.begin(scope, "pay-2", fingerprint("pay-2 request"));
  ASSERT_EQ(r.outcome, idempotency_outcome::started);
  EXPECT_EQ(r.attempt.number, 2);
  EXPECT_EQ(r.recovery_point, std::optional<std::string>("charged"));
  ASSERT_EQ(s.complete(r.attempt, {201, "charged once"}), finish_status::recorded);
  EXPECT_EQ(s.begin(scope, "pay-2", fingerprint("pay-2 request")).response.body, "charged once");
}

// ---------------------------------------------------------------------------------------
// run_once: exactly once with the business write

TEST_P(IdempotencyConformance, RunOnceCommitsRecordWithBusinessRowAndRollbackLeavesNeither) {
  auto db = open();
  idempotency_store s(db);
  const auto scope = unique_name("ro");
  const auto table = make_table(db, "orders");
  const auto fp = fingerprint("order 42");
  int ran = 0;
  auto body = [&](const std::string& k) {
    return [&, k](transaction_ref) {
      ++ran;
      raw_query(db, "INSERT INTO " + table + " (k, v) VALUES ($1, $2)", {k, std::int64_t{42}});
      return idempotent_response{201, "order " + k};
    };
  };

  // Rollback: the caller's transaction fails after run_once -> no record, no row.
  EXPECT_THROW(transact(db,
                        [&](transaction_ref tx) {
                          auto r = s.run_once(tx, scope, "o1", fp, body("o1"));
                          EXPECT_EQ(r.outcome, idempotency_outcome::started);
                          throw std::runtime_error("payment provider said no");
                        }),
               std::runtime_error);
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(s.get(scope, "o1"));
  EXPECT_EQ(record_count(db, scope), 0);
  EXPECT_EQ(rows_for(db, table, "o1"), 0);

  // fn throws: propagates, and the caller's rollback leaves nothing either.
  EXPECT_THROW(transact(db,
                        [&](transaction_ref tx) {
                          (void)s.run_once(tx, scope, "o1", fp, [&](transaction_ref) -> idempotent_response {
                            ++ran;
                            throw std::runtime_error("fn failed");
                          });
                        }),
               std::runtime_error);
  EXPECT_EQ(record_count(db, scope), 0);

  // Commit: record and row together; the retry executes once.
  ran = 0;
  transact(db, [&](transaction_ref tx) {
    auto r = s.run_once(tx, scope, "o1", fp, body("o1"));
    EXPECT_EQ(r.outcome, idempotency_outcome::started);
    EXPECT_EQ(r.response, (idempotent_response{201, "order o1"}));
    EXPECT_EQ(r.attempt, 1);
  });
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(rows_for(db, table, "o1"), 1);
  auto rec = s.get(scope, "o1");
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->status, idempotency_status::completed);
  EXPECT_EQ(rec->response_body, std::optional<std::string>("order o1"));

  // Replays: fn does not run again; begin() sees the same answer.
  for (int i = 0; i < 3; ++i) {
    transact(db, [&](transaction_ref tx) {
      auto r = s.run_once(tx, scope, "o1", fp, body("o1"));
      EXPECT_EQ(r.outcome, idempotency_outcome::replay);
      EXPECT_EQ(r.response, (idempotent_response{201, "order o1"}));
    });
  }
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(rows_for(db, table, "o1"), 1);
  EXPECT_EQ(s.begin(scope, "o1", fp).response.body, "order o1");

  // Outside a transaction run_once refuses (it could not be atomic).
  auto bare = open();
  EXPECT_THROW((void)s.run_once(detail::make_transaction_ref(bare), scope, "o2", fp, body("o2")), invalid_argument);
  EXPECT_EQ(record_count(db, scope), 1);
}

TEST_P(IdempotencyConformance, RunOnceSeesAnAttemptStartedWithBeginAsInProgress) {
  auto db = open();
  idempotency_store s(db);
  const auto scope = unique_name("rib");
  const auto fp = fingerprint("x");
  auto a = s.begin(scope, "k", fp);
  ASSERT_TRUE(a.started());
  auto other = open();
  idempotency_store o(other);
  int ran = 0;
  transact(other, [&](transaction_ref tx) {
    auto r = o.run_once(tx, scope, "k", fp, [&](transaction_ref) {
      ++ran;
      return idempotent_response{};
    });
    EXPECT_EQ(r.outcome, idempotency_outcome::in_progress);
    EXPECT_GT(r.retry_after, 20s);
  });
  EXPECT_EQ(ran, 0);
}

// A concurrent duplicate of a run_once blocks on the claimed row until that transaction
// commits, then replays its answer; fn runs once.
TEST_P(IdempotencyConformance, RunOnceConcurrentDuplicateWaitsForTheCommitThenReplays) {
  auto db_a = open();
  auto db_b = open();
  const auto scope = unique_name("rocd");
  const auto table = make_table(db_a, "orders");
  const auto fp = fingerprint("order 7");
  idempotency_store sa(db_a), sb(db_b);
  std::atomic<int> ran{0};
  std::latch claimed(1), b_calling(1);
  std::thread a([&] {
    transact(db_a, [&](transaction_ref tx) {
      auto r = sa.run_once(tx, scope, "o7", fp, [&](transaction_ref) {
        ++ran;
        claimed.count_down();
        b_calling.wait();
        std::this_thread::sleep_for(200ms);  // B is now blocked on our row (not a correctness claim)
        raw_query(db_a, "INSERT INTO " + table + " (k, v) VALUES ($1, $2)", {std::string("o7"), std::int64_t{7}});
        return idempotent_response{201, "from A"};
      });
      EXPECT_EQ(r.outcome, idempotency_outcome::started);
    });
  });
  claimed.wait();
  b_calling.count_down();
  std::optional<run_once_result> got;
  transact(db_b, [&](transaction_ref tx) {
    got = sb.run_once(tx, scope, "o7", fp, [&](transaction_ref) {
      ++ran;
      return idempotent_response{500, "from B"};
    });
  });
  a.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->outcome, idempotency_outcome::replay);
  EXPECT_EQ(got->response, (idempotent_response{201, "from A"}));
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(rows_for(db_a, table, "o7"), 1);
}

// run_once in a worker process killed (SIGKILL) inside fn, before COMMIT: nothing is
// recorded, and the retry executes once.
TEST_P(IdempotencyConformance, RunOnceKilledBeforeCommitRecordsNothingAndTheRetryRunsOnce) {
  auto db = open();
  const auto scope = unique_name("rok");
  const auto table = make_table(db, "orders");
  const auto out = temp_path() / "rok.txt";
  auto k = start_child("run_once_killed", scope, "o9", table, out);
  auto res = k.wait();
  ASSERT_EQ(res.exit_code, 128 + SIGKILL) << scrubbed(res.out + res.err);
  ASSERT_EQ(read_lines(out), std::vector<std::string>{"in fn"});

  idempotency_store s(db);
  EXPECT_FALSE(s.get(scope, "o9", true));
  EXPECT_EQ(record_count(db, scope), 0);
  EXPECT_EQ(rows_for(db, table, "o9"), 0);
  int ran = 0;
  for (int i = 0; i < 2; ++i) {
    transact(db, [&](transaction_ref tx) {
      auto r = s.run_once(tx, scope, "o9", fingerprint("o9 request"), [&](transaction_ref) {
        ++ran;
        raw_query(db, "INSERT INTO " + table + " (k, v) VALUES ($1, $2)", {std::string("o9"), std::int64_t{9}});
        return idempotent_response{201, "o9"};
      });
      EXPECT_EQ(r.outcome, i == 0 ? idempotency_outcome::started : idempotency_outcome::replay);
    });
  }
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(rows_for(db, table, "o9"), 1);
}

// The caller's own transaction on the caller's own connection, through dblock::within():
// a pqxx::work (libpqxx); a Connector/C++ sql::Connection* after START TRANSACTION; a
// soci::session after BEGIN (BEGIN IMMEDIATE on SQLite). fn's business row, written by
// the caller on that connection, and the record share the transaction: rolled back,
// neither is there; committed, both are, and the key then replays without running fn.
TEST_P(IdempotencyConformance, RunOnceInsideTheCallersOwnTransaction) {
  auto db = open();
  const auto table = make_table(db, "rw");
  idempotency_store s(db);
  const auto scope = unique_name("rw");
  const auto fp = fingerprint("x");
  const std::string insert = "INSERT INTO " + table + " (k, v) VALUES ('k', 1)";
  const auto u = parse_url(url());

  // The caller's connection and transaction, whatever the client library.
  std::function<void()> begin_tx, commit_tx, rollback_tx;
  std::function<void(const std::string&)> exec;  // a statement in the open transaction
  std::function<transaction_ref()> ref;          // within(<the open transaction>)
  std::unique_ptr<pqxx::connection> pq;
  std::optional<pqxx::work> work;
  std::unique_ptr<sql::Connection> my;
  std::unique_ptr<soci::session> so;
  switch (client()) {
    case client_library::pqxx:
      pq = std::make_unique<pqxx::connection>(url());
      begin_tx = [&] { work.emplace(*pq); };
      exec = [&](const std::string& sql) { work->exec(sql); };
      ref = [&] { return within(*work); };
      commit_tx = [&] {
        work->commit();
        work.reset();
      };
      rollback_tx = [&] { work.reset(); };  // destroyed without commit = rolled back
      break;
    case client_library::mysql: {
      sql::ConnectOptionsMap o;  // a plain user connection: no CLIENT_FOUND_ROWS
      o["hostName"] = sql::SQLString("tcp://" + (u.host.empty() ? std::string("127.0.0.1") : u.host) + ":" +
                                     std::to_string(u.port.value_or(3306)));
      o["userName"] = sql::SQLString(u.user);
      o["password"] = sql::SQLString(u.password.value_or(""));
      o["schema"] = sql::SQLString(u.database);
      my.reset(get_driver_instance()->connect(o));
      exec = [&](const std::string& sql) { std::unique_ptr<sql::Statement>(my->createStatement())->execute(sql); };
      begin_tx = [&] { exec("START TRANSACTION"); };
      ref = [&] { return within(my.get()); };
      commit_tx = [&] { exec("COMMIT"); };
      rollback_tx = [&] { exec("ROLLBACK"); };
      break;
    }
    case client_library::soci: {
      auto q = [](const std::string& v) { return "'" + v + "'"; };  // test values have no quotes
      switch (kind()) {
        case dialect::sqlite: so = std::make_unique<soci::session>(soci::sqlite3, "db=" + u.database); break;
        case dialect::postgresql:
          so = std::make_unique<soci::session>(soci::postgresql,
                                               "dbname=" + q(u.database) + " host=" + q(u.host) +
                                                   " port=" + std::to_string(u.port.value_or(5432)) +
                                                   " user=" + q(u.user) + " password=" + q(u.password.value_or("")));
          break;
        case dialect::mysql8:
        case dialect::mysql:
          so = std::make_unique<soci::session>(soci::mysql,
                                               "db=" + q(u.database) + " host=" + q(u.host) +
                                                   " port=" + std::to_string(u.port.value_or(3306)) +
                                                   " user=" + q(u.user) + " password=" + q(u.password.value_or("")));
          break;
      }
      exec = [&](const std::string& sql) { so->once << sql; };
      begin_tx = [&] { exec(kind() == dialect::sqlite ? "BEGIN IMMEDIATE" : "BEGIN"); };
      ref = [&] { return within(*so); };
      commit_tx = [&] { exec("COMMIT"); };
      rollback_tx = [&] { exec("ROLLBACK"); };
      break;
    }
  }

  int ran = 0;
  auto attempt = [&](bool commit) {
    begin_tx();
    auto r = s.run_once(ref(), scope, "k", fp, [&](transaction_ref) {
      ++ran;
      exec(insert);
      return idempotent_response{200, "p"};
    });
    if (commit) commit_tx();
    else rollback_tx();
    return r;
  };

  auto r = attempt(false);
  EXPECT_EQ(r.outcome, idempotency_outcome::started);
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(s.get(scope, "k")) << "the record outlived the caller's rollback";
  EXPECT_EQ(rows_for(db, table, "k"), 0) << "the business row outlived the caller's rollback";

  r = attempt(true);
  EXPECT_EQ(r.outcome, idempotency_outcome::started);
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(rows_for(db, table, "k"), 1);
  ASSERT_TRUE(s.get(scope, "k", true)) << "the record did not commit with the caller's transaction";
  EXPECT_EQ(s.begin(scope, "k", fp).response.body, "p");

  r = attempt(true);  // the key is done: fn does not run again
  EXPECT_EQ(r.outcome, idempotency_outcome::replay);
  EXPECT_EQ(r.response.body, "p");
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(rows_for(db, table, "k"), 1);
}

// ---------------------------------------------------------------------------------------
// Bad input, expiry, operators' view

TEST_P(IdempotencyConformance, BadInputIsRefusedAndNothingIsWritten) {
  auto db = open();
  const auto scope = unique_name("bad");
  const auto fp = fingerprint("x");
  idempotency_options small;
  small.max_body_bytes = 16;
  idempotency_store s(db, small);

  // Refused before anything is sent: no round trip (beyond BEGIN/ROLLBACK of a transact()).
  auto refused = [&](const std::function<void()>& fn, const std::string& needle, std::uint64_t trips = 0) {
    const auto before = db.round_trips();
    try {
      fn();
      ADD_FAILURE() << "accepted; expected a refusal naming '" << needle << "'";
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_EQ(db.round_trips() - before, trips) << needle;
  };
  const std::string key256(256, 'k');
  refused([&] { (void)s.begin(scope, "", fp); }, "key is empty");
  refused([&] { (void)s.begin(scope, key256, fp); }, "256 bytes");
  refused([&] { (void)s.begin("", "k", fp); }, "scope is empty");
  refused([&] { (void)s.begin(std::string(65, 's'), "k", fp); }, "65 bytes");
  refused([&] { (void)s.begin(scope, std::string("a\0b", 3), fp); }, "a\\x00b");
  refused([&] { (void)s.begin(scope, "caf\xe9", fp); }, "caf\\xe9");
  refused([&] { (void)s.begin(scope, "line\nbreak", fp); }, "line\\x0abreak");
  refused([&] { (void)s.begin(scope, "k", "not-a-digest"); }, "not-a-digest");
  refused([&] { (void)s.begin(scope, "k", fp.substr(1)); }, fp.substr(1, 20));
  refused([&] { (void)s.get(scope, ""); }, "key is empty");
  int ran = 0;
  refused(
      [&] {
        transact(db, [&](transaction_ref tx) {
          (void)s.run_once(tx, scope, "", fp, [&](transaction_ref) {
            ++ran;
            return idempotent_response{};
          });
        });
      },
      "key is empty", 2);
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(record_count(db, scope), 0) << "a refused call wrote a record";

  // Limits are inclusive: a 64-byte scope and a 255-byte key of multi-byte UTF-8 are fine.
  std::string euro255;
  for (int i = 0; i < 85; ++i) euro255 += "\xe2\x82\xac";
  const std::string scope64 = scope.substr(0, std::min<std::size_t>(scope.size(), 60)) + std::string(64 - std::min<std::size_t>(scope.size(), 60), 'z');
  auto ok = s.begin(scope64, euro255, fp);
  ASSERT_TRUE(ok.started());
  EXPECT_EQ(s.get(scope64, euro255)->key, euro255);

  // Over-limit bodies and bad recovery points: refused, the record unchanged.
  auto a = s.begin(scope, "body", fp);
  ASSERT_TRUE(a.started());
  refused([&] { (void)s.complete(a.attempt, {200, std::string(17, 'x')}); }, "17 bytes");
  refused([&] { (void)s.fail(a.attempt, failure_kind::terminal, {500, std::string(17, 'x')}); }, "17 bytes");
  refused([&] { (void)s.checkpoint(a.attempt, ""); }, "recovery point is empty");
  refused([&] { (void)s.checkpoint(a.attempt, std::string(256, 'p')); }, "256 bytes");
  auto rec = s.get(scope, "body");
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->status, idempotency_status::in_progress);
  EXPECT_FALSE(rec->response_body);
  EXPECT_FALSE(rec->recovery_point);
  EXPECT_EQ(s.complete(a.attempt, {200, std::string(16, 'x')}), finish_status::recorded);
  EXPECT_EQ(record_count(db, scope), 1);

  // Inconsistent options.
  auto bad_opts = [&](idempotency_options o, const std::string& needle) {
    try {
      idempotency_store x(db, o);
      ADD_FAILURE() << "options accepted; expected '" << needle << "'";
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  idempotency_options o1;
  o1.lease = 0ms;
  bad_opts(o1, "lease of 0 ms");
  idempotency_options o2;
  o2.retention = 1s;
  bad_opts(o2, "retention of 1000 ms");
  idempotency_options o3;
  o3.max_body_bytes = 0;
  bad_opts(o3, "max_body_bytes of 0");
}

TEST_P(IdempotencyConformance, ExpiredRecordIsTreatedAsAbsentBeforeTheReaperDeletesIt) {
  auto db = open();
  const auto scope = unique_name("exp");
  const auto fp = fingerprint("x");
  idempotency_store s(db);
  idempotency_options brief = opts(1ms);
  brief.retention = 1ms;
  idempotency_store short_retention(db, brief);
  auto a = s.begin(scope, "k", fp);
  ASSERT_TRUE(a.started());
  ASSERT_EQ(s.checkpoint(a.attempt, "p"), finish_status::recorded);
  // Completed with a 1 ms retention (counted from completion).
  ASSERT_EQ(short_retention.complete(a.attempt, {200, "old"}), finish_status::recorded);
  std::this_thread::sleep_for(20ms);  // let the server's clock pass it

  EXPECT_FALSE(s.get(scope, "k"));
  auto still = s.get(scope, "k", true);
  ASSERT_TRUE(still) << "the row is still there until the reaper deletes it";
  EXPECT_TRUE(still->expired);
  EXPECT_EQ(record_count(db, scope), 1);
  bool listed = false;
  for (const auto& r : s.list({.status = {}, .scope = scope, .include_expired = false, .limit = 10})) listed |= r.key == "k";
  EXPECT_FALSE(listed);

  // A different request on the expired key starts fresh: not a mismatch, not a replay.
  auto b = s.begin(scope, "k", fingerprint("a new request"));
  ASSERT_EQ(b.outcome, idempotency_outcome::started);
  EXPECT_EQ(b.attempt.number, 1);
  EXPECT_FALSE(b.recovery_point);
  EXPECT_EQ(short_retention.complete(a.attempt, {200, "stale"}), finish_status::not_owner);
  auto rec = s.get(scope, "k");
  ASSERT_TRUE(rec);
  EXPECT_FALSE(rec->expired);
  EXPECT_EQ(rec->fingerprint, fingerprint("a new request"));
  EXPECT_FALSE(rec->response_body);
  EXPECT_FALSE(rec->response_code);
  EXPECT_FALSE(rec->recovery_point);
  EXPECT_GT(rec->created_at_ms, still->created_at_ms) << "a record that starts over is created anew";

  // An in-progress attempt past its retention is absent too: its owner can no longer finish.
  idempotency_store tiny(db, brief);
  auto c = tiny.begin(scope, "k2", fp);
  ASSERT_TRUE(c.started());
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(tiny.complete(c.attempt, {200, "too late"}), finish_status::not_owner);
  auto d = s.begin(scope, "k2", fp);
  EXPECT_EQ(d.outcome, idempotency_outcome::started);
  EXPECT_EQ(d.attempt.number, 1);
}

// Many callers at once on a key whose record is past its retention: exactly one of them starts
// it over (attempt 1), the others see that attempt in progress; none fails, none replays the
// expired answer.
TEST_P(IdempotencyConformance, ExpiredRecordStartsOverOnceUnderConcurrentClaims) {
  auto db = open();
  const auto scope = unique_name("expc");
  const auto fp = fingerprint("x");
  idempotency_options brief = opts(1ms);  // a completed record is kept 1 ms
  brief.retention = 1ms;
  idempotency_store short_retention(db, brief);
  const int threads = kind() == dialect::sqlite ? 4 : 12;
  std::vector<database> dbs;
  for (int t = 0; t < threads; ++t) dbs.push_back(open());
  for (int round = 0; round < 5; ++round) {
    const std::string key = "k" + std::to_string(round);
    auto a = idempotency_store(db).begin(scope, key, fp);
    ASSERT_TRUE(a.started());
    ASSERT_EQ(short_retention.complete(a.attempt, {200, "expired answer"}), finish_status::recorded);
    std::this_thread::sleep_for(20ms);  // let the server's clock pass it
    std::latch ready(threads);
    std::atomic<int> started{0}, busy{0}, other{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        try {
          idempotency_store s(dbs[static_cast<std::size_t>(t)], opts(30s));
          ready.arrive_and_wait();
          auto r = s.begin(scope, key, fp);
          if (r.started() && r.attempt.number == 1) ++started;
          else if (r.outcome == idempotency_outcome::in_progress) ++busy;
          else ++other;
        } catch (const std::exception& e) {
          ++other;
          ADD_FAILURE() << e.what();
        }
      });
    for (auto& t : ts) t.join();
    EXPECT_EQ(started.load(), 1) << "round " << round;
    EXPECT_EQ(busy.load(), threads - 1) << "round " << round;
    EXPECT_EQ(other.load(), 0) << "round " << round;
  }
}

TEST_P(IdempotencyConformance, GetAndListShowTheOperatorsView) {
  auto db = open();
  idempotency_store s(db);
  const auto scope = unique_name("ops");
  const auto fp = fingerprint("x");
  auto a = s.begin(scope, "done", fp);
  ASSERT_EQ(s.complete(a.attempt, {201, "ok"}), finish_status::recorded);
  auto b = s.begin(scope, "busy", fp);
  ASSERT_EQ(s.checkpoint(b.attempt, "step1"), finish_status::recorded);
  auto c = s.begin(scope, "bad", fp);
  ASSERT_EQ(s.fail(c.attempt, failure_kind::terminal, {402, "no"}), finish_status::recorded);

  auto busy = s.get(scope, "busy");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, idempotency_status::in_progress);
  EXPECT_EQ(busy->owner, std::optional<std::string>(b.attempt.owner));
  EXPECT_EQ(busy->recovery_point, std::optional<std::string>("step1"));
  ASSERT_TRUE(busy->lease_remaining);
  EXPECT_GT(*busy->lease_remaining, 20s);
  ASSERT_TRUE(busy->lease_expires_at_ms);
  EXPECT_GT(*busy->lease_expires_at_ms, busy->updated_at_ms);
  EXPECT_GT(busy->expires_at_ms, busy->created_at_ms + 23 * 3600 * 1000LL);
  EXPECT_FALSE(busy->response_code);
  EXPECT_EQ(busy->fingerprint, fp);

  auto done = s.get(scope, "done");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, idempotency_status::completed);
  EXPECT_EQ(done->response_code, std::optional<int>(201));
  EXPECT_FALSE(done->lease_remaining);
  EXPECT_FALSE(done->lease_expires_at_ms);

  auto all = s.list({.status = {}, .scope = scope, .include_expired = false, .limit = 10});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].key, "bad") << "most recently changed first";
  for (const auto& r : all) EXPECT_FALSE(r.response_body) << "list does not load bodies";
  auto completed = s.list({.status = idempotency_status::completed, .scope = scope, .include_expired = false, .limit = 10});
  ASSERT_EQ(completed.size(), 1u);
  EXPECT_EQ(completed[0].key, "done");
  EXPECT_EQ(completed[0].body_bytes, 2u);
  auto failed = s.list({.status = idempotency_status::failed, .scope = scope, .include_expired = false, .limit = 10});
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].response_code, std::optional<int>(402));
  EXPECT_EQ(s.list({.status = {}, .scope = scope, .include_expired = false, .limit = 2}).size(), 2u);
  EXPECT_THROW((void)s.list({.status = {}, .scope = scope, .include_expired = false, .limit = 0}), invalid_argument);
}

DBLOCK_CONFORMANCE_SUITE(IdempotencyConformance);

// ---------------------------------------------------------------------------------------
// Worker processes (started by the tests above; disabled when run directly).

int storm_worker(const std::string& url, const std::string& scope, const std::string& key, const std::string& table,
                 const std::string& out) {
  const int threads = 32;
  std::latch ready(threads);
  std::atomic<int> errors{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      try {
        auto db = dblock::open(url);  // each thread its own connection
        idempotency_store s(db, opts(10s, 60s));
        const auto fp = fingerprint_fields({{"amount", "1000"}, {"card", "tok_visa"}});
        ready.arrive_and_wait();
        auto r = s.begin(scope, key, fp);
        idempotent_response resp;
        if (r.started()) {
          // The side effect; then the response every duplicate must get back.
          sql_access::raw_query(db, "INSERT INTO " + table + " (k, v) VALUES ($1, $2)",
                                {key, static_cast<std::int64_t>(::getpid()) * 100 + t});
          resp = {201, "charged by " + std::to_string(::getpid()) + "/" + std::to_string(t) + std::string("\0\xff", 2)};
          if (s.complete(r.attempt, resp) != finish_status::recorded) ++errors;
        } else {
          resp = r.response;
        }
        append_line(out, std::string(to_string(r.outcome)) + " " + std::to_string(resp.code) + " " +
                             detail::idem::hex_encode(resp.body));
      } catch (const std::exception& e) {
        ++errors;
        append_line(out, std::string("error ") + e.what());
      }
    });
  for (auto& t : ts) t.join();
  return errors.load();
}

TEST(IdempotencyChild, DISABLED_Worker) {
  const std::string role = env_or_empty(role_env), url = env_or_empty(url_env), scope = env_or_empty(scope_env),
                    key = env_or_empty(key_env), table = env_or_empty(table_env), out = env_or_empty(out_env);
  ASSERT_FALSE(role.empty());
  if (role == "storm") {
    EXPECT_EQ(storm_worker(url, scope, key, table, out), 0);
  } else if (role == "crash_after_start") {
    auto db = dblock::open(url);
    idempotency_store s(db, opts(1s));
    auto r = s.begin(scope, key, fingerprint(key + " request"));
    ASSERT_TRUE(r.started());
    ASSERT_EQ(s.checkpoint(r.attempt, "charged"), finish_status::recorded);
    append_line(out, "started " + std::to_string(r.attempt.number) + " charged");
    ::raise(SIGKILL);  // crash between the external call and complete()
  } else if (role == "run_once_killed") {
    auto db = dblock::open(url);
    idempotency_store s(db);
    transact(db, [&](transaction_ref tx) {
      (void)s.run_once(tx, scope, key, fingerprint(key + " request"), [&](transaction_ref) {
        sql_access::raw_query(db, "INSERT INTO " + table + " (k, v) VALUES ($1, $2)", {key, std::int64_t{1}});
        append_line(out, "in fn");
        ::raise(SIGKILL);  // dies before COMMIT
        return idempotent_response{};
      });
    });
  } else {
    FAIL() << "unknown role " << role;
  }
}

}  // namespace
}  // namespace dblock::test
