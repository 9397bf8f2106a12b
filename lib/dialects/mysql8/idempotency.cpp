// lib/dialects/mysql8/idempotency.cpp — the idempotency rows on MySQL 8.0: the claim is the
// stored function of migration 0011 (MySQL 8.0 has no INSERT ... RETURNING), whose one text
// answer lib/dialects/common/families.hpp reads; the other statements return the columns every
// dialect's idem_*.sql returns alike.
#include "dialects/common/families.hpp"

namespace dblock::detail {

const idempotency_ops& mysql8_idempotency() noexcept {
  static const idempotency_claim_text ops;
  return ops;
}

}  // namespace dblock::detail
