// lib/dialects/mysql8/traits.cpp — what the MySQL 8.0 dialect declares about itself: the
// MySQL family's protocol and URLs (mysql://, soci+mysql://), its own sql/mysql8/ and
// migrations/mysql8/, written only in syntax MySQL 8.0 and MariaDB 10.11 both accept.
#include "core/dialect.hpp"

namespace dblock::detail {

const dialect_traits& mysql8_traits() noexcept {
  static const dialect_traits t{.kind = dialect::mysql8,
                                .name = "mysql8",
                                .identifier_quote = '`',
                                .notify = false,
                                .async_commit = false,
                                .session_locks = true,
                                .single_writer = false,
                                .network = true,
                                .url_is_path = false,
                                .url_needs_host = true,
                                .url_pooler = false,
                                .family = dialect::mysql};
  return t;
}

}  // namespace dblock::detail
