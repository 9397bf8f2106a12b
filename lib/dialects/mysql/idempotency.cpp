// lib/dialects/mysql/idempotency.cpp — the idempotency rows on MariaDB. idem_get.sql and
// idem_list.sql return the columns every dialect returns alike (lib/dialects/common/
// families.hpp); the claim (sql/mysql/idem_claim.sql) returns the record's own columns after
// its upsert, and the outcome is decided here by the rule the other dialects' claims apply on
// the server. A record past its retention comes back marked expired, for the caller to drop
// before it claims again.
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
    const std::string& status = *row[2];
    if (status != "in_progress" && status != "completed" && status != "failed")
      throw internal_error("idem_claim returned status '" + status + "'");
    const bool ours = row[0] && *row[0] == sent.owner;
    const bool same = *row[1] == sent.fingerprint;
    const bool in_progress = status == "in_progress";
    claim_row c;
    c.outcome = ours          ? idempotency_outcome::started
                : !same       ? idempotency_outcome::mismatch
                : in_progress ? idempotency_outcome::in_progress
                              : idempotency_outcome::replay;
    c.failed = status == "failed";
    c.attempt = rows::i64(row, 3, "idem_claim attempt");
    c.recovery_point = row[4];
    if (c.outcome == idempotency_outcome::replay) {  // the stored response goes to the same request only
      if (row[5]) c.code = static_cast<int>(rows::i64(row, 5, "idem_claim response_code"));
      c.body_hex = row[6];
    }
    // Another attempt's live lease: the time left on it, whole milliseconds rounded up.
    if (!ours && in_progress) {
      if (const auto left_us = parse_int_cell_or_null(row[7], "idem_claim lease_left_us"); left_us && *left_us > 0)
        c.retry_after_ms = (*left_us + 999) / 1000;
    }
    return c;
  }
};
}  // namespace

const idempotency_ops& mysql_idempotency() noexcept {
  static const mysql_idempotency_rows ops;
  return ops;
}

}  // namespace dblock::detail
