// lib/dialects/mysql8/idempotency.cpp — the idempotency rows on MySQL 8.0, which has no
// INSERT ... RETURNING: the claim is a stored function whose one text answer
// lib/dialects/common/families.hpp reads; the other statements return the columns every
// dialect's idem_*.sql returns alike. Outside a transaction the claim first sends
// idem_claim_insert.sql (migration 0012's function: insert first, read on a duplicate), and
// only when it answers NULL (a record past its retention or open to a takeover) idem_claim.sql
// (migration 0011's function: read first, upsert under the row's exclusive lock, read back).
// Inside a transaction it sends idem_claim.sql alone: the insert's duplicate check leaves a
// shared lock until commit, on which two takeovers of one record would deadlock.
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

namespace {
class mysql8_idempotency_rows final : public idempotency_claim_text {
  result run_claim(backend& b, const std::vector<value>& params) const override {
    if (b.raw().in_transaction()) return b.exec("idem_claim", params);
    result r = b.exec("idem_claim_insert", params);
    if (!rows::first_text(r)) return b.exec("idem_claim", params);
    return r;
  }
};
}  // namespace

const idempotency_ops& mysql8_idempotency() noexcept {
  static const mysql8_idempotency_rows ops;
  return ops;
}

}  // namespace dblock::detail
