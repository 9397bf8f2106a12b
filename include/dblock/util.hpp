// dblock/util.hpp — identifier validation: the table and column names dblock's row
// guards and conditional writes accept.
#pragma once

#include <string_view>

namespace dblock {

// True for [A-Za-z_][A-Za-z0-9_]{0,62}, optionally one "schema." prefix of the same form.
[[nodiscard]] bool is_valid_identifier(std::string_view name) noexcept;

}  // namespace dblock
