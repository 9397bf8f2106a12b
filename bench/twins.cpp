// bench/twins.cpp — the hand-written raw-SQL twins (see twins.hpp), one class per client
// library. Each statement is prepared once per connection and run in autocommit, as a
// careful hand-written lock table would be. Compare with sql/<dialect>/lock_*.sql,
// idem_claim.sql and reap_locks.sql, which is what dblock sends for the same operation.
#include "twins.hpp"

#include <cppconn/driver.h>
#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>

#include <mutex>
#include <pqxx/pqxx>
#include <stdexcept>

#include "dblock/mysql.hpp"
#include "dblock/pqxx.hpp"
#include "dblock/soci.hpp"

namespace dblock_bench {
namespace {

// ------------------------------------------------------------------ PostgreSQL / libpqxx

// Acquire: a fresh grant, or the takeover of an expired row (DO UPDATE ... WHERE expired).
constexpr const char* pg_acquire = R"(
INSERT INTO dblock_locks AS l (name, owner, holds, fence, acquired_at, expires_at, holder)
VALUES ($1, $2, 1, nextval('dblock_fence_seq'), now(), now() + $3::bigint * interval '1 millisecond', '')
ON CONFLICT (name) DO UPDATE
   SET owner = EXCLUDED.owner, holds = 1, fence = EXCLUDED.fence, acquired_at = EXCLUDED.acquired_at,
       expires_at = EXCLUDED.expires_at, holder = EXCLUDED.holder
 WHERE l.expires_at <= now()
RETURNING fence)";
constexpr const char* pg_release = "DELETE FROM dblock_locks WHERE name = $1 AND owner = $2";
constexpr const char* pg_release_async = R"(
WITH d AS (DELETE FROM dblock_locks WHERE name = $1 AND owner = $2 RETURNING 1)
SELECT set_config('synchronous_commit', 'off', true) FROM d)";
constexpr const char* pg_probe =
    "SELECT fence FROM dblock_locks WHERE name = $1 AND owner <> $2 AND expires_at > now()";
constexpr const char* pg_idem_insert = R"(
INSERT INTO dblock_idempotency (scope, idem_key, fingerprint, status, owner, attempt, lease_expires_at,
                                created_at, updated_at, expires_at)
VALUES ($1, $2, $3, 'in_progress', $4, 1, now() + $5::bigint * interval '1 millisecond', now(), now(),
        now() + $6::bigint * interval '1 millisecond'))";
constexpr const char* pg_idem_lookup = R"(
SELECT status, response_code, response_body FROM dblock_idempotency
 WHERE scope = $1 AND idem_key = $2 AND expires_at > now())";
constexpr const char* pg_reap = R"(
DELETE FROM dblock_locks WHERE name IN (
  SELECT name FROM dblock_locks WHERE expires_at < now() - $1::bigint * interval '1 millisecond'
   ORDER BY expires_at LIMIT $2))";

// Read-write and semaphore floors: one statement per grant, no gate (see twins.hpp).
constexpr const char* pg_rw_read = R"(
INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, permits, fence, acquired_at, expires_at)
SELECT $1, $2, 0, 'r', 1, 0, 0, nextval('dblock_fence_seq'), now(), now() + $3::bigint * interval '1 millisecond'
 WHERE NOT EXISTS (SELECT 1 FROM dblock_lock_holders WHERE name = $1 AND write_holds > 0 AND expires_at > now()))";
constexpr const char* pg_permit = R"(
INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, permits, fence, acquired_at, expires_at)
SELECT $1, $2, n + 1, 's', 1, 0, $3::integer, nextval('dblock_fence_seq'), now(),
       now() + $4::bigint * interval '1 millisecond'
  FROM (SELECT COUNT(*) AS n FROM dblock_lock_holders WHERE name = $1 AND expires_at > now()) c
 WHERE n < $3::integer)";
constexpr const char* pg_holder_release = "DELETE FROM dblock_lock_holders WHERE name = $1 AND owner = $2";

class pg_raw final : public raw_client {
 public:
  explicit pg_raw(const std::string& url) : c_(url) {
    c_.prepare("one", "SELECT 1");
    c_.prepare("acquire", pg_acquire);
    c_.prepare("probe", pg_probe);
    c_.prepare("release", pg_release);
    c_.prepare("release_async", pg_release_async);
    c_.prepare("idem_insert", pg_idem_insert);
    c_.prepare("idem_lookup", pg_idem_lookup);
    c_.prepare("reap", pg_reap);
    c_.prepare("rw_read", pg_rw_read);
    c_.prepare("permit", pg_permit);
    c_.prepare("holder_release", pg_holder_release);
  }
  bool rw_read_acquire(const std::string& name, const std::string& owner, std::int64_t ttl_ms) override {
    ++statements_;
    return pqxx::nontransaction(c_).exec_prepared("rw_read", name, owner, ttl_ms).affected_rows() == 1;
  }
  bool permit_acquire(const std::string& name, const std::string& owner, int permits, std::int64_t ttl_ms) override {
    ++statements_;
    return pqxx::nontransaction(c_).exec_prepared("permit", name, owner, permits, ttl_ms).affected_rows() == 1;
  }
  bool holder_release(const std::string& name, const std::string& owner) override {
    ++statements_;
    return pqxx::nontransaction(c_).exec_prepared("holder_release", name, owner).affected_rows() >= 1;
  }

