// lib/dialects/mysql/replication.cpp — the replication check on MariaDB: nothing dblock can
// read tells it whether a committed grant can be lost on failover (docs/operations.md,
// "Deployment topologies"), so the report is empty and costs no round trip.
#include "dialects/common/families.hpp"

namespace dblock::detail {

const replication_ops& mysql_replication() noexcept {
  static const no_replication_check ops;
  return ops;
}

}  // namespace dblock::detail
