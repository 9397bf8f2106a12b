// lib/dialects/sqlite/idempotency.cpp — the idempotency rows on SQLite: the columns every
// dialect's idem_*.sql returns alike (lib/dialects/common/families.hpp), and a read before
// each claim (idem_peek.sql), so that a replay writes nothing. The read returns the record's
// own columns; the outcome is decided by judge_record (families.hpp), as idem_claim.sql decides
// it.
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

namespace {
class sqlite_idempotency_rows final : public idempotency_rows {
  bool peeks_before_claim() const noexcept override { return true; }

  // same_fingerprint, status, attempt, recovery_point, response_code, response_body (hex),
  // lease_left_ms (idem_peek.sql).
  std::optional<claim_row> peek(const result& r) const override {
    if (r.rows.empty()) return std::nullopt;  // a new key (or one past its retention): claim it
    const auto& row = r.rows.front();
    if (row.size() < 7) throw internal_error("idem_peek returned " + std::to_string(row.size()) + " columns");
    if (!row[1]) throw internal_error("idem_peek returned no status");
    record_seen seen;
    seen.same = rows::i64(row, 0, "idem_peek same_fingerprint") != 0;
    seen.status = *row[1];
    const auto lease_left = parse_int_cell_or_null(row[6], "idem_peek lease_left_ms");
    // An attempt of this request whose lease ran out, or that was reopened: the claim takes
    // it over (attempt + 1).
    if (seen.same && seen.status == "in_progress" && (!lease_left || *lease_left <= 0)) return std::nullopt;
    seen.attempt = rows::i64(row, 2, "idem_peek attempt");
    seen.recovery_point = row[3];
    if (row[4]) seen.code = static_cast<int>(rows::i64(row, 4, "idem_peek response_code"));
    seen.body_hex = row[5];
    seen.lease_left_ms = lease_left.value_or(0);
    return judge_record(std::move(seen), "idem_peek");
  }
};
}  // namespace

const idempotency_ops& sqlite_idempotency() noexcept {
  static const sqlite_idempotency_rows ops;
  return ops;
}

}  // namespace dblock::detail
