// dblock/row_guard.hpp — transactional row guards: helpers that run inside the caller's
// transaction (a dblock::transaction_ref from dblock::within(...) or dblock::transact)
// and hold what they lock until that transaction commits or rolls back.
//
//   lock_row        SELECT ... FOR UPDATE on the rows matching a key: wait, NOWAIT,
//                   SKIP LOCKED or a bounded wait. Outcome locked / not_found / busy.
//   insert_or_lock  insert-first dedup (the order-number check): inserts the row, or
//                   locks the existing one. Outcome inserted / existing.
//
// Expected outcomes are values; failures throw dblock::error subclasses (a deadlock or
// serialization failure is a transaction_conflict: run the whole transaction again, see
// dblock/retry.hpp). Table and column names are validated and quoted, keys and values
// are bound. The exact SQL per dialect is in sql/<dialect>/row_*.sql,
// insert_or_lock_*.sql, and in docs/row-guards.md.
//
// SQLite has no row locks. A dblock transaction on SQLite is BEGIN IMMEDIATE: it holds
// the database's single writer lock from its first statement, so every row is already
// locked against other writers, and contention shows up earlier, as lock_not_available
// from BEGIN IMMEDIATE once the busy timeout ran out. On SQLite lock_row therefore never
// returns busy, whatever the wait mode, and NOWAIT / bounded waits do not shorten
// anything: set the busy timeout of the connection (sqlite:path?timeout=N) instead.
// Begin your own SOCI transactions on SQLite with BEGIN IMMEDIATE too.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "dblock/transaction.hpp"
#include "dblock/value.hpp"

namespace dblock {

enum class lock_outcome {
  locked,     // at least one matching row is now locked by this transaction
  not_found,  // no row has this key
  busy,       // the row exists but another transaction holds it (NOWAIT, SKIP LOCKED, bounded)
};
[[nodiscard]] const char* to_string(lock_outcome o) noexcept;

enum class lock_wait {
  wait,         // FOR UPDATE: wait for other holders (as long as the server's own lock timeout allows)
  nowait,       // FOR UPDATE NOWAIT: busy at once when held
  skip_locked,  // FOR UPDATE SKIP LOCKED: lock what is free, skip what is held
  bounded,      // wait at most row_lock_options::timeout, then busy
};

struct row_lock_options {
  // How to wait for a row another transaction holds (lock_wait). Default: wait.
  lock_wait wait = lock_wait::wait;
  // Bound of lock_wait::bounded (MariaDB rounds up to whole seconds; zero or negative
  // means nowait); see docs/row-guards.md. Default: 5 s.
  std::chrono::milliseconds timeout{5000};
};

struct row_lock_result {
  lock_outcome outcome = lock_outcome::not_found;
  std::int64_t rows = 0;  // rows locked (skip_locked: only the free ones)
  [[nodiscard]] bool locked() const noexcept { return outcome == lock_outcome::locked; }
};

// Locks the rows of `table` whose `key_column` equals `key` until tx ends.
// tx must be inside a transaction (throws invalid_argument when dblock can see it is not;
// a caller's Connector/C++ or SOCI connection must have begun one). Round trips:
//   wait / skip_locked hit: 1; skip_locked miss: 2 (a plain count tells busy from not_found)
//   nowait: 1 on MariaDB (+1 after a 1205 to check innodb_rollback_on_timeout),
//           3 on PostgreSQL (SAVEPOINT, SELECT, RELEASE; busy: 4)
//   bounded: 3 on MariaDB (set/restore innodb_lock_wait_timeout around it), 5 on
//           PostgreSQL (savepoint, lock_timeout set/restore)
//   SQLite: 1 in every mode.
// Throws invalid_argument for a bad identifier or a NULL key (nothing runs), deadlock
// when chosen as a deadlock victim, lock_not_available in `wait` mode on a server lock
// timeout, or on MariaDB when innodb_rollback_on_timeout=ON rolled the whole
// transaction back (busy cannot be a value then).
[[nodiscard]] row_lock_result lock_row(transaction_ref tx, std::string_view table, std::string_view key_column,
                                       const value& key, const row_lock_options& opts = {});

enum class insert_outcome {
  inserted,  // this transaction inserted the row (and holds it until it ends)
  existing,  // a row with the key already existed (committed); it is now locked by this transaction
};
[[nodiscard]] const char* to_string(insert_outcome o) noexcept;

struct insert_result {
  insert_outcome outcome = insert_outcome::inserted;
  [[nodiscard]] bool inserted() const noexcept { return outcome == insert_outcome::inserted; }
};

// Insert-first dedup. `key_column` must carry a unique index (PRIMARY KEY or UNIQUE on
// that one column). Inserts (key_column = key, columns...) — at most 4 extra columns —
// or, when a row with that key exists, locks it exclusively and leaves it unchanged.
// Concurrent callers with the same key never see a duplicate-key error or a deadlock
// from this call: one inserts, the others wait for its transaction and get `existing`
// (or `inserted`, when the first one rolled back).
//   PostgreSQL: INSERT ... ON CONFLICT (key) DO NOTHING; existing: SELECT ... FOR UPDATE.
//               Round trips: 1 inserted, 2 existing.
//   MariaDB:    INSERT ... ON DUPLICATE KEY UPDATE key = key (locks the duplicate X);
//               3 round trips (clear / insert / read a session-variable marker).
//   SQLite:     INSERT ... ON CONFLICT (key) DO NOTHING; 1 round trip.
// A collision on another unique index is not swallowed: it throws unique_violation.
// On MariaDB a key column without a unique index cannot be detected: every call inserts.
// Throws invalid_argument for bad identifiers, a NULL key, more than 4 columns or a
// column named twice (nothing runs).
[[nodiscard]] insert_result insert_or_lock(transaction_ref tx, std::string_view table, std::string_view key_column,
                                           const value& key, const column_values& columns = {});

}  // namespace dblock
