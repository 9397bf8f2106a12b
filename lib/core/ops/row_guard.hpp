// lib/core/ops/row_guard.hpp — the row guards' statement family (lock_row and
// insert_or_lock on user tables: sql/<dialect>/row_*.sql, insert_or_lock_*.sql, the
// lock-timeout statements). Implemented per dialect in lib/dialects/<dialect>/row_guard.cpp.
// Statements are rendered by the caller (user_statement) before anything runs. Internal.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "core/user_sql.hpp"
#include "dblock/row_guard.hpp"

namespace dblock::detail {

// A locking read's outcome: locked when it returned rows.
[[nodiscard]] inline row_lock_result rows_found(const result& r) {
  const auto n = static_cast<std::int64_t>(r.rows.size());
  return {n > 0 ? lock_outcome::locked : lock_outcome::not_found, n};
}

class row_guard_ops {
 public:
  virtual ~row_guard_ops() = default;
  // False where there are no row locks (SQLite: BEGIN IMMEDIATE already holds the writer
  // lock), so every wait mode is the plain row_lock read.
  [[nodiscard]] virtual bool row_locks() const noexcept = 0;
  // `lock_st` NOWAIT (bounded empty) or waiting at most `bounded`; busy when not locked,
  // with the caller's transaction still usable.
  [[nodiscard]] virtual row_lock_result guarded(backend& b, const statement& lock_st, const std::vector<value>& params,
                                                std::optional<std::chrono::milliseconds> bounded) const = 0;
  // What row_count.sql counted.
  [[nodiscard]] virtual std::int64_t count(backend& b, const statement& count_st, const std::vector<value>& params) const = 0;
  // Runs insert_or_lock_<n>.sql (`ins`, params: key then values) inside the caller's
  // transaction and says whether it inserted; `ids` are its table and key slots first.
  [[nodiscard]] virtual insert_outcome insert_or_lock(backend& b, const identifier_slots& ids, const statement& ins,
                                                      const std::vector<value>& params, std::string_view table,
                                                      std::string_view key_column) const = 0;
};

[[nodiscard]] const row_guard_ops& row_guards_for(dialect d) noexcept;

}  // namespace dblock::detail
