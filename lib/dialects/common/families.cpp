// lib/dialects/common/families.cpp — the shared bases of families.hpp.
#include "dialects/common/families.hpp"

#include <algorithm>

#include "core/idempotency_detail.hpp"
#include "core/internal.hpp"
#include "core/session_lock_ops.hpp"
#include "dblock/errors.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

bool lease_table_reads::verify(backend& b, const std::string& name, const std::string& owner,
                               std::int64_t fence) const {
  return !b.exec("lock_verify", {name, owner, fence}).rows.empty();
}

std::vector<lock_info> lease_table_reads::list(backend& b) const {
  std::vector<lock_info> out;
  for (auto& row : b.exec("lock_list").rows)
    out.push_back(rows::lock_row(rows::text(row, 0), row,
                                 {.holder = 1, .fence = 3, .holds = 2, .expires_at = 4, .expires_in = 5, .lock_delay = 6}));
  return out;
}

namespace {
// A look's row (lock_handed.sql): granted, fence, holds, holder, expires_at_ms, expires_in_ms.
grant_outcome looked(const std::string& name, const std::vector<cell>& row) {
  auto i = rows::lock_row(name, row, {.holder = 3, .fence = 1, .holds = 2, .expires_at = 4, .expires_in = 5});
  i.expires_at = idem::format_utc_ms(rows::i64(row, 4, "lock expires_at_ms"));
  const bool granted = rows::i64(row, 0, "lock granted") == 1;
  return grant_outcome{granted, std::move(i), granted};
}
}  // namespace

std::optional<grant_outcome> waiter_look_durable(backend& b, const std::string& name, const std::string& owner,
                                                 std::int64_t ticket) {
  auto r = b.exec("lock_handed", {name, owner, ticket});
  if (r.rows.empty()) return std::nullopt;
  auto seen = looked(name, r.rows[0]);
  if (!seen.granted) return seen;
  // Handed under the releaser's server lock: once this connection got that lock, the release's
  // commit has returned, and the grant it read is durable. Not on a Galera node (server locks
  // are local to one node there).
  const bool locked = r.rows[0].size() > 6 && rows::i64(r.rows[0], 6, "lock handed locked") == 1;
  if (locked && !b.multi_primary() && rows::first_is(b.exec("lock_handed_wait", {name}), "1")) return seen;
  detail::count(counter::lock_handoff_confirms);
  if (b.exec("lock_handed_confirm", {name, owner, ticket}).affected > 0) return seen;
  return grant_outcome{};  // gone between the read and the write: refused, holder unknown
}

std::optional<grant_outcome> waiter_look(backend& b, const std::string& name, const std::string& owner,
                                         std::int64_t ticket) {
  auto r = b.exec("lock_handed", {name, owner, ticket});
  if (r.rows.empty()) return std::nullopt;
  return looked(name, r.rows[0]);
}

bool keyed_session_locks::try_lock(backend& b, std::string_view name) const {
  return rows::first_is(b.exec("session_lock_try", {key(name)}), "1");
}
bool keyed_session_locks::release(backend& b, std::string_view name) const {
  return rows::first_is(b.exec("session_lock_release", {key(name)}), "1");
}
bool keyed_session_locks::held(backend& b, std::string_view name) const {
  return rows::first_is(b.exec("session_lock_held", {key(name)}), "1");
}

bool session_locked_migrations::lock(backend& b, std::chrono::milliseconds wait) const {
  return session_wait(b, migration_lock_name, wait);
}

void session_locked_migrations::unlock(backend& b) const noexcept {
  try {
    session_release(b, migration_lock_name);
  } catch (...) {
    // The server releases session locks when the connection ends; nothing to add here.
  }
}

bool session_locked_migrations::lock_in_transaction(backend&, std::chrono::steady_clock::time_point) const {
  throw internal_error("a transaction-scoped migration lock exists on PostgreSQL only");
}

void session_locked_migrations::prepare_lease(backend& b) const { b.exec("migration_lease_create"); }

bool session_locked_migrations::take_lease(backend& b, std::string_view owner, std::chrono::milliseconds ttl) const {
  b.exec("migration_lease_take", {std::string(owner), static_cast<std::int64_t>(ttl.count())});
  return rows::first_int(b.exec("migration_lease_held", {std::string(owner)}), "migration lease") > 0;
}

void session_locked_migrations::release_lease(backend& b, std::string_view owner) const {
  b.exec("migration_lease_release", {std::string(owner)});
}

