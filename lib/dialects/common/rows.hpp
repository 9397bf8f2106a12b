// lib/dialects/common/rows.hpp — reading the first cell of a statement's result, for the
// dialect implementations of lib/core/ops/ (lib/core reads typed rows only). Internal.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/backend.hpp"
#include "core/text.hpp"

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

}  // namespace dblock::detail::rows
