// lib/core/user_sql.hpp — statements on user tables for the row guards and conditional
// writes (row_guard.cpp, optimistic.cpp): sql/<dialect>/<name>.sql rendered with
// validated, quoted identifiers (render_statement) and cached per client style, plus
// the argument checks those helpers share. Internal.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/backend.hpp"
#include "dblock/value.hpp"

namespace dblock::detail {

using identifier_slots = std::vector<std::pair<std::string, std::string>>;

// sql/<dialect>/<name>.sql for b's dialect and client, identifier slots filled. Throws
// invalid_argument for a bad identifier (before anything runs). Cached, thread-safe;
// the reference stays valid for the life of the process.
[[nodiscard]] const statement& user_statement(backend& b, std::string_view name, const identifier_slots& ids);

// A column name: a plain identifier (no schema prefix). Throws invalid_argument naming `what`.
void check_column(std::string_view column, std::string_view what);
// True when a and b name the same column in dialect d. dblock quotes every identifier:
// quoted PostgreSQL names are case-sensitive; MySQL/MariaDB column names and SQLite
// names are not (ASCII case folding; identifiers are ASCII).
[[nodiscard]] bool same_column(dialect d, std::string_view a, std::string_view b) noexcept;
// 1..4 (min_count..4) distinct columns, none the same as a reserved one (key, version,
// fence), compared by same_column(d). Throws invalid_argument naming the problem.
void check_columns(dialect d, const std::vector<std::string>& columns, std::size_t min_count,
                   const std::vector<std::string_view>& reserved, std::string_view helper);
// Throws invalid_argument when the key is NULL.
void check_key(const value& key, std::string_view helper);
// Throws invalid_argument unless b is inside a transaction (as far as dblock can tell).
void require_transaction(backend& b, std::string_view helper);

// Most columns one write or read helper handles (one SQL file per count).
inline constexpr std::size_t max_columns = 4;

}  // namespace dblock::detail
