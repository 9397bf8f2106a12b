// lib/dialects/sqlite/traits.cpp — what SQLite's dialect declares about itself.
#include "core/dialect.hpp"

namespace dblock::detail {

const dialect_traits& sqlite_traits() noexcept {
  static const dialect_traits t{.kind = dialect::sqlite,
                                .name = "sqlite",
                                .identifier_quote = '"',
                                .notify = false,
                                .async_commit = false,
                                .session_locks = false,
                                .single_writer = true,
                                .network = false,
                                .url_is_path = true,
                                .url_needs_host = false,
                                .url_pooler = false};
  return t;
}

}  // namespace dblock::detail
