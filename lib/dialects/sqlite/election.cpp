// lib/dialects/sqlite/election.cpp — leader election on SQLite (sql/sqlite/elect_*.sql):
// elect_set.sql returns the stored row.
#include "dialects/common/families.hpp"

namespace dblock::detail {

const election_ops& sqlite_elections() noexcept {
  static const table_elections ops{false};
  return ops;
}

}  // namespace dblock::detail
