// lib/dialects/mysql/lease_table.cpp — lease locks and the wait line on MariaDB
// (sql/mysql/lock_*.sql). The upsert draws a new grant's fence in a second pass over the row
// it just locked (fence order = grant order); its RETURNING names the holder of a refused
// try. A granted waiter deletes its ticket itself (a trigger could not: the grant reads the
// waiters table). The other statements are shared with MySQL 8.0 (mysql_family_table in
// lib/dialects/common/families.hpp).
#include "core/ops/lease_table.hpp"
#include "dblock/errors.hpp"
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

namespace {

// granted, fence, holds, holder, expires_at, expires_in_ms[, lock_delay_ms]
constexpr rows::lock_columns acquire_cols{.holder = 3, .fence = 1, .holds = 2, .expires_at = 4, .expires_in = 5};

class mysql_table final : public mysql_family_table {
 public:
  grant_outcome acquire(backend& b, const grant_request& r) const override {
    if (is_line_ticket(r.line_bound)) {
      if (auto seen = waiter_look_durable(b, r.name, r.owner, r.line_bound)) return std::move(*seen);
    }
    auto res = b.exec("lock_acquire", {r.name, r.owner, r.row_ttl_ms, r.holder, r.delay_ms, r.line_bound});
    if (res.rows.empty()) return {};  // an earlier waiter is in line: nothing written
    // One row per pass of the upsert; the last is the row as the statement left it.
    const auto& row = res.rows.back();
    grant_outcome out{rows::i64(row, 0, "lock granted") == 1, rows::lock_row(r.name, row, acquire_cols)};
    if (out.granted && out.state->fence <= 0)
      throw internal_error("lock_acquire: the grant of '" + r.name + "' has no fence (the upsert's passes came out of order)");
    return out;
  }
};

}  // namespace

const lease_table_ops& mysql_lease_table() noexcept {
  static const mysql_table t;
  return t;
}

}  // namespace dblock::detail
