// lib/dialects/sqlite/idempotency.cpp — the idempotency rows on SQLite: the columns every
// dialect's idem_*.sql returns alike (lib/dialects/common/families.hpp), and a read before
// each claim (idem_peek.sql), so that a replay writes nothing.
#include "dialects/common/families.hpp"

namespace dblock::detail {

namespace {
class sqlite_idempotency_rows final : public idempotency_rows {
  bool peeks_before_claim() const noexcept override { return true; }
};
}  // namespace

const idempotency_ops& sqlite_idempotency() noexcept {
  static const sqlite_idempotency_rows ops;
  return ops;
}

}  // namespace dblock::detail
