// lib/core/catalog.hpp — access to the SQL embedded at build time (sql/ and
// migrations/, see cmake/embed_sql.cmake), placeholder rewriting for each client
// library, and splitting of migration scripts into statements. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dblock/url.hpp"

namespace dblock::detail {

struct embedded_file {
  const char* path;  // relative to the source root, e.g. "sql/postgresql/ping.sql"
  const char* text;
};
extern const embedded_file embedded_files[];
extern const std::size_t embedded_file_count;

// How a client library wants parameters written.
enum class placeholder_style {
  dollar,    // $1..$n, each number may repeat (libpqxx)
  question,  // ? per occurrence (Connector/C++)
  named,     // :a1..:ak, one fresh name per occurrence (SOCI)
};

// A runtime statement ready for one client library. SQL files always write
// parameters as $1..$n; `order` maps each placeholder occurrence (in text order)
// to the 0-based parameter it binds, for styles that bind per occurrence.
struct statement {
  std::string name;  // file stem, e.g. "lock_acquire"
  std::string text;
  std::vector<int> order;
  int param_count = 0;  // highest $n
  // 1..catalog_size() for the catalog's statements (get_statement: one immutable object per
  // file and style for the process's life), 0 for others (render_statement). A driver may
  // key per-connection state by it instead of hashing the text.
  std::uint32_t id = 0;
};

[[nodiscard]] std::string_view dialect_dir(dialect d) noexcept;

// Embedded file text by relative path; nullptr when absent.
[[nodiscard]] const char* find_embedded(std::string_view path) noexcept;

// The statement sql/<dialect>/<name>.sql rewritten for `style`; thread-safe. The first call
// for a dialect and style rewrites all of its files; later calls only look the name up.
// Throws internal_error when the file does not exist.
[[nodiscard]] const statement& get_statement(dialect d, placeholder_style style, std::string_view name);
// An upper bound of the ids of get_statement's statements (statement::id).
[[nodiscard]] std::uint32_t catalog_size() noexcept;

// A statement with identifier slots: sql/<dialect>/<name>.sql may contain {slot}
// markers (e.g. {table}, {key}); each is replaced by the slot's identifier, validated
// and quoted per dialect (dblock::quote_identifier). Values stay $n parameters.
// Throws invalid_argument for a bad identifier, internal_error for an unfilled slot.
[[nodiscard]] statement render_statement(dialect d, placeholder_style style, std::string_view name,
                                         const std::vector<std::pair<std::string, std::string>>& identifiers);

// Rewrites $n placeholders outside quotes and comments. Exposed for unit tests.
[[nodiscard]] statement rewrite_placeholders(std::string_view name, std::string_view sql,
                                             placeholder_style style);

// Splits a script into statements on top-level semicolons, honouring quotes,
// comments and PostgreSQL dollar quotes; drops empty statements.
[[nodiscard]] std::vector<std::string> split_statements(std::string_view script);

}  // namespace dblock::detail

namespace dblock {

// Validates (throws invalid_argument naming the value) and quotes per dialect:
// "a"."b" on PostgreSQL and SQLite, `a`.`b` on MySQL (lib/core/util.cpp).
[[nodiscard]] std::string quote_identifier(std::string_view name, dialect d);

}  // namespace dblock