bool session_locked_migrations::history_present(backend& b) const {
  const auto r = b.exec("history_present");
  return !r.rows.empty() && r.rows[0][0] && *r.rows[0][0] != "0";
}

std::vector<migration_info> session_locked_migrations::applied(backend& b, const std::string& scope) const {
  std::vector<migration_info> out;
  for (auto& row : b.exec("history_list", {scope}).rows) {
    migration_info m;
    m.scope = scope;
    m.version = static_cast<int>(parse_int_cell_or_null(row.at(0), "migration history version").value_or(0));
    m.name = row.at(1).value_or("");
    m.checksum = row.at(2).value_or("");
    out.push_back(std::move(m));
  }
  return out;
}

std::uint64_t counted_reaper::deleted(const result& r) const {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, r.affected));
}

std::int64_t locking_row_guards::count(backend& b, const statement& count_st, const std::vector<value>& params) const {
  return rows::first_int(b.exec_statement(count_st, params), "row guard count");
}

std::optional<versioned_row> versioned_reads::read_versioned(backend& b, const statement& st, const value& key,
                                                             std::string_view table,
                                                             std::string_view version_column) const {
  auto r = b.exec_statement(st, std::vector<value>{key});
  if (r.rows.empty()) return std::nullopt;
  auto& row = r.rows.front();
  if (!row.at(0))
    throw database_error("read_versioned: the version column " + std::string(version_column) + " of " +
                         std::string(table) + " is NULL; optimistic updates need a NOT NULL integer version");
  versioned_row out;
  out.version = parse_int_cell(row[0], "read_versioned: the version column");
  out.values.assign(std::make_move_iterator(row.begin() + 1), std::make_move_iterator(row.end()));
  return out;
}

bool versioned_reads::fenced_check(backend&, const statement&, const value&, std::int64_t) const {
  throw internal_error("fenced_check.sql exists on MySQL only");
}

namespace {
// An idempotency integer column; `fallback` for NULL or empty. Some drivers hand back
// numeric expressions as "12.0".
std::int64_t idem_int(const cell& c, std::int64_t fallback = 0) {
  if (!c || c->empty()) return fallback;
  if (c->find_first_of(".eE") != std::string::npos) return static_cast<std::int64_t>(std::stod(*c));
  return parse_int_cell(c, "idempotency record");
}

std::optional<std::string> opt(const cell& c) { return c ? std::optional<std::string>(*c) : std::nullopt; }

idempotency_status idem_status(const cell& c) {
  const std::string s = c.value_or("");
  if (s == "in_progress") return idempotency_status::in_progress;
  if (s == "completed") return idempotency_status::completed;
  if (s == "failed") return idempotency_status::failed;
  throw internal_error("unknown idempotency record status '" + s + "'");
}
}  // namespace

std::optional<claim_row> idempotency_rows::claim(const result& r, const claim_sent&) const {
  if (r.rows.empty()) return std::nullopt;
  const auto& row = r.rows.front();
  if (row.size() < 7) throw internal_error("idem_claim returned " + std::to_string(row.size()) + " columns");
  claim_row c;
  const std::string outcome = row[0].value_or("");
  if (outcome == "started") c.outcome = idempotency_outcome::started;
  else if (outcome == "replay") c.outcome = idempotency_outcome::replay;
  else if (outcome == "in_progress") c.outcome = idempotency_outcome::in_progress;
  else if (outcome == "mismatch") c.outcome = idempotency_outcome::mismatch;
  else throw internal_error("idem_claim returned outcome '" + outcome + "'");
  c.failed = row[1].value_or("") == "failed";
  c.attempt = idem_int(row[2]);
  c.recovery_point = opt(row[3]);
  if (row[4]) c.code = static_cast<int>(idem_int(row[4]));
  c.body_hex = opt(row[5]);
  c.retry_after_ms = idem_int(row[6]);
  return c;
}

std::optional<claim_row> idempotency_claim_text::claim(const result& r, const claim_sent& sent) const {
  const std::string* answer = rows::first_text(r);
  if (!answer) return std::nullopt;
  const std::string& text = *answer;
  // Six space-separated fields, then the recovery point (which may hold spaces) to the end.
  const auto fields = rows::split_answer(text, 6);
  if (!fields) throw internal_error("idem_claim returned '" + idem::printable(text) + "'");
  const auto& f = *fields;
  const std::string& rp = f[6];
  auto dash_is_null = [](const std::string& v) { return v == "-" ? cell() : cell(v); };
  if ((f[5] != "-" && !f[5].starts_with("x")) || (rp != "-" && !rp.starts_with("+")))
    throw internal_error("idem_claim returned '" + idem::printable(text) + "'");
  result cols;
  cols.rows.push_back({cell(f[0]), cell(f[1]), cell(f[2]), rp == "-" ? cell() : cell(rp.substr(1)),
                       dash_is_null(f[3]), f[5] == "-" ? cell() : cell(f[5].substr(1)), cell(f[4])});
  return idempotency_rows::claim(cols, sent);
}

