// lib/dialects/postgresql/traits.cpp — what PostgreSQL's dialect declares about itself.
#include "core/dialect.hpp"

namespace dblock::detail {

const dialect_traits& postgresql_traits() noexcept {
  static const dialect_traits t{.kind = dialect::postgresql,
                                .name = "postgresql",
                                .identifier_quote = '"',
                                .notify = true,
                                .async_commit = true,
                                .session_locks = true,
                                .single_writer = false,
                                .network = true,
                                .case_sensitive_columns = true,
                                .url_is_path = false,
                                .url_needs_host = false,
                                .url_pooler = true,
                                .fresh_grant_on_unheld_own_row = true};
  return t;
}

}  // namespace dblock::detail
