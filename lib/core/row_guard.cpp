// lib/core/row_guard.cpp — transactional row guards (dblock/row_guard.hpp): lock_row and
// insert_or_lock, written once over the backend and the dialect's sql/ files. What each
// dialect does differently (savepoints on PostgreSQL, innodb_lock_wait_timeout on MariaDB,
// no row locks on SQLite) is its row_guard_ops (lib/dialects/<dialect>/row_guard.cpp).
#include <algorithm>
#include <chrono>
#include <string>

#include "core/backend.hpp"
#include "core/ops/row_guard.hpp"
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
}  // namespace

row_lock_result lock_row(transaction_ref tx, std::string_view table, std::string_view key_column, const value& key,
                         const row_lock_options& opts) {
  backend& b = *detail::backend_of(tx);
  detail::check_column(key_column, "key column");
  detail::check_key(key, "lock_row");
  const detail::identifier_slots ids{{"table", std::string(table)}, {"key", std::string(key_column)}};
  lock_wait mode = opts.wait;
  if (mode == lock_wait::bounded && opts.timeout <= std::chrono::milliseconds::zero()) mode = lock_wait::nowait;
  const std::vector<value> params{key};

  const auto& ops = detail::row_guards_for(b.kind());

  if (!ops.row_locks()) {
    // No row locks: every wait mode is the plain read (see row_guard.hpp).
    const statement& st = detail::user_statement(b, "row_lock", ids);
    detail::require_transaction(b, "lock_row");
    return detail::rows_found(b.exec_statement(st, params));
  }

  // Render (and so validate) everything this call may run before running anything.
  const statement& st = detail::user_statement(
      b, mode == lock_wait::nowait ? "row_lock_nowait" : mode == lock_wait::skip_locked ? "row_lock_skip_locked" : "row_lock",
      ids);
  const statement* count_st = mode == lock_wait::skip_locked ? &detail::user_statement(b, "row_count", ids) : nullptr;
  detail::require_transaction(b, "lock_row");

  switch (mode) {
    case lock_wait::wait:
      return detail::rows_found(b.exec_statement(st, params));
    case lock_wait::skip_locked: {
      auto r = detail::rows_found(b.exec_statement(st, params));
      if (r.locked()) return r;
      // Nothing free: held by others (busy) or absent (not found)? A plain read, no lock.
      return {ops.count(b, *count_st, params) > 0 ? lock_outcome::busy : lock_outcome::not_found, 0};
    }
    case lock_wait::nowait:
    case lock_wait::bounded: {
      std::optional<std::chrono::milliseconds> bounded;
      if (mode == lock_wait::bounded) bounded = opts.timeout;
      return ops.guarded(b, st, params, bounded);
    }
  }
  throw internal_error("lock_row: unknown wait mode");
}

insert_result insert_or_lock(transaction_ref tx, std::string_view table, std::string_view key_column, const value& key,
                             const column_values& columns) {
  backend& b = *detail::backend_of(tx);
  detail::check_column(key_column, "key column");
  detail::check_key(key, "insert_or_lock");
  std::vector<std::string> names;
  names.reserve(columns.size());
  for (const auto& c : columns) names.push_back(c.column);
  detail::check_columns(b.kind(), names, 0, {key_column}, "insert_or_lock");

  detail::identifier_slots ids{{"table", std::string(table)}, {"key", std::string(key_column)}};
  for (std::size_t i = 0; i < names.size(); ++i) ids.emplace_back(std::string("c").append(std::to_string(i + 1)), names[i]);
  std::vector<value> params{key};
  for (const auto& c : columns) params.push_back(c.value);

  const statement& ins = detail::user_statement(b, "insert_or_lock_" + std::to_string(names.size()), ids);
  detail::require_transaction(b, "insert_or_lock");
  return {detail::row_guards_for(b.kind()).insert_or_lock(b, ids, ins, params, table, key_column)};
}

}  // namespace dblock