claim_row judge_record(record_seen r, std::string_view what) {
  if (r.status != "in_progress" && r.status != "completed" && r.status != "failed")
    throw internal_error(std::string(what) + " returned status '" + std::string(r.status) + "'");
  const bool in_progress = r.status == "in_progress";
  claim_row c;
  c.outcome = r.ours        ? idempotency_outcome::started
              : !r.same     ? idempotency_outcome::mismatch
              : in_progress ? idempotency_outcome::in_progress
                            : idempotency_outcome::replay;
  c.failed = r.status == "failed";
  c.attempt = r.attempt;
  c.recovery_point = std::move(r.recovery_point);
  if (c.outcome == idempotency_outcome::replay) {
    c.code = r.code;
    c.body_hex = std::move(r.body_hex);
  }
  if (!r.ours && in_progress) c.retry_after_ms = std::max<std::int64_t>(0, r.lease_left_ms);
  return c;
}

idempotency_record idempotency_rows::record(const std::vector<cell>& row, bool with_body) const {
  if (row.size() < (with_body ? 16u : 15u)) throw internal_error("idempotency record row is too short");
  idempotency_record r;
  r.scope = row[0].value_or("");
  r.key = row[1].value_or("");
  r.fingerprint = row[2].value_or("");
  r.status = idem_status(row[3]);
  r.owner = opt(row[4]);
  r.attempt = idem_int(row[5]);
  r.recovery_point = opt(row[6]);
  if (row[7]) r.response_code = static_cast<int>(idem_int(row[7]));
  r.body_bytes = static_cast<std::size_t>(idem_int(row[8]));
  r.created_at_ms = idem_int(row[9]);
  r.updated_at_ms = idem_int(row[10]);
  r.expires_at_ms = idem_int(row[11]);
  if (row[12]) r.lease_expires_at_ms = idem_int(row[12]);
  if (row[13]) r.lease_remaining = std::chrono::milliseconds(idem_int(row[13]));
  r.expired = idem_int(row[14]) != 0;
  if (with_body && row[15]) r.response_body = idem::hex_decode(*row[15]);
  return r;
}

namespace {
// granted, fence, holds, holder, expires_at, expires_in_ms, lock_delay_ms (lock_state.sql;
// lock_probe.sql has expires_at in ms and no lock_delay_ms)
constexpr rows::lock_columns mysql_state_cols{
    .holder = 3, .fence = 1, .holds = 2, .expires_at = 4, .expires_in = 5, .lock_delay = 6};
constexpr rows::lock_columns mysql_probe_cols{.holder = 3, .fence = 1, .holds = 2, .expires_at = 4, .expires_in = 5};
}  // namespace

std::optional<lock_info> mysql_family_table::holder(backend& b, const std::string& name) const {
  auto r = b.exec("lock_state", {name, std::string()});
  if (r.rows.empty()) return std::nullopt;
  return rows::lock_row(name, r.rows[0], mysql_state_cols);
}

std::optional<lock_info> mysql_family_table::probe(backend& b, const std::string& name, const std::string& owner) const {
  auto r = b.exec("lock_probe", {name, owner});
  if (r.rows.empty()) return std::nullopt;
  auto i = rows::lock_row(name, r.rows[0], mysql_probe_cols);
  i.expires_at = idem::format_utc_ms(rows::i64(r.rows[0], 4, "lock expires_at_ms"));
  return i;
}

