// lib/dialects/mysql/traits.cpp — what the MySQL/MariaDB dialect declares about itself.
#include "core/dialect.hpp"

namespace dblock::detail {

const dialect_traits& mysql_traits() noexcept {
  static const dialect_traits t{.kind = dialect::mysql,
                                .name = "mysql",
                                .identifier_quote = '`',
                                .notify = false,
                                .async_commit = false,
                                .session_locks = true,
                                .single_writer = false,
                                .network = true,
                                .url_is_path = false,
                                .url_needs_host = true,
                                .url_pooler = false};
  return t;
}

}  // namespace dblock::detail
