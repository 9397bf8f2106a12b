// lib/dialects/mysql8/idempotency.cpp — the idempotency rows on MySQL 8.0: the same columns
// as every dialect's (lib/dialects/common/families.hpp), but the claim is two statements:
// MySQL 8 has no INSERT ... RETURNING, so idem_claim.sql upserts and idem_claim_read.sql
// reads the row back, on the same connection with no other statement in between.
#include "dialects/common/families.hpp"

namespace dblock::detail {

namespace {
class mysql8_idempotency_rows final : public idempotency_rows {
 public:
  result run_claim(backend& b, const std::vector<value>& params) const override {
    return b.exclusive([&] {
      (void)b.exec("idem_claim", params);
      // scope, key, fingerprint, owner: the read decides the outcome as RETURNING would.
      return b.exec("idem_claim_read", {params.at(0), params.at(1), params.at(2), params.at(3)});
    });
  }
};
}  // namespace

const idempotency_ops& mysql8_idempotency() noexcept {
  static const mysql8_idempotency_rows ops;
  return ops;
}

}  // namespace dblock::detail
