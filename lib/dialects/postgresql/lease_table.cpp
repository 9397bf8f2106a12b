// lib/dialects/postgresql/lease_table.cpp — lease locks and the wait line on PostgreSQL
// (sql/postgresql/lock_*.sql). A refused try names the holder; a waiter's grant deletes its
// ticket in the same transaction (dblock_lock_acquire), and so does a try answered by a grant
// the previous holder's release handed it (dblock_lock_release_to_line); the final release
// can commit without waiting for its WAL flush; a release NOTIFYs waiters.
#include <algorithm>

#include "core/idempotency_detail.hpp"  // format_utc_ms
#include "core/ops/lease_table.hpp"
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

namespace {

// granted, fence, holds, holder, expires_at, expires_in_ms
constexpr rows::lock_columns acquire_cols{.holder = 3, .fence = 1, .holds = 2, .expires_at = 4, .expires_in = 5};

class postgresql_table final : public lease_table_reads {
 public:
  bool refusal_names_holder() const noexcept override { return true; }
  bool grant_consumes_ticket() const noexcept override { return true; }
  bool async_release() const noexcept override { return true; }

  grant_outcome acquire(backend& b, const grant_request& r) const override {
    const bool waiter = is_line_ticket(r.line_bound);
    if (r.likely_free && !waiter) {
      // The grant alone; no row = not free after all, and lock_acquire.sql decides.
      auto f = b.exec("lock_acquire_fresh", {r.name, r.owner, r.row_ttl_ms, r.holder, r.delay_ms, r.line_bound});
      if (!f.rows.empty()) {
        // Its expiry comes as epoch milliseconds (to_char costs the grant server CPU).
        auto i = rows::lock_row(r.name, f.rows[0], acquire_cols);
        i.expires_at = idem::format_utc_ms(rows::i64(f.rows[0], 4, "lock expires_at_ms"));
        return {true, std::move(i)};
      }
    }
    auto res = b.exec(waiter ? "lock_acquire_ticket" : "lock_acquire",
                      {r.name, r.owner, r.row_ttl_ms, r.holder, r.delay_ms, r.line_bound});
    if (res.rows.empty()) return {};  // free but an earlier waiter is in line, or a lost race
    return {rows::i64(res.rows[0], 0, "lock granted") == 1, rows::lock_row(r.name, res.rows[0], acquire_cols)};
  }

  std::optional<lock_info> holder(backend& b, const std::string& name) const override {
    // holder, fence, expires_at, expires_in_ms, holds, lock_delay_ms
    auto r = b.exec("lock_holder", {name});
    if (r.rows.empty()) return std::nullopt;
    return rows::lock_row(name, r.rows[0],
                          {.holder = 0, .fence = 1, .holds = 4, .expires_at = 2, .expires_in = 3, .lock_delay = 5});
  }

  std::optional<lock_info> probe(backend& b, const std::string& name, const std::string& owner) const override {
    // granted (0), fence, holds, holder, expires_at_ms (UTC epoch), expires_in_ms
    auto r = b.exec("lock_probe", {name, owner});
    if (r.rows.empty()) return std::nullopt;
    auto i = rows::lock_row(name, r.rows[0], acquire_cols);
    i.expires_at = idem::format_utc_ms(rows::i64(r.rows[0], 4, "lock expires_at_ms"));
    return i;
  }

  release_outcome release(backend& b, const std::string& name, const std::string& owner, std::int64_t fence,
                          bool final_hold, bool no_flush, bool to_line, handed_grant* grant) const override {
    const std::vector<value> params{name, owner, fence};
    result r;
    if (final_hold && to_line) {
      // outcome: 0 = not ours, 1 = deleted, 2 = handed to the head of the line, whose owner,
      // ticket and new fence follow. PostgreSQL has no cheap way to say whether the statement
      // committed on its own: the library's own view of the connection decides (an attached
      // connection's open transaction is passed with within()).
      r = b.exec("lock_release_to_line", params);
      const auto outcome = r.rows.empty() ? 0 : rows::i64(r.rows[0], 0, "release outcome");
      if (outcome == 2 && grant && !b.raw().in_transaction())
        *grant = {rows::text(r.rows[0], 1), rows::i64(r.rows[0], 2, "handed ticket"), rows::i64(r.rows[0], 3, "handed fence")};
      return outcome == 2 ? release_outcome::handed : outcome == 1 ? release_outcome::deleted : release_outcome::not_ours;
    }
    if (!final_hold) {
      r = b.exec("lock_decrement", params);
    } else if (no_flush) {
      // Inside a transaction set_config(..., true) would last until that transaction ends
      // and weaken its commit: only a release that is its own transaction skips the flush.
      r = b.exec_unless_in_transaction("lock_release_async", "lock_release", params);
    } else {
      r = b.exec("lock_release", params);
    }
    if (r.rows.empty()) return release_outcome::not_ours;
    return final_hold ? release_outcome::deleted : release_outcome::decremented;
  }

  std::vector<std::string> renew(backend& b, const std::string& owner, std::int64_t ttl_ms,
                                 const std::vector<std::string>& local, bool waiting) const override {
    // One statement in every case; a session with read-write or semaphore holds renews them in
    // the same statement (lock_renew_holders*.sql), the others send the plain one.
    if (std::any_of(local.begin(), local.end(), [](const std::string& k) { return is_holder_key(k); }))
      return renewed_keys(b.exec(waiting ? "lock_renew_holders_waiting" : "lock_renew_holders", {owner, ttl_ms}));
    std::vector<std::string> names;
    for (auto& row : b.exec(waiting ? "lock_renew_waiting" : "lock_renew", {owner, ttl_ms}).rows)
      names.push_back(rows::text(row, 0));
    return names;
  }

};

}  // namespace

const lease_table_ops& postgresql_lease_table() noexcept {
  static const postgresql_table t;
  return t;
}

}  // namespace dblock::detail
