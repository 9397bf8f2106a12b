// lib/dialects/common/rows.hpp — reading statement rows into typed values, for the dialect
// implementations of lib/core/ops/: only code under lib/dialects/ reads cells by position
// (lib/core reads typed rows only). Internal.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
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

// The first row's first cell as text; nullptr for no row or NULL (a stored function's answer
// that says "nothing").
[[nodiscard]] inline const std::string* first_text(const result& r) {
  return r.rows.empty() || r.rows[0].empty() || !r.rows[0][0] ? nullptr : &*r.rows[0][0];
}

// A stored function's one-text answer: `n` fields separated by single spaces, then the rest of
// the text (which may hold spaces, or be empty) as one more field. nullopt when the text has
// fewer than `n` spaces.
[[nodiscard]] inline std::optional<std::vector<std::string>> split_answer(const std::string& text, int n) {
  std::vector<std::string> f;
  std::size_t pos = 0;
  for (int i = 0; i < n; ++i) {
    const auto sp = text.find(' ', pos);
    if (sp == std::string::npos) return std::nullopt;
    f.push_back(text.substr(pos, sp - pos));
    pos = sp + 1;
  }
  f.push_back(text.substr(pos));
  return f;
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
