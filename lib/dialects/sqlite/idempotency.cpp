// lib/dialects/sqlite/idempotency.cpp — the idempotency rows on SQLite: the columns every
// dialect's idem_*.sql returns alike (lib/dialects/common/families.hpp).
#include "dialects/common/families.hpp"

namespace dblock::detail {

const idempotency_ops& sqlite_idempotency() noexcept {
  static const idempotency_rows ops;
  return ops;
}

}  // namespace dblock::detail