  void select1() override {
    ++statements_;
    pqxx::nontransaction(c_).exec_prepared("one");
  }
  std::optional<std::int64_t> acquire(const std::string& name, const std::string& owner, std::int64_t ttl_ms) override {
    ++statements_;
    auto r = pqxx::nontransaction(c_).exec_prepared("acquire", name, owner, ttl_ms);
    if (r.empty()) return std::nullopt;
    return r[0][0].as<std::int64_t>();
  }
  bool probe(const std::string& name, const std::string& owner) override {
    ++statements_;
    return !pqxx::nontransaction(c_).exec_prepared("probe", name, owner).empty();
  }
  bool release_async(const std::string& name, const std::string& owner) override {
    ++statements_;
    return pqxx::nontransaction(c_).exec_prepared("release_async", name, owner).size() == 1;
  }
  bool release(const std::string& name, const std::string& owner) override {
    ++statements_;
    return pqxx::nontransaction(c_).exec_prepared("release", name, owner).affected_rows() == 1;
  }
  void idem_insert(const std::string& scope, const std::string& key, const std::string& fp, const std::string& owner,
                   std::int64_t lease_ms, std::int64_t retention_ms) override {
    ++statements_;
    pqxx::nontransaction(c_).exec_prepared("idem_insert", scope, key, fp, owner, lease_ms, retention_ms);
  }
  bool idem_lookup(const std::string& scope, const std::string& key) override {
    ++statements_;
    return !pqxx::nontransaction(c_).exec_prepared("idem_lookup", scope, key).empty();
  }
  std::int64_t reap_batch(std::int64_t grace_ms, std::int64_t limit) override {
    ++statements_;
    return static_cast<std::int64_t>(pqxx::nontransaction(c_).exec_prepared("reap", grace_ms, limit).affected_rows());
  }
  void exec(const std::string& sql) override { pqxx::nontransaction(c_).exec(sql); }
  std::int64_t query_int(const std::string& sql) override {
    auto r = pqxx::nontransaction(c_).exec(sql);
    return r.empty() || r[0][0].is_null() ? 0 : r[0][0].as<std::int64_t>();
  }
  std::string query_text(const std::string& sql) override {
    auto r = pqxx::nontransaction(c_).exec(sql);
    std::string out;
    for (const auto& row : r) {
      for (pqxx::row::size_type i = 0; i < row.size(); ++i) {
        if (i) out += ' ';
        out += row[i].is_null() ? "NULL" : row[i].c_str();
      }
      out += '\n';
    }
    return out;
  }
  dblock::database attach() override { return dblock::attach(c_); }

 private:
  pqxx::connection c_;
};

// ------------------------------------------------------------------ MariaDB / Connector/C++

// MariaDB 10.5+: INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING gives the row as it is
// after the statement, so one round trip says whether we own it and with which fence.
// Assignments run left to right, each seeing the previous ones: expires_at goes last.
constexpr const char* my_acquire = R"(
INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder)
VALUES (?, ?, 1, NEXTVAL(dblock_fence_seq), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, '')
ON DUPLICATE KEY UPDATE
  fence       = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(fence), fence),
  holds       = IF(expires_at <= UTC_TIMESTAMP(6), 1, holds),
  acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), acquired_at),
  holder      = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(holder), holder),
  owner       = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner),
  expires_at  = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(expires_at), expires_at)
RETURNING owner, fence)";
// MySQL 8.0 (the mysql8 schema: a counter row, no RETURNING, no VALUES()): the draw, the
// upsert with the drawn fence, and a read of the row.
constexpr const char* my8_draw = "UPDATE dblock_fence_counter SET value = LAST_INSERT_ID(value + 1) WHERE id = 1";
constexpr const char* my8_acquire = R"(
INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder)
VALUES (?, ?, 1, LAST_INSERT_ID(), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, '')
ON DUPLICATE KEY UPDATE
  fence       = IF(expires_at <= UTC_TIMESTAMP(6), LAST_INSERT_ID(), fence),
  holds       = IF(expires_at <= UTC_TIMESTAMP(6), 1, holds),
  acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), acquired_at),
  holder      = IF(expires_at <= UTC_TIMESTAMP(6), '', holder),
  owner       = IF(expires_at <= UTC_TIMESTAMP(6), ?, owner),
  expires_at  = IF(owner = ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, expires_at))";