release_outcome mysql_family_table::release(backend& b, const std::string& name, const std::string& owner,
                                            std::int64_t fence, bool final_hold, bool /*no_flush*/,
                                            bool to_line, handed_grant* grant) const {
  if (final_hold && to_line) {
    // '0' = not ours, '1' = deleted, '2 <owner> <ticket> <fence> <locked>' = handed to the head
    // of the line (migration 0018's function), under the server lock when locked is 1. The lock
    // is asked for where it means something: not on a Galera node, and not inside a
    // transaction this library opened (the commit is later).
    const bool in_tx = b.raw().in_transaction();
    const std::int64_t lock = !in_tx && !b.multi_primary() ? 1 : 0;
    const auto r = b.exec("lock_release_to_line", {name, owner, fence, lock});
    const std::string* answer = rows::first_text(r);
    if (!answer) throw internal_error("lock_release_to_line returned no answer for lock '" + name + "'");
    if (answer->starts_with("2 ")) {
      // The release is done either way: an answer that does not read leaves the grant to the
      // waiter's own read.
      const auto f = rows::split_answer(answer->substr(2), 3);
      const bool own_commit = r.rows[0].size() > 1 && r.rows[0][1] && *r.rows[0][1] == "1";
      if (grant && f && own_commit && !in_tx) {
        try {
          *grant = {(*f)[0], parse_int_cell(cell((*f)[1]), "handed ticket"), parse_int_cell(cell((*f)[2]), "handed fence")};
        } catch (const std::exception&) {
          *grant = {};
        }
      }
      // The server lock is freed after a waiter of this process was given the grant (the
      // caller's end_hand_off), or here when there is no caller to do it. An answer that does
      // not read frees it too: the server lock is this connection's, and a head that waits
      // for it then confirms.
      if (!f || (*f)[3] == "1") {
        if (grant) {
          grant->unlock = true;
        } else {
          end_hand_off(b, name);
        }
      }
      return release_outcome::handed;
    }
    return *answer == "1" ? release_outcome::deleted : release_outcome::not_ours;
  }
  auto r = b.exec(final_hold ? "lock_release" : "lock_decrement", {name, owner, fence});
  if (r.affected <= 0) return release_outcome::not_ours;
  return final_hold ? release_outcome::deleted : release_outcome::decremented;
}

void mysql_family_table::end_hand_off(backend& b, const std::string& name) const noexcept {
  try {
    (void)b.exec("lock_hand_off_unlock", {name});
  } catch (...) {
    // The release itself is done. The server frees the lock as the connection ends; until
    // then the head's wait for it runs out (20 ms) and it confirms with a write instead.
  }
}

std::vector<std::string> mysql_family_table::renew(backend& b, const std::string& owner, std::int64_t ttl_ms,
                                                   const std::vector<std::string>& local, bool waiting) const {
  std::vector<std::string> names;
  // A session with read-write or semaphore holds renews them in the same statement
  // (lock_renew_holders.sql, a multiple-table UPDATE); the others send the plain one.
  const bool holds = std::any_of(local.begin(), local.end(), [](const std::string& k) { return is_holder_key(k); });
  auto r = b.exec(holds ? "lock_renew_holders" : "lock_renew", {owner, ttl_ms});
  if (waiting) (void)b.exec("lock_line_renew", {owner, ttl_ms});
  if (static_cast<std::size_t>(r.affected) >= local.size()) return local;  // the usual case
  if (holds) return renewed_keys(b.exec("lock_owned_holders", {owner}));
  for (auto& row : b.exec("lock_owned", {owner}).rows) names.push_back(rows::text(row, 0));
  return names;
}

// ------------------------------------------------------------ read-write locks, semaphores

namespace {
// A statement changed a row: the affected count, or a returned row where the dialect's
// statement says so with RETURNING.
bool touched(const result& r) { return r.affected > 0 || !r.rows.empty(); }
}  // namespace

void holder_table::gate(backend& b, const std::string& name) const {
  (void)b.exec("holders_gate", {name});
  (void)b.exec("holders_clear", {name});
}

std::vector<holder_row> holder_table::live(backend& b, const std::string& name) const {
  // owner, slot, kind, holds, write_holds, permits, fence, holder, expires_at, expires_in_ms, lock_delay_ms
  std::vector<holder_row> out;
  for (auto& row : b.exec("holders_live", {name}).rows) {
    holder_row h;
    h.owner = rows::text(row, 0);
    h.slot = rows::i64(row, 1, "holder slot");
    const auto kind = rows::text(row, 2);
    h.kind = kind.empty() ? 'r' : kind[0];
    h.holds = static_cast<int>(rows::i64(row, 3, "holder holds"));
    h.write_holds = static_cast<int>(rows::i64(row, 4, "holder write_holds"));
    h.permits = static_cast<int>(rows::i64(row, 5, "holder permits"));
    h.info = rows::lock_row(name, row, {.holder = 7, .fence = 6, .holds = 3, .expires_at = 8, .expires_in = 9, .lock_delay = 10});
    out.push_back(std::move(h));
  }
  return out;
}

