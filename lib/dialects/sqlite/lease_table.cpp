// lib/dialects/sqlite/lease_table.cpp — lease locks and the wait line on SQLite
// (sql/sqlite/lock_*.sql). A refused upsert returns no row; the holder is then read with
// lock_probe.sql, so that the session's next tries of the name read (lock_probe.sql alone,
// or lock_probe_expiry.sql when the caller wants no holder) instead of sending the upsert,
// which takes SQLite's write lock even when it changes nothing. Tickets are renewed by a
// second statement while the session waits.
// A waiter's try and the deletion of its ticket when granted share one transaction: one
// commit, one fsync per hand-off (statements run in process, a transaction costs no round
// trip). A contended lease's release hands the name to the head of the line in one
// statement (lock_hand_off.sql); the head's try reads it (lock_handed.sql), or holds it from
// the wake file's record without reading.
#include <algorithm>

#include "core/idempotency_detail.hpp"  // format_utc_ms
#include "core/ops/lease_table.hpp"
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

namespace {

constexpr rows::lock_columns acquire_cols{.holder = 3, .fence = 1, .holds = 2, .expires_at = 4, .expires_in = 5};

class sqlite_table final : public lease_table_reads {
 public:
  bool refusal_names_holder() const noexcept override { return true; }
  bool grant_consumes_ticket() const noexcept override { return true; }
  bool async_release() const noexcept override { return false; }

  grant_outcome acquire(backend& b, const grant_request& r) const override {
    const bool ticket = is_line_ticket(r.line_bound);
    if (!ticket) return grant(b, r);
    // Handed by the previous holder's release, or held by another owner: a read, no write
    // lock, no fsync.
    if (auto seen = waiter_look(b, r.name, r.owner, r.line_bound)) return std::move(*seen);
    grant_outcome out;
    auto with_ticket = [&] {
      out = grant(b, r);
      if (out.granted) (void)b.exec("lock_line_leave", {r.line_bound, r.owner});
    };
    if (b.raw().in_transaction()) {
      with_ticket();  // the caller's transaction commits both
    } else {
      b.in_transaction(with_ticket);
    }
    return out;
  }

  static grant_outcome grant(backend& b, const grant_request& r) {
    // Rows are grants only (RETURNING yields nothing when refused).
    auto res = b.exec("lock_acquire", {r.name, r.owner, r.row_ttl_ms, r.holder, r.delay_ms, r.line_bound});
    if (res.rows.empty()) return {false, read_holder(b, r.name, r.owner)};
    return {true, with_ms_expiry(r.name, res.rows[0])};
  }

  // The live row of another owner than `owner`, if any (lock_probe.sql: a read).
  static std::optional<lock_info> read_holder(backend& b, const std::string& name, const std::string& owner) {
    auto r = b.exec("lock_probe", {name, owner});
    if (r.rows.empty()) return std::nullopt;
    return with_ms_expiry(name, r.rows[0]);
  }

  // A row of lock_acquire.sql or lock_probe.sql, whose expires_at (column 4) is in ms: formatted
  // here, which costs less than strftime in the statement.
  static lock_info with_ms_expiry(const std::string& name, const std::vector<cell>& cells) {
    auto i = rows::lock_row(name, cells, acquire_cols);
    i.expires_at = idem::format_utc_ms(rows::i64(cells, 4, "lock expires_at_ms"));
    return i;
  }

  std::optional<lock_info> holder(backend& b, const std::string& name) const override {
    // holder, fence, expires_at, expires_in_ms, holds, lock_delay_ms
    auto r = b.exec("lock_holder", {name});
    if (r.rows.empty()) return std::nullopt;
    return rows::lock_row(name, r.rows[0],
                          {.holder = 0, .fence = 1, .holds = 4, .expires_at = 2, .expires_in = 3, .lock_delay = 5});
  }

  std::optional<lock_info> probe(backend& b, const std::string& name, const std::string& owner) const override {
    return read_holder(b, name, owner);
  }

  std::optional<std::chrono::milliseconds> probe_expiry(backend& b, const std::string& name,
                                                        const std::string& owner) const override {
    auto r = b.exec("lock_probe_expiry", {name, owner});
    if (r.rows.empty()) return std::nullopt;
    return std::chrono::milliseconds(rows::i64(r.rows[0], 0, "lock expires_in_ms"));
  }

  release_outcome release(backend& b, const std::string& name, const std::string& owner, std::int64_t fence,
                          bool final_hold, bool /*no_flush*/, bool to_line, handed_grant* grant) const override {
    if (final_hold && to_line) return release_to_line(b, name, owner, fence, grant);
    if (final_hold) {
      // lock_release.sql returns no row: the change count says whether the row was ours.
      return b.exec("lock_release", {name, owner, fence}).affected > 0 ? release_outcome::deleted
                                                                         : release_outcome::not_ours;
    }
    auto r = b.exec("lock_decrement", {name, owner, fence});
    return r.rows.empty() ? release_outcome::not_ours : release_outcome::decremented;
  }

  // The final release that hands the name to the head of its line: lock_hand_off.sql, one
  // statement that reads the head, rewrites the row as the grant its ticket asked for and
  // (by trigger) deletes the ticket; lock_release.sql when it handed nothing (nobody in line
  // for this lease lock, or the row is no longer ours). Each autocommits (SQLite takes the
  // write lock for the statement), or the caller's transaction commits both. A newcomer that
  // joins the line between the two finds the name free after the plain release's wake-up.
  static release_outcome release_to_line(backend& b, const std::string& name, const std::string& owner,
                                         std::int64_t fence, handed_grant* grant) {
    // fence, owner, ticket
    auto r = b.exec("lock_hand_off", {name, owner, fence});
    if (r.rows.empty())
      return b.exec("lock_release", {name, owner, fence}).affected > 0 ? release_outcome::deleted
                                                                         : release_outcome::not_ours;
    const auto& h = r.rows[0];
    // Outside a caller's transaction the statement has committed: the grant is durable.
    if (grant && !b.raw().in_transaction())
      *grant = {rows::text(h, 1), rows::i64(h, 2, "handed ticket"), rows::i64(h, 0, "handed fence")};
    return release_outcome::handed;
  }

  std::vector<std::string> renew(backend& b, const std::string& owner, std::int64_t ttl_ms,
                                 const std::vector<std::string>& local, bool waiting) const override {
    std::vector<std::string> names;
    for (auto& row : b.exec("lock_renew", {owner, ttl_ms}).rows) names.push_back(rows::text(row, 0));
    // Read-write and semaphore holds: one more in-process statement, only for sessions with some.
    if (std::any_of(local.begin(), local.end(), [](const std::string& k) { return is_holder_key(k); })) {
      auto held = renewed_keys(b.exec("holders_renew", {owner, ttl_ms}));
      names.insert(names.end(), held.begin(), held.end());
    }
    if (waiting) (void)b.exec("lock_line_renew", {owner, ttl_ms});
    return names;
  }

};

}  // namespace

const lease_table_ops& sqlite_lease_table() noexcept {
  static const sqlite_table t;
  return t;
}

}  // namespace dblock::detail
