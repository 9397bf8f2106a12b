// lib/dialects/common/rows.hpp — reading statement rows into typed values, for the dialect
// implementations of lib/core/ops/: only code under lib/dialects/ reads cells by position
// (lib/core reads typed rows only). Internal.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "core/text.hpp"
#include "dblock/lock.hpp"

namespace dblock::detail::rows {

// The first row's first cell equals `want` (false for no row or NULL).
[[nodiscard]] inline bool first_is(const result& r, std::string_view want) {
  return !r.rows.empty() && !r.rows[0].empty() && r.rows[0][0] && *r.rows[0][0] == want;
}

// The first row's first cell as an integer; 0 for no row or NULL.
[[nodiscard]] inline std::int64_t first_int(const result& r, std::string_view what) {
  if (r.rows.empty() || r.rows[0].empty()) return 0;
  return parse_int_cell_or_null(r.rows[0][0], what).value_or(0);
}

inline std::int64_t i64(const std::vector<cell>& r, std::size_t col, std::string_view what) {
  return parse_int_cell(r.at(col), what);
}

inline std::string text(const std::vector<cell>& r, std::size_t col) { return r.at(col).value_or(""); }

// The columns of a lock row, by position in the statement.
struct lock_columns {
  std::size_t holder, fence, holds, expires_at, expires_in;
  std::size_t lock_delay = static_cast<std::size_t>(-1);  // -1: not in the statement
};

inline lock_info lock_row(const std::string& name, const std::vector<cell>& r, const lock_columns& c) {
  lock_info i;
  i.name = name;
  i.holder = text(r, c.holder);
  i.fence = i64(r, c.fence, "lock fence");
  i.holds = static_cast<int>(i64(r, c.holds, "lock holds"));
  i.expires_at = text(r, c.expires_at);
  i.expires_in = std::chrono::milliseconds(i64(r, c.expires_in, "lock expires_in_ms"));
  if (c.lock_delay != static_cast<std::size_t>(-1))
    i.lock_delay = std::chrono::milliseconds(i64(r, c.lock_delay, "lock lock_delay_ms"));
  return i;
}

}  // namespace dblock::detail::rows
