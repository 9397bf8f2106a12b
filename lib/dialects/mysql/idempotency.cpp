// lib/dialects/mysql/idempotency.cpp — the idempotency rows on MariaDB: the columns every
// dialect's idem_*.sql returns alike (lib/dialects/common/families.hpp).
#include "dialects/common/families.hpp"

namespace dblock::detail {

const idempotency_ops& mysql_idempotency() noexcept {
  static const idempotency_rows ops;
  return ops;
}

}  // namespace dblock::detail
