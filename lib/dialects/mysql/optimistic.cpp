// lib/dialects/mysql/optimistic.cpp — fenced writes on MySQL/MariaDB: a caller's connection
// without CLIENT_FOUND_ROWS counts changed rows, so the same holder writing the same values
// again counts 0; fenced_check.sql (a locking read) tells that from a stale token.
#include "dialects/common/families.hpp"

namespace dblock::detail {

namespace {
class mysql_optimistic_impl final : public versioned_reads {
  bool needs_fenced_check() const noexcept override { return true; }
  bool fenced_check(backend& b, const statement& check, const value& key, std::int64_t token) const override {
    auto r = b.exec_statement(check, std::vector<value>{key, token});
    return !r.rows.empty() && r.rows[0].at(0) && *r.rows[0][0] != "0";
  }
};
}  // namespace

const optimistic_ops& mysql_optimistic() noexcept {
  static const mysql_optimistic_impl ops;
  return ops;
}

}  // namespace dblock::detail