std::int64_t holder_table::line_ahead(backend& b, const std::string& name, std::int64_t bound) const {
  return rows::first_int(b.exec("holders_line_ahead", {name, bound}), "wait-line count");
}

std::int64_t holder_table::draw_fence(backend& b) const {
  auto r = b.exec("holders_fence");
  if (separate_fence_read_) r = b.exec("holders_fence_read");
  const auto f = rows::first_int(r, "fence");
  if (f <= 0) throw internal_error("the fence counter returned " + std::to_string(f));
  return f;
}

void holder_table::insert(backend& b, const holder_grant& g) const {
  (void)b.exec("holders_insert", {g.name, g.owner, g.slot, std::string(1, g.kind), std::int64_t{g.write_holds},
                                  std::int64_t{g.permits}, g.fence, g.row_ttl_ms, g.holder, g.delay_ms});
}

bool holder_table::reenter(backend& b, const std::string& name, const std::string& owner, bool write,
                           std::int64_t fence, std::int64_t row_ttl_ms) const {
  return touched(b.exec("holders_reenter", {name, owner, std::int64_t{write ? 1 : 0}, fence, row_ttl_ms}));
}

bool holder_table::release(backend& b, const std::string& name, const std::string& owner, std::int64_t slot,
                           std::int64_t fence) const {
  return touched(b.exec("holders_release", {name, owner, slot, fence}));
}

bool holder_table::decrement(backend& b, const std::string& name, const std::string& owner, std::int64_t fence,
                             bool write) const {
  return touched(b.exec("holders_decrement", {name, owner, fence, std::int64_t{write ? 1 : 0}}));
}

bool holder_table::verify(backend& b, const std::string& name, const std::string& owner, std::int64_t slot,
                          std::int64_t fence) const {
  return !b.exec("holders_verify", {name, owner, slot, fence}).rows.empty();
}

namespace {

// The text migration 0010's grant functions answer: an outcome letter, then its values
// separated by single spaces; a refusal's holder text is the rest of the line (it may hold
// spaces itself).
one_statement_outcome parse_grant(const result& r, const std::string& name) {
  if (r.rows.empty() || r.rows[0].empty() || !r.rows[0][0])
    throw internal_error("the one-statement grant of '" + name + "' answered no text");
  const std::string& t = *r.rows[0][0];
  std::size_t pos = 1;
  auto next = [&](bool rest = false) -> std::string {
    if (pos >= t.size() || t[pos] != ' ')
      throw internal_error("the one-statement grant of '" + name + "' answered '" + t + "'");
    const auto b = pos + 1;
    const auto e = rest ? t.size() : std::min(t.find(' ', b), t.size());
    pos = e;
    return t.substr(b, e - b);
  };
  auto num = [&]() -> std::int64_t {
    const auto v = next();
    try {
      std::size_t used = 0;
      const auto n = std::stoll(v, &used);
      if (used == v.size()) return n;
    } catch (const std::exception&) {
    }
    throw internal_error("the one-statement grant of '" + name + "' answered '" + t + "'");
  };
  using k = one_statement_outcome::kind;
  one_statement_outcome o;
  switch (t.empty() ? '?' : t[0]) {
    case 'G':
    case 'R':
      o.what = t[0] == 'G' ? k::granted : k::reentered;
      if (t.find(' ', 2) == std::string::npos) {  // read-write: the fence alone
        o.granted.emplace_back(0, num());
      } else {
        while (pos < t.size()) {
          const auto slot = num();
          o.granted.emplace_back(slot, num());
        }
      }
      break;
    case 'B': {
      o.what = k::refused;
      if (t.size() == 1) break;  // the holds in the way were released meanwhile: none to name
      lock_info i;
      i.name = name;
      i.fence = num();
      i.holds = static_cast<int>(num());
      i.expires_in = std::chrono::milliseconds(num());
      i.lock_delay = std::chrono::milliseconds(num());
      i.expires_at = next();
      i.holder = next(true);
      o.blocker = std::move(i);
      break;
    }
    case 'L': o.what = k::behind_line; break;
    case 'K':
      o.what = t.size() > 1 ? k::not_rw : k::not_semaphore;
      if (o.what == k::not_rw) o.value = num();
      break;
    case 'P':
      o.what = k::permits_differ;
      o.value = num();
      break;
    case 'U':
      o.what = k::upgrade_refused;
      o.value = num();
      break;
    default: throw internal_error("the one-statement grant of '" + name + "' answered '" + t + "'");
  }
  if (pos < t.size()) throw internal_error("the one-statement grant of '" + name + "' answered '" + t + "'");
  return o;
}

}  // namespace

