// lib/dialects/mysql/lease_table.cpp — lease locks and the wait line on MariaDB
// (sql/mysql/lock_*.sql). The upsert draws a new grant's fence in a second pass over the row
// it just locked (fence order = grant order); its RETURNING names the holder of a refused
// try; the renewal counts matched rows (CLIENT_FOUND_ROWS) and reads names only when fewer matched;
// tickets are renewed by a second statement while the session waits, and a granted waiter
// deletes its ticket itself (a trigger could not: the grant reads the waiters table).
#include "core/idempotency_detail.hpp"  // format_utc_ms
#include "core/ops/lease_table.hpp"
#include "dblock/errors.hpp"
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

namespace {

// granted, fence, holds, holder, expires_at, expires_in_ms[, lock_delay_ms]
constexpr rows::lock_columns acquire_cols{.holder = 3, .fence = 1, .holds = 2, .expires_at = 4, .expires_in = 5};

class mysql_table final : public lease_table_reads {
 public:
  bool refusal_names_holder() const noexcept override { return true; }
  bool grant_consumes_ticket() const noexcept override { return false; }
  bool async_release() const noexcept override { return false; }

  grant_outcome acquire(backend& b, const grant_request& r) const override {
    auto res = b.exec("lock_acquire", {r.name, r.owner, r.row_ttl_ms, r.holder, r.delay_ms, r.line_bound});
    if (res.rows.empty()) return {};  // an earlier waiter is in line: nothing written
    // One row per pass of the upsert; the last is the row as the statement left it.
    const auto& row = res.rows.back();
    grant_outcome out{rows::i64(row, 0, "lock granted") == 1, rows::lock_row(r.name, row, acquire_cols)};
    if (out.granted && out.state->fence <= 0)
      throw internal_error("lock_acquire: the grant of '" + r.name + "' has no fence (the upsert's passes came out of order)");
    return out;
  }

  std::optional<lock_info> holder(backend& b, const std::string& name) const override {
    auto r = b.exec("lock_state", {name, std::string()});
    if (r.rows.empty()) return std::nullopt;
    auto c = acquire_cols;
    c.lock_delay = 6;
    return rows::lock_row(name, r.rows[0], c);
  }

  std::optional<lock_info> probe(backend& b, const std::string& name, const std::string& owner) const override {
    auto r = b.exec("lock_probe", {name, owner});
    if (r.rows.empty()) return std::nullopt;
    auto i = rows::lock_row(name, r.rows[0], acquire_cols);
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

const lease_table_ops& mysql_lease_table() noexcept {
  static const mysql_table t;
  return t;
}

}  // namespace dblock::detail
