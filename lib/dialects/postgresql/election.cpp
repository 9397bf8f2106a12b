// lib/dialects/postgresql/election.cpp — leader election on PostgreSQL
// (sql/postgresql/elect_*.sql): elect_set.sql returns the stored row and NOTIFYs observers.
#include "dialects/common/families.hpp"

namespace dblock::detail {

const election_ops& postgresql_elections() noexcept {
  static const table_elections ops{false};
  return ops;
}

}  // namespace dblock::detail