constexpr const char* my8_read = "SELECT owner, fence FROM dblock_locks WHERE name = ?";
// The wait-line steps (twins.hpp, acquire_in_line): the twin's upsert, refused (an error)
// while a live waiter of the name holds a ticket; the bound is a try's without a ticket.
constexpr const char* my_line_probe =
    "IF(EXISTS(SELECT 1 FROM dblock_lock_waiters WHERE name = ? AND expires_at > UTC_TIMESTAMP(6) "
    "AND ticket < 9223372036854775807), NULL, ?)";
// Then dblock's grant (sql/mysql/lock_acquire.sql) with its two passes as two VALUES rows;
// with_line_probe() puts the probe in front of the first row's name. Parameters then: name
// (probe), name, owner, TTL ms, holder, lock delay ms; name, owner, TTL ms, holder, lock
// delay ms; owner.
constexpr const char* my_acquire_line_fenced = R"(
INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder, lock_delay_ms)
VALUES (?, ?, 1, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL (CAST(? AS SIGNED) * 1000) MICROSECOND, ?, ?), (?, ?, 1, -1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL (CAST(? AS SIGNED) * 1000) MICROSECOND, ?, ?)
ON DUPLICATE KEY UPDATE
  holds       = IF(VALUES(fence) < 0, holds,
                   IF(owner = VALUES(owner) AND expires_at > UTC_TIMESTAMP(6), holds + 1,
                      IF(expires_at <= UTC_TIMESTAMP(6), 1, holds))),
  fence       = IF(VALUES(fence) < 0, IF(owner = VALUES(owner) AND fence = 0, NEXTVAL(dblock_fence_seq), fence),
                   IF(owner = VALUES(owner) AND expires_at > UTC_TIMESTAMP(6), fence,
                      IF(expires_at <= UTC_TIMESTAMP(6), 0, fence))),
  acquired_at = IF(VALUES(fence) = 0 AND expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), acquired_at),
  holder      = IF(VALUES(fence) = 0 AND (expires_at <= UTC_TIMESTAMP(6) OR owner = VALUES(owner)),
                   VALUES(holder), holder),
  owner       = IF(VALUES(fence) = 0 AND expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner),
  expires_at  = IF(VALUES(fence) = 0 AND owner = VALUES(owner), VALUES(expires_at), expires_at),
  lock_delay_ms = IF(VALUES(fence) = 0 AND owner = VALUES(owner), VALUES(lock_delay_ms), lock_delay_ms)
RETURNING IF(owner = ? AND expires_at > UTC_TIMESTAMP(6), 1, 0) AS granted, fence, holds, holder,
          DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%s.%fZ') AS expires_at_text,
          CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED) AS expires_in_ms)";
constexpr const char* my_release = "DELETE FROM dblock_locks WHERE name = ? AND owner = ?";
// Read-write and semaphore floors (MariaDB's dialect: NEXTVAL; see twins.hpp).
constexpr const char* my_rw_read = R"(
INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, permits, fence, acquired_at, expires_at)
SELECT ?, ?, 0, 'r', 1, 0, 0, NEXTVAL(dblock_fence_seq), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
  FROM DUAL
 WHERE NOT EXISTS (SELECT 1 FROM dblock_lock_holders WHERE name = ? AND write_holds > 0
                      AND expires_at > UTC_TIMESTAMP(6)))";
constexpr const char* my_permit = R"(
INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, permits, fence, acquired_at, expires_at)
SELECT ?, ?, c.n + 1, 's', 1, 0, ?, NEXTVAL(dblock_fence_seq), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
  FROM (SELECT COUNT(*) AS n FROM dblock_lock_holders WHERE name = ? AND expires_at > UTC_TIMESTAMP(6)) c
 WHERE c.n < ?)";
constexpr const char* my_holder_release = "DELETE FROM dblock_lock_holders WHERE name = ? AND owner = ?";
// MySQL 8.0 (no sequences): the same statements with the fence my8_draw drew just before.
std::string my8_variant(const char* sql) {
  std::string s(sql);
  const std::string from = "NEXTVAL(dblock_fence_seq)";
  s.replace(s.find(from), from.size(), "LAST_INSERT_ID()");
  return s;
}
constexpr const char* my_probe =
    "SELECT fence FROM dblock_locks WHERE name = ? AND owner <> ? AND expires_at > UTC_TIMESTAMP(6)";
constexpr const char* my_idem_insert = R"(
INSERT INTO dblock_idempotency (scope, idem_key, fingerprint, status, owner, attempt, lease_expires_at,
                                created_at, updated_at, expires_at)
VALUES (?, ?, ?, 'in_progress', ?, 1, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6),
        UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND))";
constexpr const char* my_idem_lookup = R"(
SELECT status, response_code, response_body FROM dblock_idempotency
 WHERE scope = ? AND idem_key = ? AND expires_at > UTC_TIMESTAMP(6))";
constexpr const char* my_reap = R"(
DELETE FROM dblock_locks WHERE expires_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND
 ORDER BY expires_at LIMIT ?)";

std::mutex& my_driver_mutex() {
  static std::mutex mu;
  return mu;
}

