// lib/core/optimistic.cpp — version-column optimistic updates and fenced writes
// (dblock/optimistic.hpp), over the backend and sql/<dialect>/versioned_*.sql,
// fenced_update_*.sql. Applied / conflict / rejected come from the affected-row count
// (MySQL connections opened by dblock count matched rows: CLIENT_FOUND_ROWS).
#include <optional>
#include <thread>

#include "core/backend.hpp"
#include "core/backoff.hpp"
#include "core/ops/optimistic.hpp"
#include "core/user_sql.hpp"
#include "dblock/errors.hpp"
#include "dblock/optimistic.hpp"

namespace dblock {

const char* to_string(optimistic_outcome o) noexcept {
  switch (o) {
    case optimistic_outcome::applied: return "applied";
    case optimistic_outcome::not_found: return "not found";
    case optimistic_outcome::declined: return "declined";
    case optimistic_outcome::conflict: return "conflict";
  }
  return "?";
}

namespace {

using detail::backend;

transaction_ref autocommit(database& db) { return detail::make_transaction_ref(db); }

std::vector<std::string> names_of(const column_values& set) {
  std::vector<std::string> out;
  out.reserve(set.size());
  for (const auto& c : set) out.push_back(c.column);
  return out;
}

detail::identifier_slots slots(std::string_view table, std::string_view key_column,
                               std::pair<const char*, std::string_view> extra, const std::vector<std::string>& columns) {
  detail::identifier_slots ids{{"table", std::string(table)}, {"key", std::string(key_column)}};
  ids.emplace_back(extra.first, std::string(extra.second));
  for (std::size_t i = 0; i < columns.size(); ++i) ids.emplace_back(std::string("c").append(std::to_string(i + 1)), columns[i]);
  return ids;
}

}  // namespace

std::optional<versioned_row> read_versioned(transaction_ref tx, const versioned_table& t, const value& key,
                                            const std::vector<std::string>& columns) {
  backend& b = *detail::backend_of(tx);
  detail::check_column(t.key_column, "key column");
  detail::check_column(t.version_column, "version column");
  detail::check_key(key, "read_versioned");
  detail::check_columns(b.kind(), columns, 0, {t.version_column}, "read_versioned");
  const auto& st = detail::user_statement(b, "versioned_read_" + std::to_string(columns.size()),
                                          slots(t.table, t.key_column, {"version", t.version_column}, columns));
  return detail::optimistic_for(b.kind()).read_versioned(b, st, key, t.table, t.version_column);
}

std::optional<versioned_row> read_versioned(database& db, const versioned_table& t, const value& key,
                                            const std::vector<std::string>& columns) {
  return read_versioned(autocommit(db), t, key, columns);
}

update_result update_if_version(transaction_ref tx, const versioned_table& t, const value& key,
                                std::int64_t expected_version, const column_values& set) {
  backend& b = *detail::backend_of(tx);
  detail::check_column(t.key_column, "key column");
  detail::check_column(t.version_column, "version column");
  detail::check_key(key, "update_if_version");
  const auto names = names_of(set);
  detail::check_columns(b.kind(), names, 1, {t.version_column, t.key_column}, "update_if_version");
  const auto& st = detail::user_statement(b, "versioned_update_" + std::to_string(names.size()),
                                          slots(t.table, t.key_column, {"version", t.version_column}, names));
  std::vector<value> params;
  params.reserve(set.size() + 2);
  for (const auto& c : set) params.push_back(c.value);
  params.push_back(key);
  params.emplace_back(expected_version);
  auto r = b.exec_statement(st, params);
  if (r.affected > 0) return {true, expected_version + 1};
  return {false, 0};
}

update_result update_if_version(database& db, const versioned_table& t, const value& key,
                                std::int64_t expected_version, const column_values& set) {
  return update_if_version(autocommit(db), t, key, expected_version, set);
}

optimistic_result optimistic_update(database& db, const versioned_table& t, const value& key,
                                    const std::vector<std::string>& columns, const optimistic_fn& fn,
                                    const retry_policy& policy) {
  if (!fn) throw invalid_argument("optimistic_update: no update function");
  detail::check_columns(db.kind(), columns, 1, {t.version_column, t.key_column}, "optimistic_update");
  if (policy.max_attempts < 1) throw invalid_argument("optimistic_update: retry_policy::max_attempts must be >= 1");
  std::optional<detail::backoff> bo;  // made on the first conflict only
  optimistic_result res;
  for (int attempt = 1;; ++attempt) {
    res.attempts = attempt;
    auto row = read_versioned(db, t, key, columns);
    if (!row) {
      res.outcome = optimistic_outcome::not_found;
      return res;
    }
    res.version = row->version;
    auto values = fn(*row);
    if (!values) {
      res.outcome = optimistic_outcome::declined;
      return res;
    }
    if (values->size() != columns.size())
      throw invalid_argument("optimistic_update: the function returned " + std::to_string(values->size()) +
                             " values for " + std::to_string(columns.size()) + " columns");
    column_values set;
    set.reserve(columns.size());
    for (std::size_t i = 0; i < columns.size(); ++i) set.push_back({columns[i], std::move((*values)[i])});
    auto u = update_if_version(db, t, key, row->version, set);
    if (u.applied) {
      res.outcome = optimistic_outcome::applied;
      res.version = u.version;
      return res;
    }
    ++res.conflicts;
    if (attempt >= policy.max_attempts) {
      res.outcome = optimistic_outcome::conflict;
      return res;
    }
    // Full jitter in [0, backoff_ceiling(policy, attempt)] ms, as retry_on_conflict.
    if (!bo) bo.emplace(detail::retry_backoff(policy));
    std::this_thread::sleep_for(bo->next());
  }
}

fenced_result fenced_write(transaction_ref tx, const fenced_table& t, const value& key, std::int64_t token,
                           const column_values& set) {
  backend& b = *detail::backend_of(tx);
  detail::check_column(t.key_column, "key column");
  detail::check_column(t.fence_column, "fence column");
  detail::check_key(key, "fenced_write");
  const auto names = names_of(set);
  detail::check_columns(b.kind(), names, 1, {t.fence_column, t.key_column}, "fenced_write");
  const auto ids = slots(t.table, t.key_column, {"fence", t.fence_column}, names);
  const auto& st = detail::user_statement(b, "fenced_update_" + std::to_string(names.size()), ids);
  const auto& ops = detail::optimistic_for(b.kind());
  const detail::statement* check =
      ops.needs_fenced_check() ? &detail::user_statement(b, "fenced_check", {ids[0], ids[1], ids[2]}) : nullptr;
  std::vector<value> params;
  params.reserve(set.size() + 2);
  for (const auto& c : set) params.push_back(c.value);
  params.push_back(key);
  params.emplace_back(token);
  if (b.exec_statement(st, params).affected > 0) return {true};
  // Where 0 may also mean "the same values again" (optimistic_ops::needs_fenced_check).
  return {check && ops.fenced_check(b, *check, key, token)};
}

fenced_result fenced_write(database& db, const fenced_table& t, const value& key, std::int64_t token,
                           const column_values& set) {
  return fenced_write(autocommit(db), t, key, token, set);
}

}  // namespace dblock
