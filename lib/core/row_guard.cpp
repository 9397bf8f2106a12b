// lib/core/row_guard.cpp — transactional row guards (dblock/row_guard.hpp): lock_row and
// insert_or_lock, written once over the backend and the dialect's sql/ files. Dialect
// differences handled here: PostgreSQL aborts a transaction on any error, so NOWAIT and
// bounded attempts run inside a savepoint; MariaDB undoes only the statement on a lock
// wait timeout (unless innodb_rollback_on_timeout), and cannot bind FOR UPDATE WAIT n,
// so a bounded wait sets innodb_lock_wait_timeout around the statement; SQLite has no
// row locks (BEGIN IMMEDIATE holds the database's writer lock).
#include <algorithm>
#include <chrono>
#include <string>

#include "core/backend.hpp"
#include "core/text.hpp"
#include "core/user_sql.hpp"
#include "dblock/errors.hpp"
#include "dblock/row_guard.hpp"

namespace dblock {

const char* to_string(lock_outcome o) noexcept {
  switch (o) {
    case lock_outcome::locked: return "locked";
    case lock_outcome::not_found: return "not found";
    case lock_outcome::busy: return "busy";
  }
  return "?";
}

const char* to_string(insert_outcome o) noexcept {
  switch (o) {
    case insert_outcome::inserted: return "inserted";
    case insert_outcome::existing: return "existing";
  }
  return "?";
}

namespace {

using detail::backend;
using detail::statement;

row_lock_result found(const detail::result& r) {
  const auto n = static_cast<std::int64_t>(r.rows.size());
  return {n > 0 ? lock_outcome::locked : lock_outcome::not_found, n};
}

bool first_is(const detail::result& r, std::string_view want) {
  return !r.rows.empty() && !r.rows[0].empty() && r.rows[0][0] && *r.rows[0][0] == want;
}

std::int64_t first_int(const detail::result& r) {
  if (r.rows.empty() || r.rows[0].empty()) return 0;
  return detail::parse_int_cell_or_null(r.rows[0][0], "row guard count").value_or(0);
}

// PostgreSQL: NOWAIT (bounded = nullopt) or a bounded wait, inside a savepoint so that
// 55P03 leaves the caller's transaction usable.
row_lock_result pg_guarded(backend& b, const statement& lock_st, const std::vector<value>& params,
                           std::optional<std::chrono::milliseconds> bounded) {
  b.exec("row_guard_savepoint");
  std::optional<std::string> previous;
  detail::result r;
  try {
    if (bounded) {
      auto s = b.exec("lock_timeout_set", {std::to_string(bounded->count()) + "ms"});
      previous = s.rows.at(0).at(0).value_or("0");
    }
    r = b.exec_statement(lock_st, params);
  } catch (const lock_not_available&) {
    b.exec("row_guard_rollback");  // also undoes the SET LOCAL lock_timeout
    b.exec("row_guard_release");
    return {lock_outcome::busy, 0};
  }
  b.exec("row_guard_release");
  if (previous) b.exec("lock_timeout_restore", {*previous});
  return found(r);
}

// MariaDB / MySQL: NOWAIT, or a bounded wait through the session's innodb_lock_wait_timeout.
row_lock_result mysql_guarded(backend& b, const statement& lock_st, const std::vector<value>& params,
                              std::optional<std::chrono::milliseconds> bounded) {
  bool timeout_set = false;
  if (bounded) {
    const auto secs = std::max<std::int64_t>(1, std::chrono::ceil<std::chrono::seconds>(*bounded).count());
    b.exec("lock_wait_timeout_set", {secs});
    timeout_set = true;
  }
  auto restore = [&] {
    if (timeout_set) {
      timeout_set = false;
      b.exec("lock_wait_timeout_restore");
    }
  };
  detail::result r;
  try {
    r = b.exec_statement(lock_st, params);
  } catch (const lock_not_available& e) {
    restore();
    // 1205 (lock wait timeout; MariaDB's NOWAIT too) undoes only the statement, unless the
    // server runs with innodb_rollback_on_timeout: then the transaction is gone and
    // "busy" would invite the caller to go on writing outside it.
    if (e.vendor_code() == 1205 && first_is(b.exec("rollback_on_timeout"), "1"))
      throw lock_not_available(std::string(e.what()) +
                                   " (innodb_rollback_on_timeout is ON: the server rolled back the whole "
                                   "transaction; run it again)",
                               e.sqlstate(), e.vendor_code());
    return {lock_outcome::busy, 0};
  } catch (...) {
    try {
      restore();
    } catch (...) {
      // The first error is the one to report (a dead connection fails both).
    }
    throw;
  }
  restore();
  return found(r);
}

}  // namespace

row_lock_result lock_row(transaction_ref tx, std::string_view table, std::string_view key_column, const value& key,
                         const row_lock_options& opts) {
  backend& b = *tx.backend();
  detail::check_column(key_column, "key column");
  detail::check_key(key, "lock_row");
  const detail::identifier_slots ids{{"table", std::string(table)}, {"key", std::string(key_column)}};
  lock_wait mode = opts.wait;
  if (mode == lock_wait::bounded && opts.timeout <= std::chrono::milliseconds::zero()) mode = lock_wait::nowait;
  const std::vector<value> params{key};

  if (b.kind() == dialect::sqlite) {
    // No row locks: BEGIN IMMEDIATE already holds the writer lock (see row_guard.hpp).
    const statement& st = detail::user_statement(b, "row_lock", ids);
    detail::require_transaction(b, "lock_row");
    return found(b.exec_statement(st, params));
  }

  // Render (and so validate) everything this call may run before running anything.
  const statement& st = detail::user_statement(
      b, mode == lock_wait::nowait ? "row_lock_nowait" : mode == lock_wait::skip_locked ? "row_lock_skip_locked" : "row_lock",
      ids);
  const statement* count_st = mode == lock_wait::skip_locked ? &detail::user_statement(b, "row_count", ids) : nullptr;
  detail::require_transaction(b, "lock_row");

  switch (mode) {
    case lock_wait::wait:
      return found(b.exec_statement(st, params));
    case lock_wait::skip_locked: {
      auto r = found(b.exec_statement(st, params));
      if (r.locked()) return r;
      // Nothing free: held by others (busy) or absent (not found)? A plain read, no lock.
      return {first_int(b.exec_statement(*count_st, params)) > 0 ? lock_outcome::busy : lock_outcome::not_found, 0};
    }
    case lock_wait::nowait:
    case lock_wait::bounded: {
      std::optional<std::chrono::milliseconds> bounded;
      if (mode == lock_wait::bounded) bounded = opts.timeout;
      return b.kind() == dialect::postgresql ? pg_guarded(b, st, params, bounded) : mysql_guarded(b, st, params, bounded);
    }
  }
  throw internal_error("lock_row: unknown wait mode");
}

insert_result insert_or_lock(transaction_ref tx, std::string_view table, std::string_view key_column, const value& key,
                             const column_values& columns) {
  backend& b = *tx.backend();
  detail::check_column(key_column, "key column");
  detail::check_key(key, "insert_or_lock");
  std::vector<std::string> names;
  names.reserve(columns.size());
  for (const auto& c : columns) names.push_back(c.column);
  detail::check_columns(names, 0, {key_column}, "insert_or_lock");

  detail::identifier_slots ids{{"table", std::string(table)}, {"key", std::string(key_column)}};
  for (std::size_t i = 0; i < names.size(); ++i) ids.emplace_back(std::string("c").append(std::to_string(i + 1)), names[i]);
  std::vector<value> params{key};
  for (const auto& c : columns) params.push_back(c.value);

  const statement& ins = detail::user_statement(b, "insert_or_lock_" + std::to_string(names.size()), ids);
  switch (b.kind()) {
    case dialect::sqlite: {
      detail::require_transaction(b, "insert_or_lock");
      auto r = b.exec_statement(ins, params);
      return {r.affected > 0 ? insert_outcome::inserted : insert_outcome::existing};
    }
    case dialect::postgresql: {
      const statement& lock_st = detail::user_statement(b, "row_lock", {ids[0], ids[1]});
      detail::require_transaction(b, "insert_or_lock");
      const std::vector<value> key_only{key};
      // ON CONFLICT DO NOTHING waits for a concurrent inserter of the same key and then
      // either inserts (it rolled back) or does nothing (it committed). In READ
      // COMMITTED the row can still vanish before we lock it (deleted and committed in
      // between): insert again, a few times.
      for (int round = 0; round < 3; ++round) {
        if (b.exec_statement(ins, params).affected > 0) return {insert_outcome::inserted};
        if (!b.exec_statement(lock_st, key_only).rows.empty()) return {insert_outcome::existing};
      }
      throw serialization_failure("insert_or_lock: the row with this key was deleted between insert and lock, three "
                                  "times; run the transaction again");
    }
    case dialect::mysql: {
      detail::require_transaction(b, "insert_or_lock");
      b.exec("insert_or_lock_reset");
      b.exec_statement(ins, params);
      switch (first_int(b.exec("insert_or_lock_result", {key}))) {
        case 0: return {insert_outcome::inserted};
        case 1: return {insert_outcome::existing};
        default:
          throw unique_violation("insert_or_lock: the row collided with an existing row on another unique index of " +
                                     std::string(table) + " (not on " + std::string(key_column) + ")",
                                 "23000", 1062);
      }
    }
  }
  throw internal_error("insert_or_lock: unknown dialect");
}

}  // namespace dblock