class my_raw final : public raw_client {
 public:
  my_raw(const dblock::connection_url& u, bool found_rows) : kind_(u.kind) {
    sql::ConnectOptionsMap o;
    o["hostName"] = sql::SQLString("tcp://" + (u.host.empty() ? std::string("127.0.0.1") : u.host) + ":" +
                                   std::to_string(u.port.value_or(3306)));
    o["userName"] = sql::SQLString(u.user);
    o["password"] = sql::SQLString(u.password.value_or(""));
    o["schema"] = sql::SQLString(u.database);
    o["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
    if (found_rows) o["CLIENT_FOUND_ROWS"] = true;
    {
      std::lock_guard l(my_driver_mutex());
      driver_ = get_driver_instance();
      driver_->threadInit();
      c_.reset(driver_->connect(o));
    }
    st_.reset(c_->createStatement());
  }
  ~my_raw() override {
    st_.reset();
    acquire_.reset();
    draw8_.reset();
    read8_.reset();
    probe_.reset();
    release_.reset();
    idem_insert_.reset();
    idem_lookup_.reset();
    reap_.reset();
    rw_read_.reset();
    permit_.reset();
    holder_release_.reset();
    line_.reset();
    line_fenced_.reset();
    c_.reset();
  }

  void select1() override {
    ++statements_;
    std::unique_ptr<sql::ResultSet> rs(st_->executeQuery("SELECT 1"));
    while (rs->next()) {
    }
  }
  std::optional<std::int64_t> acquire(const std::string& name, const std::string& owner, std::int64_t ttl_ms) override {
    if (kind_ == dblock::dialect::mysql8) return acquire8(name, owner, ttl_ms);
    ++statements_;
    prepared(acquire_, my_acquire)->setString(1, name);
    acquire_->setString(2, owner);
    acquire_->setInt64(3, ttl_ms * 1000);
    return owner_fence(acquire_.get(), owner);
  }
  bool write_grant(const std::string& name, const std::string& owner, std::int64_t ttl_ms) override {
    if (kind_ != dblock::dialect::mysql8) return raw_client::write_grant(name, owner, ttl_ms);
    ++statements_;
    return upsert8(name, owner, ttl_ms) > 0;  // 1 inserted, 2 taken over, 0 held by another owner
  }
  [[nodiscard]] bool line_twins() const override { return kind_ == dblock::dialect::mysql; }
  std::optional<std::int64_t> acquire_in_line(const std::string& name, const std::string& owner,
                                              std::int64_t ttl_ms) override {
    ++statements_;
    auto* ps = prepared(line_, line_sql_.c_str());
    ps->setString(1, name);
    ps->setString(2, name);
    ps->setString(3, owner);
    ps->setInt64(4, ttl_ms * 1000);
    return owner_fence(ps, owner);
  }
  std::optional<std::int64_t> acquire_in_line_fenced(const std::string& name, const std::string& owner,
                                                     std::int64_t ttl_ms) override {
    ++statements_;
    auto* ps = prepared(line_fenced_, line_fenced_sql_.c_str());
    int i = 0;
    ps->setString(++i, name);
    for (int pass = 0; pass < 2; ++pass) {
      ps->setString(++i, name);
      ps->setString(++i, owner);
      ps->setInt64(++i, ttl_ms);
      ps->setString(++i, "");
      ps->setInt64(++i, 0);
    }
    ps->setString(++i, owner);
    // RETURNING: granted, fence, ... one row per pass; the last is the result.
    std::unique_ptr<sql::ResultSet> rs(ps->executeQuery());
    std::optional<std::int64_t> fence;
    while (rs->next()) fence = rs->getInt(1) == 1 ? std::optional<std::int64_t>(rs->getInt64(2)) : std::nullopt;
    return fence;
  }
  bool probe(const std::string& name, const std::string& owner) override {
    ++statements_;
    prepared(probe_, my_probe)->setString(1, name);
    probe_->setString(2, owner);
    std::unique_ptr<sql::ResultSet> rs(probe_->executeQuery());
    bool found = false;
    while (rs->next()) found = true;
    return found;
  }
  bool rw_read_acquire(const std::string& name, const std::string& owner, std::int64_t ttl_ms) override {
    ++statements_;
    if (kind_ == dblock::dialect::mysql8) draw_fence8();
    prepared(rw_read_, kind_ == dblock::dialect::mysql8 ? rw_read8_sql_.c_str() : my_rw_read)->setString(1, name);
    rw_read_->setString(2, owner);
    rw_read_->setInt64(3, ttl_ms * 1000);
    rw_read_->setString(4, name);
    return rw_read_->executeUpdate() == 1;
  }
  bool permit_acquire(const std::string& name, const std::string& owner, int permits, std::int64_t ttl_ms) override {
    ++statements_;
    if (kind_ == dblock::dialect::mysql8) draw_fence8();
    prepared(permit_, kind_ == dblock::dialect::mysql8 ? permit8_sql_.c_str() : my_permit)->setString(1, name);
    permit_->setString(2, owner);
    permit_->setInt(3, permits);
    permit_->setInt64(4, ttl_ms * 1000);
    permit_->setString(5, name);
    permit_->setInt(6, permits);
    return permit_->executeUpdate() == 1;
  }
  bool holder_release(const std::string& name, const std::string& owner) override {
    ++statements_;
    prepared(holder_release_, my_holder_release)->setString(1, name);
    holder_release_->setString(2, owner);
    return holder_release_->executeUpdate() >= 1;
  }
  bool release(const std::string& name, const std::string& owner) override {
    ++statements_;
    prepared(release_, my_release)->setString(1, name);
    release_->setString(2, owner);
    return release_->executeUpdate() == 1;
  }
  void idem_insert(const std::string& scope, const std::string& key, const std::string& fp, const std::string& owner,
                   std::int64_t lease_ms, std::int64_t retention_ms) override {
    ++statements_;
    prepared(idem_insert_, my_idem_insert)->setString(1, scope);
    idem_insert_->setString(2, key);
    idem_insert_->setString(3, fp);
    idem_insert_->setString(4, owner);
    idem_insert_->setInt64(5, lease_ms * 1000);
    idem_insert_->setInt64(6, retention_ms * 1000);
    idem_insert_->executeUpdate();
  }
  bool idem_lookup(const std::string& scope, const std::string& key) override {
    ++statements_;
    prepared(idem_lookup_, my_idem_lookup)->setString(1, scope);
    idem_lookup_->setString(2, key);
    std::unique_ptr<sql::ResultSet> rs(idem_lookup_->executeQuery());
    bool found = false;
    while (rs->next()) found = true;
    return found;
  }
  std::int64_t reap_batch(std::int64_t grace_ms, std::int64_t limit) override {
    if (!reap_session_) {  // as dblock's reaper: no gap locks on the live rows
      st_->execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
      reap_session_ = true;
    }
    // A DELETE picked as a deadlock victim (1213) was rolled back whole: run it again,
    // as dblock's reaper does.
    for (int attempt = 1;; ++attempt) {
      ++statements_;
      prepared(reap_, my_reap)->setInt64(1, grace_ms * 1000);
      reap_->setInt64(2, limit);
      try {
        return reap_->executeUpdate();
      } catch (const sql::SQLException& e) {
        if (e.getErrorCode() != 1213 || attempt >= 5) throw;
      }
    }
  }
  void exec(const std::string& sql) override { st_->execute(sql); }
  std::int64_t query_int(const std::string& sql) override {
    std::unique_ptr<sql::ResultSet> rs(st_->executeQuery(sql));
    std::int64_t v = 0;
    if (rs->next()) v = rs->getInt64(rs->getMetaData()->getColumnCount());
    while (rs->next()) {
    }
    return v;
  }
  std::string query_text(const std::string& sql) override {
    std::unique_ptr<sql::ResultSet> rs(st_->executeQuery(sql));
    const unsigned n = rs->getMetaData()->getColumnCount();
    std::string out;
    while (rs->next()) {
      for (unsigned i = 1; i <= n; ++i) {
        if (i > 1) out += ' ';
        out += rs->getString(i).asStdString();
      }
      out += '\n';
    }
    return out;
  }
  dblock::database attach() override { return dblock::attach(c_.get(), kind_); }

 private:
  // The MySQL 8.0 twin's upsert (my8_acquire) alone; its affected-row count.
  int upsert8(const std::string& name, const std::string& owner, std::int64_t ttl_ms) {
    prepared(acquire_, my8_acquire)->setString(1, name);
    acquire_->setString(2, owner);
    acquire_->setInt64(3, ttl_ms * 1000);
    acquire_->setString(4, owner);
    acquire_->setString(5, owner);
    acquire_->setInt64(6, ttl_ms * 1000);
    return acquire_->executeUpdate();
  }
  std::optional<std::int64_t> acquire8(const std::string& name, const std::string& owner, std::int64_t ttl_ms) {
    statements_ += 3;
    prepared(draw8_, my8_draw)->executeUpdate();
    upsert8(name, owner, ttl_ms);
    prepared(read8_, my8_read)->setString(1, name);
    std::unique_ptr<sql::ResultSet> rs(read8_->executeQuery());
    std::optional<std::int64_t> fence;
    while (rs->next())
      if (rs->getString(1).asStdString() == owner) fence = rs->getInt64(2);
    return fence;
  }
  dblock::dialect kind_;
  std::unique_ptr<sql::PreparedStatement> draw8_, read8_;
  // Prepared on first use (set-up connections never touch dblock's tables).
  sql::PreparedStatement* prepared(std::unique_ptr<sql::PreparedStatement>& ps, const char* sql) {
    if (!ps) ps.reset(c_->prepareStatement(sql));
    return ps.get();
  }
  // Runs an upsert whose RETURNING gives (owner, fence): the fence when the row is now
  // `owner`'s.
  static std::optional<std::int64_t> owner_fence(sql::PreparedStatement* ps, const std::string& owner) {
    std::unique_ptr<sql::ResultSet> rs(ps->executeQuery());
    std::optional<std::int64_t> fence;
    while (rs->next())
      if (rs->getString(1).asStdString() == owner) fence = rs->getInt64(2);
    return fence;
  }
  // The statement with the wait-line probe in place of its first row's name.
  static std::string with_line_probe(const char* sql) {
    std::string s(sql);
    const std::string from = "VALUES (?,";
    s.replace(s.find(from), from.size(), std::string("VALUES (") + my_line_probe + ",");
    return s;
  }
  sql::Driver* driver_ = nullptr;
  std::unique_ptr<sql::Connection> c_;
  std::unique_ptr<sql::Statement> st_;
  std::unique_ptr<sql::PreparedStatement> acquire_, probe_, release_, idem_insert_, idem_lookup_, reap_;
  std::unique_ptr<sql::PreparedStatement> rw_read_, permit_, holder_release_, line_, line_fenced_;
  const std::string line_sql_ = with_line_probe(my_acquire), line_fenced_sql_ = with_line_probe(my_acquire_line_fenced);
  const std::string rw_read8_sql_ = my8_variant(my_rw_read), permit8_sql_ = my8_variant(my_permit);
  void draw_fence8() {
    ++statements_;
    prepared(draw8_, my8_draw)->executeUpdate();
  }
  bool reap_session_ = false;
};

// ------------------------------------------------------------------ SQLite / SOCI

#define BENCH_SQLITE_NOW "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"

constexpr const char* lite_acquire =
    "INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder) "
    "VALUES (:name, :owner, 1, (SELECT last + 1 FROM dblock_fence WHERE id = 1), " BENCH_SQLITE_NOW
    ", " BENCH_SQLITE_NOW
    " + :ttl, '') "
    "ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, holds = 1, fence = excluded.fence, "
    "acquired_at = excluded.acquired_at, expires_at = excluded.expires_at, holder = excluded.holder "
    "WHERE expires_at <= excluded.acquired_at "
    "RETURNING fence";
constexpr const char* lite_release = "DELETE FROM dblock_locks WHERE name = :name AND owner = :owner";
// Read-write and semaphore floors (see twins.hpp); the fence from the counter row, advanced
// by the same statement's trigger-free UPDATE is left out: the floor of the row write.
constexpr const char* lite_now = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
constexpr const char* lite_probe =
    "SELECT fence FROM dblock_locks WHERE name = :name AND owner <> :owner AND expires_at > " BENCH_SQLITE_NOW;
constexpr const char* lite_idem_insert =
    "INSERT INTO dblock_idempotency (scope, idem_key, fingerprint, status, owner, attempt, lease_expires_at, "
    "created_at, updated_at, expires_at) VALUES (:scope, :key, :fp, 'in_progress', :owner, 1, " BENCH_SQLITE_NOW
    " + :lease, " BENCH_SQLITE_NOW ", " BENCH_SQLITE_NOW ", " BENCH_SQLITE_NOW " + :retention)";
constexpr const char* lite_idem_lookup =
    "SELECT status, response_code, response_body FROM dblock_idempotency WHERE scope = :scope AND idem_key = :key "
    "AND expires_at > " BENCH_SQLITE_NOW;
constexpr const char* lite_reap =
    "DELETE FROM dblock_locks WHERE name IN (SELECT name FROM dblock_locks WHERE expires_at < " BENCH_SQLITE_NOW
    " - :grace ORDER BY expires_at LIMIT :lim)";

class lite_raw final : public raw_client {
 public:
  explicit lite_raw(const dblock::connection_url& u)
      : s_(soci::sqlite3, "db=" + u.database + " timeout=30"),
        one_((s_.prepare << "SELECT 1", soci::into(one_v_))),
        acquire_((s_.prepare << lite_acquire, soci::use(a_name_, "name"), soci::use(a_owner_, "owner"),
                  soci::use(a_ttl_, "ttl"), soci::into(a_fence_, a_ind_))),
        probe_((s_.prepare << lite_probe, soci::use(p_name_, "name"), soci::use(p_owner_, "owner"),
                soci::into(p_fence_, p_ind_))),
        release_((s_.prepare << lite_release, soci::use(r_name_, "name"), soci::use(r_owner_, "owner"))),
        idem_insert_((s_.prepare << lite_idem_insert, soci::use(i_scope_, "scope"), soci::use(i_key_, "key"),
                      soci::use(i_fp_, "fp"), soci::use(i_owner_, "owner"), soci::use(i_lease_, "lease"),
                      soci::use(i_retention_, "retention"))),
        idem_lookup_((s_.prepare << lite_idem_lookup, soci::use(l_scope_, "scope"), soci::use(l_key_, "key"),
                      soci::into(l_status_, l_ind_), soci::into(l_code_, l_code_ind_),
                      soci::into(l_body_, l_body_ind_))),
        reap_((s_.prepare << lite_reap, soci::use(g_grace_, "grace"), soci::use(g_limit_, "lim"))),
        rw_read_((s_.prepare << std::string("INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, "
                                            "permits, fence, acquired_at, expires_at) SELECT :name, :owner, 0, 'r', 1, 0, 0, "
                                            "(SELECT last + 1 FROM dblock_fence WHERE id = 1), ") +
                                lite_now + ", " + lite_now +
                                " + :ttl WHERE NOT EXISTS (SELECT 1 FROM dblock_lock_holders WHERE name = :name "
                                "AND write_holds > 0 AND expires_at > " + lite_now + ")",
                  soci::use(h_name_, "name"), soci::use(h_owner_, "owner"), soci::use(h_ttl_, "ttl"))),
        permit_((s_.prepare << std::string("INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, "
                                           "permits, fence, acquired_at, expires_at) SELECT :name, :owner, n + 1, 's', 1, 0, "
                                           ":permits, (SELECT last + 1 FROM dblock_fence WHERE id = 1), ") +
                               lite_now + ", " + lite_now +
                               " + :ttl FROM (SELECT COUNT(*) AS n FROM dblock_lock_holders WHERE name = :name AND "
                               "expires_at > " + lite_now + ") WHERE n < :permits",
                 soci::use(h_name_, "name"), soci::use(h_owner_, "owner"), soci::use(h_permits_, "permits"),
                 soci::use(h_ttl_, "ttl"))),
        holder_release_((s_.prepare << "DELETE FROM dblock_lock_holders WHERE name = :name AND owner = :owner",
                         soci::use(h_name_, "name"), soci::use(h_owner_, "owner"))) {
    s_ << "PRAGMA synchronous = FULL";  // as sql/sqlite/connect.sql: a grant survives power loss
  }

