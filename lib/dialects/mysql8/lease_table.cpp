// lib/dialects/mysql8/lease_table.cpp — lease locks on MySQL 8.0 (sql/mysql8/lock_*.sql).
// No INSERT ... RETURNING and no sequences: the upsert writes the row (a new grant with
// fence 0, "not drawn yet"), the fence counter is advanced only for a new grant while the
// row is ours (lock_fence_draw.sql, lock_fence_set.sql), and lock_state.sql reads the row
// back. The statements run back to back on one connection (LAST_INSERT_ID() is per
// connection). Renewal, release and the reads are MariaDB's statements.
#include "core/ops/lease_table.hpp"
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"
#include "dblock/errors.hpp"

namespace dblock::detail {

namespace {

// granted, fence, holds, holder, expires_at, expires_in_ms, lock_delay_ms (lock_state.sql)
constexpr rows::lock_columns state_cols{
    .holder = 3, .fence = 1, .holds = 2, .expires_at = 4, .expires_in = 5, .lock_delay = 6};

class mysql8_table final : public mysql_family_table {
 public:
  grant_outcome acquire(backend& b, const grant_request& r) const override {
    auto grant = [&]() -> grant_outcome {
      auto w = b.exec("lock_acquire", {r.name, r.owner, r.row_ttl_ms, r.holder, r.delay_ms, r.line_bound});
      if (w.affected <= 0) return {};  // an earlier waiter is in line: nothing written
      // A new grant has fence 0 until it draws; a re-entry or a refusal matches nothing here.
      if (b.exec("lock_fence_draw", {r.name, r.owner}).affected > 0) (void)b.exec("lock_fence_set", {r.name, r.owner});
      auto s = b.exec("lock_state", {r.name, r.owner});
      if (s.rows.empty()) return {};  // released or reaped since: a lost race
      return {rows::i64(s.rows[0], 0, "lock granted") == 1, rows::lock_row(r.name, s.rows[0], state_cols)};
    };
    // On a Galera cluster every grant's draw conflicts with concurrent draws on other nodes
    // (certification): one transaction, so that a conflict also takes back the row written
    // before it and the whole grant can simply run again.
    if (b.multi_primary() && !b.raw().in_transaction()) {
      grant_outcome out;
      b.in_transaction([&] { out = grant(); });
      return out;
    }
    return b.exclusive([&]() -> grant_outcome {
      try {
        return grant();
      } catch (const error& e) {
        // A draw that failed leaves our row without a fence. Were it kept, a retry behind
        // waiters who joined meanwhile would wait for our own row: take it back (a row with
        // fence 0 was never reported granted). Best effort; it expires otherwise.
        if (e.kind() != error_kind::connection && e.kind() != error_kind::commit_unknown) {
          try {
            (void)b.exec("lock_fence_abandon", {r.name, r.owner});
          } catch (...) {
          }
        }
        throw;
      }
    });
  }
};

}  // namespace

const lease_table_ops& mysql8_lease_table() noexcept {
  static const mysql8_table t;
  return t;
}

}  // namespace dblock::detail
