// lib/dialects/mysql8/lease_table.cpp — lease locks on MySQL 8.0 (sql/mysql8/lock_*.sql).
// No INSERT ... RETURNING and no sequences: the upsert writes the row (a new grant with
// fence 0, "not drawn yet"), the fence counter is advanced only for a new grant while the
// row is ours (lock_fence_draw.sql, lock_fence_set.sql), and lock_state.sql reads the row
// back. The statements run back to back on one connection (LAST_INSERT_ID() is per
// connection). Renewal, release and the reads are MariaDB's statements.
#include "core/idempotency_detail.hpp"  // format_utc_ms
#include "core/ops/lease_table.hpp"
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

namespace {

// granted, fence, holds, holder, expires_at, expires_in_ms, lock_delay_ms (lock_state.sql)
constexpr rows::lock_columns state_cols{
    .holder = 3, .fence = 1, .holds = 2, .expires_at = 4, .expires_in = 5, .lock_delay = 6};
// granted, fence, holds, holder, expires_at_ms, expires_in_ms (lock_probe.sql)
constexpr rows::lock_columns probe_cols{.holder = 3, .fence = 1, .holds = 2, .expires_at = 4, .expires_in = 5};

class mysql8_table final : public lease_table_reads {
 public:
  bool refusal_names_holder() const noexcept override { return true; }
  bool grant_consumes_ticket() const noexcept override { return false; }
  bool async_release() const noexcept override { return false; }

  grant_outcome acquire(backend& b, const grant_request& r) const override {
    return b.exclusive([&]() -> grant_outcome {
      auto w = b.exec("lock_acquire", {r.name, r.owner, r.row_ttl_ms, r.holder, r.delay_ms, r.line_bound});
      if (w.affected <= 0) return {};  // an earlier waiter is in line: nothing written
      // A new grant has fence 0 until it draws; a re-entry or a refusal matches nothing here.
      if (b.exec("lock_fence_draw", {r.name, r.owner}).affected > 0) (void)b.exec("lock_fence_set", {r.name, r.owner});
      auto s = b.exec("lock_state", {r.name, r.owner});
      if (s.rows.empty()) return {};  // released or reaped since: a lost race
      return {rows::i64(s.rows[0], 0, "lock granted") == 1, rows::lock_row(r.name, s.rows[0], state_cols)};
    });
  }

  std::optional<lock_info> holder(backend& b, const std::string& name) const override {
    auto r = b.exec("lock_state", {name, std::string()});
    if (r.rows.empty()) return std::nullopt;
    return rows::lock_row(name, r.rows[0], state_cols);
  }

  std::optional<lock_info> probe(backend& b, const std::string& name, const std::string& owner) const override {
    auto r = b.exec("lock_probe", {name, owner});
    if (r.rows.empty()) return std::nullopt;
    auto i = rows::lock_row(name, r.rows[0], probe_cols);
    i.expires_at = idem::format_utc_ms(rows::i64(r.rows[0], 4, "lock expires_at_ms"));
    return i;
  }

  release_outcome release(backend& b, const std::string& name, const std::string& owner, std::int64_t fence,
                          bool final_hold, bool /*no_flush*/) const override {
    auto r = b.exec(final_hold ? "lock_release" : "lock_decrement", {name, owner, fence});
    if (r.affected <= 0) return release_outcome::not_ours;
    return final_hold ? release_outcome::deleted : release_outcome::decremented;
  }

  std::vector<std::string> renew(backend& b, const std::string& owner, std::int64_t ttl_ms,
                                 const std::vector<std::string>& local, bool waiting) const override {
    std::vector<std::string> names;
    auto r = b.exec("lock_renew", {owner, ttl_ms});
    if (waiting) (void)b.exec("lock_line_renew", {owner, ttl_ms});
    if (static_cast<std::size_t>(r.affected) >= local.size()) return local;  // the usual case
    for (auto& row : b.exec("lock_owned", {owner}).rows) names.push_back(rows::text(row, 0));
    return names;
  }
};

}  // namespace

const lease_table_ops& mysql8_lease_table() noexcept {
  static const mysql8_table t;
  return t;
}

}  // namespace dblock::detail
