// lib/dialects/mysql/election.cpp — leader election on MariaDB (sql/mysql/elect_*.sql): no
// RETURNING on an upsert that may update, so elect_set.sql is judged by its matched count.
#include "dialects/common/families.hpp"

namespace dblock::detail {

const election_ops& mysql_elections() noexcept {
  static const table_elections ops{true};
  return ops;
}

}  // namespace dblock::detail