one_statement_outcome holder_table::acquire_rw(backend& b, const one_statement_request& r) const {
  if (!one_statement_) throw internal_error("no one-statement read-write grant on this dialect");
  return parse_grant(b.exec("holders_acquire_rw", {r.name, r.owner, std::int64_t{r.write ? 1 : 0}, r.own_fence,
                                                   r.ticket, r.bound, r.row_ttl_ms, r.holder, r.delay_ms}),
                     r.name);
}

one_statement_outcome holder_table::acquire_permits(backend& b, const one_statement_request& r) const {
  if (!one_statement_) throw internal_error("no one-statement permit grant on this dialect");
  return parse_grant(b.exec("holders_acquire_permits", {r.name, r.owner, std::int64_t{r.permits},
                                                        std::int64_t{r.count}, r.ticket, r.bound, r.row_ttl_ms,
                                                        r.holder, r.delay_ms}),
                     r.name);
}

std::vector<holder_info> holder_table::list(backend& b) const {
  // name, kind, slot, holder, holds, write_holds, permits, fence, expires_at, expires_in_ms, lock_delay_ms
  std::vector<holder_info> out;
  for (auto& row : b.exec("holders_list").rows) {
    holder_info h;
    h.name = rows::text(row, 0);
    h.slot = static_cast<int>(rows::i64(row, 2, "holder slot"));
    h.holder = rows::text(row, 3);
    h.holds = static_cast<int>(rows::i64(row, 4, "holder holds"));
    h.write_holds = static_cast<int>(rows::i64(row, 5, "holder write_holds"));
    h.permits = static_cast<int>(rows::i64(row, 6, "holder permits"));
    h.fence = rows::i64(row, 7, "holder fence");
    h.expires_at = rows::text(row, 8);
    h.expires_in = std::chrono::milliseconds(rows::i64(row, 9, "holder expires_in_ms"));
    h.lock_delay = std::chrono::milliseconds(rows::i64(row, 10, "holder lock_delay_ms"));
    h.mode = rows::text(row, 1) == "s" ? lock_mode::permit : h.write_holds > 0 ? lock_mode::write : lock_mode::read;
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<std::string> renewed_keys(const result& r) {
  std::vector<std::string> keys;
  keys.reserve(r.rows.size());
  for (auto& row : r.rows) {
    if (row.size() > 1 && row[1]) keys.push_back(holder_key(rows::text(row, 0), rows::i64(row, 1, "holder slot")));
    else keys.push_back(rows::text(row, 0));
  }
  return keys;
}

// ------------------------------------------------------------ elections

bool table_elections::set(backend& b, const std::string& name, const std::string& owner, std::int64_t fence,
                          const std::string& value) const {
  auto r = b.exec("elect_set", {name, owner, fence, value});
  return set_counts_rows_ ? r.affected > 0 : !r.rows.empty();
}

std::optional<leader_info> table_elections::leader(backend& b, const std::string& name) const {
  auto r = b.exec("elect_leader", {name});
  if (r.rows.empty()) return std::nullopt;
  const auto& row = r.rows[0];
  leader_info i;
  i.name = name;
  i.value = rows::text(row, 0);
  i.fence = rows::i64(row, 1, "leader fence");
  i.holder = rows::text(row, 2);
  i.expires_in = std::chrono::milliseconds(rows::i64(row, 3, "leader expires_in_ms"));
  return i;
}

std::vector<leader_info> table_elections::list(backend& b) const {
  auto r = b.exec("elect_list", {});
  std::vector<leader_info> out;
  out.reserve(r.rows.size());
  for (const auto& row : r.rows) {
    leader_info i;
    i.name = rows::text(row, 0);
    i.value = rows::text(row, 1);
    i.fence = rows::i64(row, 2, "leader fence");
    i.holder = rows::text(row, 3);
    i.expires_in = std::chrono::milliseconds(rows::i64(row, 4, "leader expires_in_ms"));
    out.push_back(std::move(i));
  }
  return out;
}

void table_elections::clear(backend& b, const std::string& name, const std::string& owner, std::int64_t fence) const {
  (void)b.exec("elect_clear", {name, owner, fence});
}

}  // namespace dblock::detail
