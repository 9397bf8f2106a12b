// lib/dialects/mysql8/election.cpp — leader election on MySQL 8.0 (sql/mysql8/elect_*.sql): no
// INSERT ... RETURNING, so elect_set.sql is judged by its matched count.
#include "dialects/common/families.hpp"

namespace dblock::detail {

const election_ops& mysql8_elections() noexcept {
  static const table_elections ops{true};
  return ops;
}

}  // namespace dblock::detail
