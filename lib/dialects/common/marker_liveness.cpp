// lib/dialects/common/marker_liveness.cpp — see marker_liveness.hpp.
#include "dialects/common/marker_liveness.hpp"

#include <algorithm>

#include "core/idempotency_detail.hpp"  // format_utc_ms
#include "core/liveness.hpp"            // marker_window_code
#include "dialects/common/rows.hpp"

namespace dblock::detail {

namespace {
// granted (0), fence, holds, holder, expires_at_ms, expires_in_ms, backed, gone
constexpr rows::lock_columns probe_cols{.holder = 3, .fence = 1, .holds = 2, .expires_at = 4, .expires_in = 5};
// owner, slot, fence, holds, write_holds, holder, expires_at_ms, expires_in_ms, backed, gone
constexpr rows::lock_columns hold_cols{.holder = 5, .fence = 2, .holds = 3, .expires_at = 6, .expires_in = 7};

// The `backed` column: 0, or 1 + the owner's window code.
void read_marker(std::int64_t backed, std::int64_t gone, bool& is_backed, int& code, bool& is_gone) {
  is_backed = backed > 0;
  code = static_cast<int>(std::clamp<std::int64_t>(backed - 1, 0, 9));
  is_gone = is_backed && gone == 1;
}
}  // namespace

marker_take connection_marker_liveness::take(backend& b, const std::string& owner,
                                             std::string* server_connection) const {
  auto r = b.exec("lock_marker_take", {owner});
  const auto v = rows::first_int(r, "liveness marker taken");
  if (server_connection) *server_connection = r.rows.empty() ? std::string() : rows::text(r.rows[0], 1);
  return v == 1 ? marker_take::taken : v < 0 ? marker_take::unsuited : marker_take::busy;
}

void connection_marker_liveness::drop(backend& b, const std::string& owner) const {
  (void)b.exec("lock_marker_drop", {owner});
}

std::string connection_marker_liveness::ping(backend& b) const {
  auto r = b.exec("lock_marker_ping");
  return r.rows.empty() ? std::string() : rows::text(r.rows[0], 0);
}

std::optional<marked_holder> connection_marker_liveness::probe(backend& b, const std::string& name,
                                                               const std::string& owner) const {
  auto r = b.exec("lock_probe_marker", {name, owner});
  if (r.rows.empty()) return std::nullopt;
  marked_holder m;
  m.row = rows::lock_row(name, r.rows[0], probe_cols);
  m.row.expires_at = idem::format_utc_ms(rows::i64(r.rows[0], 4, "lock expires_at_ms"));
  read_marker(rows::i64(r.rows[0], 6, "holder marker-backed"), rows::i64(r.rows[0], 7, "holder marker gone"),
              m.backed, m.window_code, m.gone);
  return m;
}

std::optional<marked_holder> connection_marker_liveness::probe_expiry(backend& b, const std::string& name,
                                                                      const std::string& owner) const {
  // fence, expires_in_ms, owner, gone: whether the holder keeps a marker, and its window,
  // are read from the owner token here.
  auto r = b.exec("lock_probe_marker_expiry", {name, owner});
  if (r.rows.empty()) return std::nullopt;
  const auto& row = r.rows[0];
  marked_holder m;
  m.row.name = name;
  m.row.fence = rows::i64(row, 0, "lock fence");
  m.row.expires_in = std::chrono::milliseconds(rows::i64(row, 1, "lock expires_in_ms"));
  const auto code = marker_window_code(row.at(2) ? std::string_view(*row.at(2)) : std::string_view());
  m.backed = code.has_value();
  m.window_code = code.value_or(0);
  m.gone = m.backed && rows::i64(row, 3, "holder marker gone") == 1;
  return m;
}

bool connection_marker_liveness::reclaim(backend& b, const std::string& name, const std::string& owner,
                                         std::int64_t fence) const {
  auto r = b.exec("lock_reclaim", {name, fence, owner});
  return reclaim_returns_row() ? !r.rows.empty() : r.affected > 0;
}

}  // namespace dblock::detail

namespace dblock::detail {

std::vector<marked_hold> connection_marker_liveness::probe_holds(backend& b, const std::string& name,
                                                                 const std::string& owner) const {
  auto r = b.exec("holders_probe_marker", {name, owner});
  std::vector<marked_hold> out;
  out.reserve(r.rows.size());
  for (const auto& row : r.rows) {
    marked_hold h;
    h.owner = rows::text(row, 0);
    h.slot = rows::i64(row, 1, "hold slot");
    h.write_holds = static_cast<int>(rows::i64(row, 4, "hold write_holds"));
    h.row = rows::lock_row(name, row, hold_cols);
    h.row.expires_at = idem::format_utc_ms(rows::i64(row, 6, "hold expires_at_ms"));
    read_marker(rows::i64(row, 8, "hold marker-backed"), rows::i64(row, 9, "hold marker gone"), h.backed,
                h.window_code, h.gone);
    out.push_back(std::move(h));
  }
  return out;
}

bool connection_marker_liveness::reclaim_hold(backend& b, const std::string& name, const std::string& hold_owner,
                                              std::int64_t slot, std::int64_t fence) const {
  auto r = b.exec("holders_reclaim", {name, hold_owner, slot, fence});
  return reclaim_returns_row() ? !r.rows.empty() : r.affected > 0;
}

}  // namespace dblock::detail