  void select1() override {
    ++statements_;
    one_.execute(true);
  }
  std::optional<std::int64_t> acquire(const std::string& name, const std::string& owner, std::int64_t ttl_ms) override {
    ++statements_;
    a_name_ = name;
    a_owner_ = owner;
    a_ttl_ = ttl_ms;
    bool got = acquire_.execute(true);
    while (acquire_.fetch()) {  // step to the end: the autocommit transaction ends there
    }
    if (!got || a_ind_ != soci::i_ok) return std::nullopt;
    return a_fence_;
  }
  bool probe(const std::string& name, const std::string& owner) override {
    ++statements_;
    p_name_ = name;
    p_owner_ = owner;
    bool got = probe_.execute(true);
    while (probe_.fetch()) {
    }
    return got;
  }
  bool rw_read_acquire(const std::string& name, const std::string& owner, std::int64_t ttl_ms) override {
    ++statements_;
    h_name_ = name;
    h_owner_ = owner;
    h_ttl_ = ttl_ms;
    rw_read_.execute(true);
    return rw_read_.get_affected_rows() == 1;
  }
  bool permit_acquire(const std::string& name, const std::string& owner, int permits, std::int64_t ttl_ms) override {
    ++statements_;
    h_name_ = name;
    h_owner_ = owner;
    h_ttl_ = ttl_ms;
    h_permits_ = permits;
    permit_.execute(true);
    return permit_.get_affected_rows() == 1;
  }
  bool holder_release(const std::string& name, const std::string& owner) override {
    ++statements_;
    h_name_ = name;
    h_owner_ = owner;
    holder_release_.execute(true);
    return holder_release_.get_affected_rows() >= 1;
  }
  bool release(const std::string& name, const std::string& owner) override {
    ++statements_;
    r_name_ = name;
    r_owner_ = owner;
    release_.execute(true);
    return release_.get_affected_rows() == 1;
  }
  void idem_insert(const std::string& scope, const std::string& key, const std::string& fp, const std::string& owner,
                   std::int64_t lease_ms, std::int64_t retention_ms) override {
    ++statements_;
    i_scope_ = scope;
    i_key_ = key;
    i_fp_ = fp;
    i_owner_ = owner;
    i_lease_ = lease_ms;
    i_retention_ = retention_ms;
    idem_insert_.execute(true);
  }
  bool idem_lookup(const std::string& scope, const std::string& key) override {
    ++statements_;
    l_scope_ = scope;
    l_key_ = key;
    bool got = idem_lookup_.execute(true);
    while (idem_lookup_.fetch()) {
    }
    return got;
  }
  std::int64_t reap_batch(std::int64_t grace_ms, std::int64_t limit) override {
    ++statements_;
    g_grace_ = grace_ms;
    g_limit_ = limit;
    reap_.execute(true);
    return reap_.get_affected_rows();
  }
  [[nodiscard]] const char* begin_statement() const override { return "BEGIN IMMEDIATE"; }
  void exec(const std::string& sql) override { s_ << sql; }
  std::int64_t query_int(const std::string& sql) override {
    long long v = 0;
    soci::indicator ind = soci::i_ok;
    s_ << sql, soci::into(v, ind);
    return ind == soci::i_ok ? v : 0;
  }
  std::string query_text(const std::string& sql) override {
    soci::rowset<soci::row> rs = (s_.prepare << sql);
    std::string out;
    for (const auto& r : rs) {
      for (std::size_t i = 0; i < r.size(); ++i) {
        if (i) out += ' ';
        if (r.get_indicator(i) == soci::i_null) {
          out += "NULL";
          continue;
        }
        switch (r.get_properties(i).get_data_type()) {
          case soci::dt_string:
            out += r.get<std::string>(i);
            break;
          case soci::dt_integer:
            out += std::to_string(r.get<int>(i));
            break;
          case soci::dt_long_long:
            out += std::to_string(r.get<long long>(i));
            break;
          case soci::dt_double:
            out += std::to_string(r.get<double>(i));
            break;
          default:
            out += "?";
            break;
        }
      }
      out += '\n';
    }
    return out;
  }
  dblock::database attach() override { return dblock::attach(s_); }

