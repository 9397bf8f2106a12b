// lib/core/ops/idempotency.hpp — the idempotency statement family's rows
// (sql/<dialect>/idem_claim.sql, idem_get.sql, idem_list.sql) as typed values. The dialects'
// statements return the same columns, read once in lib/dialects/common/ (idempotency_rows) and
// handed out per dialect by lib/dialects/<dialect>/idempotency.cpp, which also reads a claim
// that differs (MySQL 8.0's one text, MariaDB's raw record columns).
// Internal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "dblock/idempotency.hpp"

namespace dblock::detail {

// What one claim statement answered.
struct claim_row {
  idempotency_outcome outcome = idempotency_outcome::started;
  std::int64_t attempt = 0;
  std::optional<std::string> recovery_point;
  std::optional<int> code;
  std::optional<std::string> body_hex;  // the stored response body, hex-encoded
  bool failed = false;                  // replay of a record finished as failed
  std::int64_t retry_after_ms = 0;      // in_progress: time left on the live attempt's lease
  // The claim found a record past its retention and left it (MariaDB): the caller deletes it
  // (idem_drop_expired.sql) and claims again; the other fields mean nothing.
  bool expired = false;
};

// What the library sent with a claim ($3 and $4), for a dialect whose claim statement returns
// the record's own columns and leaves the outcome to the library.
struct claim_sent {
  std::string_view fingerprint;
  std::string_view owner;  // the new attempt's token: the claim is ours when the row holds it
};

class idempotency_ops {
 public:
  virtual ~idempotency_ops() = default;
  // Sends the claim (sql/<dialect>/idem_claim.sql; $1 scope, $2 key, $3 fingerprint, $4 owner,
  // $5 lease ms, $6 retention ms) and returns what answers it: one statement on every dialect
  // (an override could pair an upsert with a read on the same connection).
  [[nodiscard]] virtual result run_claim(backend& b, const std::vector<value>& params) const {
    return b.exec("idem_claim", params);
  }
  // The claim's row; nullopt when the statement returned none (PostgreSQL: the conflicting
  // row was committed after the statement's snapshot, the caller runs it again).
  [[nodiscard]] virtual std::optional<claim_row> claim(const result& r, const claim_sent& sent) const = 0;
  // Whether a claim first sends idem_peek.sql, a read that answers every outcome that
  // writes nothing (replay, mismatch, in progress). Worth it where a read costs far less
  // than the claim's write: SQLite, in process, whose upsert writes even an unchanged row.
  [[nodiscard]] virtual bool peeks_before_claim() const noexcept { return false; }
  // What idem_peek.sql's row answers (dialects that peek override it): nullopt when the claim
  // must run.
  [[nodiscard]] virtual std::optional<claim_row> peek(const result&) const { return std::nullopt; }
  // One row of idem_get.sql (with_body) or idem_list.sql.
  [[nodiscard]] virtual idempotency_record record(const std::vector<cell>& row, bool with_body) const = 0;
};

[[nodiscard]] const idempotency_ops& idempotency_for(dialect d) noexcept;

}  // namespace dblock::detail
