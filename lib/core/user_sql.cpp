// lib/core/user_sql.cpp — see user_sql.hpp.
#include "core/user_sql.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "core/dialect.hpp"
#include "dblock/errors.hpp"
#include "dblock/util.hpp"

namespace dblock::detail {

const statement& user_statement(backend& b, std::string_view name, const identifier_slots& ids) {
  // Validate first, outside the lock: a bad identifier throws before anything runs.
  for (const auto& [slot, ident] : ids) (void)quote_identifier(ident, b.kind());
  std::string key(name);
  for (const auto& [slot, ident] : ids) key += "\x1f" + slot + "=" + ident;
  static std::mutex mu;
  static std::map<std::tuple<int, int, std::string>, statement, std::less<>> cache;
  const auto style = b.raw().style();
  auto k = std::make_tuple(static_cast<int>(b.kind()), static_cast<int>(style), std::move(key));
  std::lock_guard lock(mu);
  if (auto it = cache.find(k); it != cache.end()) return it->second;
  return cache.emplace(std::move(k), render_statement(b.kind(), style, name, ids)).first->second;
}

bool same_column(dialect d, std::string_view a, std::string_view b) noexcept {
  if (traits_of(d).case_sensitive_columns) return a == b;
  auto fold = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [&](char x, char y) { return fold(x) == fold(y); });
}

void check_column(std::string_view column, std::string_view what) {
  if (column.find('.') != std::string_view::npos || !is_valid_identifier(column))
    throw invalid_argument("invalid " + std::string(what) + " '" + std::string(column) +
                           "' (expected a column name [A-Za-z_][A-Za-z0-9_]*, at most 63 characters)");
}

void check_columns(dialect d, const std::vector<std::string>& columns, std::size_t min_count,
                   const std::vector<std::string_view>& reserved, std::string_view helper) {
  if (columns.size() < min_count || columns.size() > max_columns)
    throw invalid_argument(std::string(helper) + ": " + std::to_string(columns.size()) + " columns given, expected " +
                           std::to_string(min_count) + " to " + std::to_string(max_columns) +
                           " (write a statement of your own for wider rows)");
  for (std::size_t i = 0; i < columns.size(); ++i) {
    check_column(columns[i], "column name");
    for (auto r : reserved)
      if (same_column(d, columns[i], r))
        throw invalid_argument(std::string(helper) + ": column '" + columns[i] +
                               "' is the key, version or fence column; dblock sets that one itself");
    for (std::size_t j = 0; j < i; ++j)
      if (same_column(d, columns[i], columns[j]))
        throw invalid_argument(std::string(helper) + ": column '" + columns[i] + "' is named twice");
  }
}

void check_key(const value& key, std::string_view helper) {
  if (std::holds_alternative<std::nullptr_t>(key))
    throw invalid_argument(std::string(helper) + ": the key is NULL (NULL matches no row)");
}

void require_transaction(backend& b, std::string_view helper) {
  if (!b.raw().in_transaction())
    throw invalid_argument(std::string(helper) +
                           " runs inside a transaction: use dblock::transact(db, ...) or dblock::within(your transaction)");
}

}  // namespace dblock::detail