 private:
  soci::session s_;
  int one_v_ = 0;
  std::string h_name_, h_owner_;
  long long h_ttl_ = 0;
  int h_permits_ = 0;
  soci::statement one_;
  std::string a_name_, a_owner_;
  long long a_ttl_ = 0, a_fence_ = 0;
  soci::indicator a_ind_ = soci::i_ok;
  soci::statement acquire_;
  std::string p_name_, p_owner_;
  long long p_fence_ = 0;
  soci::indicator p_ind_ = soci::i_ok;
  soci::statement probe_;
  std::string r_name_, r_owner_;
  soci::statement release_;
  std::string i_scope_, i_key_, i_fp_, i_owner_;
  long long i_lease_ = 0, i_retention_ = 0;
  soci::statement idem_insert_;
  std::string l_scope_, l_key_, l_status_, l_body_;
  int l_code_ = 0;
  soci::indicator l_ind_ = soci::i_ok, l_code_ind_ = soci::i_ok, l_body_ind_ = soci::i_ok;
  soci::statement idem_lookup_;
  long long g_grace_ = 0, g_limit_ = 0;
  soci::statement reap_;
  soci::statement rw_read_, permit_, holder_release_;
};

}  // namespace

std::unique_ptr<raw_client> connect_raw(const std::string& url, bool found_rows) {
  auto u = dblock::parse_url(url);
  switch (u.kind) {
    case dblock::dialect::postgresql:
      return std::make_unique<pg_raw>(url);
    case dblock::dialect::mysql:
    case dblock::dialect::mysql8:
      return std::make_unique<my_raw>(u, found_rows);
    case dblock::dialect::sqlite:
      return std::make_unique<lite_raw>(u);
  }
  throw std::invalid_argument("unknown dialect");
}

