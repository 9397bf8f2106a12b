// lib/core/lock_store.cpp — see lock_store.hpp. Statement files: sql/<dialect>/lock_*.sql.
#include "core/lock_store.hpp"

#include <algorithm>

#include "core/idempotency_detail.hpp"  // format_utc_ms: the one UTC text formatter
#include "dblock/errors.hpp"

namespace dblock::detail::lock_store {

namespace {

std::int64_t to_i64(const cell& c) {
  if (!c) return 0;
  try {
    return std::stoll(*c);
  } catch (...) {
    throw internal_error("expected an integer from the database, got '" + *c + "'");
  }
}

// Columns: holder, fence, holds, expires_at, expires_in_ms starting at `at` in the order
// given by the statement files (see each file's header).
lock_info info_from(const std::string& name, const std::vector<cell>& r, std::size_t fence_col,
                    std::size_t holds_col, std::size_t holder_col, std::size_t exp_col, std::size_t in_col) {
  lock_info i;
  i.name = name;
  i.fence = to_i64(r.at(fence_col));
  i.holds = holds_col < r.size() ? static_cast<int>(to_i64(r[holds_col])) : 0;
  i.holder = r.at(holder_col).value_or("");
  i.expires_at = r.at(exp_col).value_or("");
  i.expires_in = std::chrono::milliseconds(to_i64(r.at(in_col)));
  return i;
}

}  // namespace

acquire_result acquire(backend& b, const std::string& name, const std::string& owner, std::int64_t ttl_ms,
                       std::int64_t delay_ms, const std::string& holder_text, bool behind_line, bool likely_free) {
  return retry_conflicts(b, [&] {
    return acquire_once(b, name, owner, ttl_ms, delay_ms, holder_text, behind_line, likely_free);
  });
}

acquire_result acquire_once(backend& b, const std::string& name, const std::string& owner, std::int64_t ttl_ms,
                            std::int64_t delay_ms, const std::string& holder_text, bool behind_line,
                            bool likely_free) {
  // One round trip on every dialect. The row is granted, fence, holds, holder,
  // expires_at, expires_in_ms as the statement left it (MariaDB: its RETURNING, read by the
  // statement that decided). SQLite's RETURNING yields nothing when another owner holds it
  // live (its rows are grants, granted = 1); PostgreSQL yields none only after losing a race
  // with a concurrent insert (busy, holder unknown); MariaDB always yields one.
  acquire_result out;
  const bool queued = behind_line && b.kind() == dialect::postgresql;
  if (likely_free && !queued && b.kind() == dialect::postgresql) {
    // The grant alone; no row = not free after all, and lock_acquire.sql below decides.
    auto f = b.exec("lock_acquire_fresh", {name, owner, ttl_ms, holder_text, delay_ms});
    if (!f.rows.empty()) {
      out.granted = true;
      out.state = info_from(name, f.rows[0], 1, 2, 3, 4, 5);
      return out;
    }
  }
  auto r = b.exec(queued ? "lock_acquire_queued" : "lock_acquire", {name, owner, ttl_ms, holder_text, delay_ms});
  if (r.rows.empty()) {
    if (b.kind() == dialect::mysql) throw internal_error("lock_acquire returned no row on MariaDB");
    return out;
  }
  out.granted = to_i64(r.rows[0][0]) == 1;
  out.state = info_from(name, r.rows[0], 1, 2, 3, 4, 5);
  return out;
}

std::optional<lock_info> holder(backend& b, const std::string& name) {
  if (b.kind() == dialect::mysql) {
    auto r = b.exec("lock_state", {name, std::string()});
    if (r.rows.empty()) return std::nullopt;
    auto i = info_from(name, r.rows[0], 1, 2, 3, 4, 5);
    i.lock_delay = std::chrono::milliseconds(to_i64(r.rows[0].at(6)));
    return i;
  }
  auto r = b.exec("lock_holder", {name});  // holder, fence, expires_at, expires_in_ms, holds, lock_delay_ms
  if (r.rows.empty()) return std::nullopt;
  auto i = info_from(name, r.rows[0], 1, 4, 0, 2, 3);
  i.lock_delay = std::chrono::milliseconds(to_i64(r.rows[0].at(5)));
  return i;
}

std::optional<lock_info> probe(backend& b, const std::string& name, const std::string& owner) {
  // granted (0), fence, holds, holder, expires_at_ms (UTC epoch), expires_in_ms
  auto r = b.exec("lock_probe", {name, owner});
  if (r.rows.empty()) return std::nullopt;
  auto i = info_from(name, r.rows[0], 1, 2, 3, 4, 5);
  i.expires_at = idem::format_utc_ms(to_i64(r.rows[0].at(4)));  // the text form lock_acquire.sql returns
  return i;
}

release_outcome release(backend& b, const std::string& name, const std::string& owner, std::int64_t fence,
                        bool final_hold, bool no_flush) {
  const std::vector<value> params{name, owner, fence};
  auto r = retry_conflicts(b, [&] {
    if (no_flush && final_hold && b.kind() == dialect::postgresql)
      // Inside a transaction set_config(..., true) would last until that transaction ends
      // and weaken its commit: only a release that is its own transaction skips the flush.
      return b.exec_unless_in_transaction("lock_release_async", "lock_release", params);
    return b.exec(final_hold ? "lock_release" : "lock_decrement", params);
  });
  if (!(b.kind() == dialect::mysql ? r.affected > 0 : !r.rows.empty())) return release_outcome::not_ours;
  return final_hold ? release_outcome::deleted : release_outcome::decremented;
}

std::vector<std::string> renew(backend& b, const std::string& owner, std::int64_t ttl_ms, std::size_t expected,
                               const std::vector<std::string>& local_names) {
  std::vector<std::string> names;
  if (b.kind() == dialect::mysql) {
    auto r = b.exec("lock_renew", {owner, ttl_ms});
    if (static_cast<std::size_t>(r.affected) >= expected) return local_names;  // the usual case: one statement
    for (auto& row : b.exec("lock_owned", {owner}).rows) names.push_back(row.at(0).value_or(""));
    return names;
  }
  for (auto& row : b.exec("lock_renew", {owner, ttl_ms}).rows) names.push_back(row.at(0).value_or(""));
  return names;
}

bool verify(backend& b, const std::string& name, const std::string& owner, std::int64_t fence) {
  return !b.exec("lock_verify", {name, owner, fence}).rows.empty();
}

std::vector<lock_info> list(backend& b) {
  std::vector<lock_info> out;
  // name, holder, holds, fence, expires_at, expires_in_ms, lock_delay_ms
  for (auto& row : b.exec("lock_list").rows) {
    out.push_back(info_from(row.at(0).value_or(""), row, 3, 2, 1, 4, 5));
    out.back().lock_delay = std::chrono::milliseconds(to_i64(row.at(6)));
  }
  return out;
}

bool line_enter(backend& line, const std::string& name, std::int64_t wait_ms) {
  try {
    auto r = line.exec("lock_line_enter", {name, std::max<std::int64_t>(1, wait_ms)});
    // PostgreSQL returns a row only once entered (a timeout is SQLSTATE 55P03); MariaDB's
    // GET_LOCK says 1, or 0 on timeout.
    if (line.kind() == dialect::mysql) return !r.rows.empty() && r.rows[0].at(0).value_or("0") == "1";
    return !r.rows.empty();
  } catch (const lock_not_available&) {
    return false;
  }
}

void line_leave(backend& line, const std::string& name) { (void)line.exec("lock_line_leave", {name}); }

}  // namespace dblock::detail::lock_store
