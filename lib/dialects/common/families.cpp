// lib/dialects/common/families.cpp — the shared bases of families.hpp.
#include "dialects/common/families.hpp"

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

}  // namespace dblock::detail
