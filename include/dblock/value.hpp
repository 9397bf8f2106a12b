// dblock/value.hpp — a value dblock binds to a statement parameter (never spliced into
// SQL text): NULL, a 64-bit integer, or text. Used by the row guards and conditional
// writes (dblock/row_guard.hpp, dblock/optimistic.hpp) for keys and column values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace dblock {

// 42 binds an integer, "A-1001" or std::string binds text, nullptr binds NULL.
// Other types (dates, decimals) are passed as text the database converts.
using value = std::variant<std::nullptr_t, std::int64_t, std::string>;

// One "column = value" of a write. The column is a user identifier: validated against
// [A-Za-z_][A-Za-z0-9_]* (at most 63 characters) and quoted per dialect; the value is bound.
struct column_value {
  std::string column;
  dblock::value value;
};
using column_values = std::vector<column_value>;

}  // namespace dblock
