// lib/dialects/mysql/idempotency.cpp — the idempotency rows on MariaDB. idem_get.sql and
// idem_list.sql return the columns every dialect returns alike (lib/dialects/common/
// families.hpp); the claim (sql/mysql/idem_claim.sql) returns the record's own columns after
// its upsert, read here; the outcome is decided by judge_record (families.hpp), the rule the
// other dialects' claims apply on the server. A record past its retention comes back marked
// expired, for the caller to drop before it claims again.
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

namespace {
class mysql_idempotency_rows final : public idempotency_rows {
  // owner, fingerprint, status, attempt, recovery_point, response_code, response_body (hex),
  // lease_left_us, expired.
  std::optional<claim_row> claim(const result& r, const claim_sent& sent) const override {
    if (r.rows.empty()) return std::nullopt;
    const auto& row = r.rows.front();
    if (row.size() < 9) throw internal_error("idem_claim returned " + std::to_string(row.size()) + " columns");
    if (rows::i64(row, 8, "idem_claim expired") != 0) {
      claim_row gone;
      gone.expired = true;
      return gone;
    }
    if (!row[1] || !row[2]) throw internal_error("idem_claim returned no fingerprint or status");
    record_seen seen;
    seen.ours = row[0] && *row[0] == sent.owner;
    seen.same = *row[1] == sent.fingerprint;
    seen.status = *row[2];
    seen.attempt = rows::i64(row, 3, "idem_claim attempt");
    seen.recovery_point = row[4];
    if (row[5]) seen.code = static_cast<int>(rows::i64(row, 5, "idem_claim response_code"));
    seen.body_hex = row[6];
    // The lease's time left in whole milliseconds, rounded up.
    if (const auto left_us = parse_int_cell_or_null(row[7], "idem_claim lease_left_us"); left_us && *left_us > 0)
      seen.lease_left_ms = (*left_us + 999) / 1000;
    return judge_record(std::move(seen), "idem_claim");
  }
};
}  // namespace

const idempotency_ops& mysql_idempotency() noexcept {
  static const mysql_idempotency_rows ops;
  return ops;
}

}  // namespace dblock::detail
