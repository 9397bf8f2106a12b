// lib/dialects/mysql8/replication.cpp — the replication check on MySQL 8.0, as on MariaDB:
// nothing dblock can read tells it whether a committed grant can be lost on failover
// (docs/operations.md, "Deployment topologies"), so the report is empty and costs no round
// trip.
#include "core/ops/replication.hpp"

namespace dblock::detail {

namespace {
class no_replication_check final : public replication_ops {
  replication_report check(backend&) const override { return {}; }
};
}  // namespace

const replication_ops& mysql8_replication() noexcept {
  static const no_replication_check ops;
  return ops;
}

}  // namespace dblock::detail