void insert_lock_rows(raw_client& c, dblock::dialect d, const std::string& prefix, int n, int expires_in_s) {
  const std::string count = std::to_string(n), secs = std::to_string(expires_in_s);
  // prefix comes from the harness itself (letters, digits, ':'), never from outside.
  switch (d) {
    case dblock::dialect::postgresql:
      c.exec(
          "INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder) "
          "SELECT '" +
          prefix +
          "' || g, md5(random()::text), 1, nextval('dblock_fence_seq'), now(), "
          "now() + " +
          secs + " * interval '1 second', 'bench' FROM generate_series(1, " + count + ") g");
      c.exec("VACUUM ANALYZE dblock_locks");
      break;
    case dblock::dialect::mysql8:
      // Fences above every drawn one: the counter moves past them first.
      c.exec("UPDATE dblock_fence_counter SET value = value + " + count + " WHERE id = 1");
      c.exec(
          "INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder) "
          "SELECT CONCAT('" +
          prefix +
          "', seq), MD5(RAND()), 1, (SELECT value FROM dblock_fence_counter WHERE id = 1) - " + count +
          " + seq, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL " +
          secs + " SECOND, 'bench' FROM seq_1_to_" + count);
      (void)c.query_text("ANALYZE TABLE dblock_locks");
      break;
    case dblock::dialect::mysql:
      c.exec(
          "INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder) "
          "SELECT CONCAT('" +
          prefix +
          "', seq), MD5(RAND()), 1, NEXTVAL(dblock_fence_seq), UTC_TIMESTAMP(6), "
          "UTC_TIMESTAMP(6) + INTERVAL " +
          secs + " SECOND, 'bench' FROM seq_1_to_" + count);
      (void)c.query_text("ANALYZE TABLE dblock_locks");
      break;
    case dblock::dialect::sqlite:
      c.exec(
          "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < " + count +
          ") "
          "INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder) "
          "SELECT '" +
          prefix +
          "' || i, lower(hex(randomblob(16))), 1, (SELECT last FROM dblock_fence WHERE id = 1) + i, " BENCH_SQLITE_NOW
          ", " BENCH_SQLITE_NOW " + " +
          secs + " * 1000, 'bench' FROM s");
      c.exec("ANALYZE");
      break;
  }
}

}  // namespace dblock_bench
