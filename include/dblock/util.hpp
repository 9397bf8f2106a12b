// dblock/util.hpp — small public helpers shared by the library and the command:
// durations ("250ms", "30s", "5m", "1h", bare number = seconds) and identifiers.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "dblock/url.hpp"

namespace dblock {

// Throws invalid_argument naming the value when it is not a valid, non-negative duration
// ("0" is valid: `dblock exec --wait 0` means do not wait).
[[nodiscard]] std::chrono::milliseconds parse_duration(std::string_view text);

// True for [A-Za-z_][A-Za-z0-9_]{0,62}, optionally one "schema." prefix of the same form.
[[nodiscard]] bool is_valid_identifier(std::string_view name) noexcept;
// Validates (throws invalid_argument naming the value) and quotes per dialect:
// "a"."b" on PostgreSQL and SQLite, `a`.`b` on MySQL.
[[nodiscard]] std::string quote_identifier(std::string_view name, dialect d);

}  // namespace dblock
