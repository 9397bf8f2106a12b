// bench/twins.hpp — the hand-written twins: each operation dblock benchmarks, written
// in raw SQL the way a competent engineer would write it by hand with the same
// guarantees (server clock, fencing token from the same sequence, takeover of an expired
// row, durable autocommit), run through the plain client library — libpqxx, Connector/C++
// or SOCI sqlite3 — with statements prepared once per connection. They work on dblock's
// own tables (same columns, same indexes, same fence sequence), so the only difference
// measured is what dblock does on top. The SQL is in bench/twins.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dblock/database.hpp"
#include "dblock/url.hpp"

namespace dblock_bench {

class raw_client {
 public:
  virtual ~raw_client() = default;

  // SELECT 1: the round-trip floor (prepared where that is faster: libpqxx, SQLite).
  virtual void select1() = 0;
  // One upsert: inserts a fresh grant or takes over an expired row; the fence when
  // granted, nothing when another owner holds the lock live.
  virtual std::optional<std::int64_t> acquire(const std::string& name, const std::string& owner,
                                              std::int64_t ttl_ms) = 0;
  // One durable autocommit upsert that grants `name` to `owner` when the row is free or
  // expired, in one round trip; true when it wrote. acquire() where that is one statement;
  // under the MySQL 8.0 dialect the upsert alone, without the twin's fence draw and read
  // back (the fence it writes is not meaningful). The hot lock's physical limit (one commit
  // and one round trip) and its floor mode time this.
  virtual bool write_grant(const std::string& name, const std::string& owner, std::int64_t ttl_ms) {
    return acquire(name, owner, ttl_ms).has_value();
  }
  // A read-only busy check: true when another owner holds `name` live (SELECT by primary
  // key, no write). Not what dblock sends: the cost of a read-first design's busy path.
  virtual bool probe(const std::string& name, const std::string& owner) = 0;
  // DELETE ... WHERE name AND owner; true when the row was ours.
  virtual bool release(const std::string& name, const std::string& owner) = 0;
  // PostgreSQL only (elsewhere the same as release()): the DELETE commits without waiting
  // for its WAL flush (set_config('synchronous_commit', 'off', true) in the statement). Not
  // what dblock sends: the cost of a pair whose release is asynchronous, the design
  // change docs/performance.md discusses.
  virtual bool release_async(const std::string& name, const std::string& owner) { return release(name, owner); }
  // The multi-lock floor: BEGIN (BEGIN IMMEDIATE on SQLite), acquire() of each name in
  // the given order, COMMIT, or ROLLBACK at the first refusal; true when all were granted.
  bool acquire_set(const std::vector<std::string>& names, const std::string& owner, std::int64_t ttl_ms) {
    exec(begin_statement());
    ++statements_;
    for (const auto& n : names)
      if (!acquire(n, owner, ttl_ms)) {
        exec("ROLLBACK");
        ++statements_;
        return false;
      }
    exec("COMMIT");
    ++statements_;
    return true;
  }
  // What a grant that honours the wait line costs on MariaDB, step by step (other dialects:
  // line_twins() is false and these are not called). acquire_in_line(): acquire() whose
  // upsert is also refused while a live waiter of the name holds a ticket: one probe of
  // dblock_lock_waiters in the VALUES row, a refusal being an error: a NULL name fails NOT
  // NULL under a strict sql_mode, and the name's CHECK (LENGTH(name) >= 1) otherwise.
  // acquire_in_line_fenced(): dblock's grant statement (its assignments, its RETURNING, the
  // fence drawn by a second pass on the row already inserted and locked) with its two
  // passes written as two VALUES rows and the same probe, in place of dblock's
  // INSERT ... SELECT, which refuses without an error. Both return the fence when granted.
  [[nodiscard]] virtual bool line_twins() const { return false; }
  virtual std::optional<std::int64_t> acquire_in_line(const std::string&, const std::string&, std::int64_t) {
    return std::nullopt;
  }
  virtual std::optional<std::int64_t> acquire_in_line_fenced(const std::string&, const std::string&, std::int64_t) {
    return std::nullopt;
  }
  // A plain INSERT of a new in-progress idempotency record (the floor of begin() on a new key).
  virtual void idem_insert(const std::string& scope, const std::string& key, const std::string& fingerprint,
                           const std::string& owner, std::int64_t lease_ms, std::int64_t retention_ms) = 0;
  // SELECT of a record's status and stored response by primary key (the floor of a replay:
  // a replay returns them); true when found.
  virtual bool idem_lookup(const std::string& scope, const std::string& key) = 0;
  // Read-write lock and semaphore floors (dblock_lock_holders, migration 0008): one
  // hand-written statement each way, not gated, for the cost of the same rows' writes.
  // A read grant: INSERT ... SELECT ... WHERE no live writer of the name; true when granted.
  virtual bool rw_read_acquire(const std::string& name, const std::string& owner, std::int64_t ttl_ms) = 0;
  // A permit: INSERT ... SELECT into the next slot WHERE fewer than `permits` are live.
  virtual bool permit_acquire(const std::string& name, const std::string& owner, int permits,
                              std::int64_t ttl_ms) = 0;
  // DELETE of the owner's holds of the name; true when one was deleted.
  virtual bool holder_release(const std::string& name, const std::string& owner) = 0;
  // One batch of a hand-written reaper: deletes up to `limit` lock rows expired for
  // longer than grace_ms; returns how many.
  virtual std::int64_t reap_batch(std::int64_t grace_ms, std::int64_t limit) = 0;

  // Unprepared helpers for set-up and diagnostics (not timed), and BEGIN/COMMIT above.
  [[nodiscard]] virtual const char* begin_statement() const { return "BEGIN"; }
  virtual void exec(const std::string& sql) = 0;
  virtual std::int64_t query_int(const std::string& sql) = 0;
  virtual std::string query_text(const std::string& sql) = 0;

  // dblock on this very connection (dblock::attach): its statements are then counted by
  // database::round_trips(), the watchdog's renewals included. Use the client for nothing
  // else afterwards.
  virtual dblock::database attach() = 0;

  // Statements sent by the timed methods above.
  [[nodiscard]] std::uint64_t statements() const noexcept { return statements_; }

 protected:
  std::uint64_t statements_ = 0;
};

// Connects with the plain client library of the combination's dialect: libpqxx for
// postgresql://, Connector/C++ for mysql:// (found_rows: CLIENT_FOUND_ROWS, as dblock
// sets it), SOCI sqlite3 for sqlite: (synchronous = FULL, as dblock sets it).
[[nodiscard]] std::unique_ptr<raw_client> connect_raw(const std::string& url, bool found_rows = false);

// Set-up, not timed: inserts n lock rows named <prefix><i> in one statement, each with a
// random owner, expiring expires_in_s seconds from now (negative: expired that long ago),
// then refreshes the planner statistics (VACUUM ANALYZE / ANALYZE TABLE / ANALYZE).
void insert_lock_rows(raw_client& c, dblock::dialect d, const std::string& prefix, int n, int expires_in_s);

}  // namespace dblock_bench
