// lib/dialects/mysql8/lease_table.cpp — lease locks on MySQL 8.0 (sql/mysql8/lock_*.sql).
// No INSERT ... RETURNING and no sequences: the grant is the stored function of migration
// 0013 (sql/mysql8/lock_acquire.sql: SELECT dblock_lock_grant(...)), which writes the row, draws
// a new grant's fence from the fence counter while the row is ours and reads the row back, in
// one statement; its one text answer is read here. Renewal, release and the reads are
// MariaDB's statements.
#include "core/ops/lease_table.hpp"
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"
#include "dblock/errors.hpp"

namespace dblock::detail {

namespace {

// The answer's fields in lock_state.sql's column order: granted, fence, holds, holder,
// expires_at, expires_in_ms, lock_delay_ms.
constexpr rows::lock_columns state_cols{
    .holder = 3, .fence = 1, .holds = 2, .expires_at = 4, .expires_in = 5, .lock_delay = 6};

// "granted fence holds expires_in_ms lock_delay_ms expires_at holder": six fields separated
// by single spaces, then the holder (which may hold spaces, or be empty) to the end.
std::vector<cell> grant_fields(const std::string& text) {
  const auto f = rows::split_answer(text, 6);
  if (!f) throw internal_error("lock_acquire returned '" + text + "'");
  const auto& v = *f;
  return {cell(v[0]), cell(v[1]), cell(v[2]), cell(v[6]), cell(v[5]), cell(v[3]), cell(v[4])};
}

class mysql8_table final : public mysql_family_table {
 public:
  grant_outcome acquire(backend& b, const grant_request& r) const override {
    // One statement: a failure (a deadlock victim, a Galera certification conflict) took the
    // row it wrote back with it, and retry_conflicts may simply run it again.
    if (is_line_ticket(r.line_bound)) {
      if (auto seen = waiter_look_durable(b, r.name, r.owner, r.line_bound)) return std::move(*seen);
    }
    auto res = b.exec("lock_acquire", {r.name, r.owner, r.row_ttl_ms, r.holder, r.delay_ms, r.line_bound});
    const std::string* answer = rows::first_text(res);
    if (!answer) return {};  // no row: refused by the line
    const auto row = grant_fields(*answer);
    return {rows::i64(row, 0, "lock granted") == 1, rows::lock_row(r.name, row, state_cols)};
  }
};

}  // namespace

const lease_table_ops& mysql8_lease_table() noexcept {
  static const mysql8_table t;
  return t;
}

}  // namespace dblock::detail
