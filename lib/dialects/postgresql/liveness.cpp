// lib/dialects/postgresql/liveness.cpp — crash detection's liveness markers on PostgreSQL: session advisory locks in the two-int key class 'dblo'
// (sql/postgresql/lock_marker_*.sql, lock_probe_marker(_expiry).sql, lock_reclaim.sql, holders_probe_marker.sql, holders_reclaim.sql).
#include "dialects/common/marker_liveness.hpp"

namespace dblock::detail {

namespace {
class postgresql_liveness final : public connection_marker_liveness {
  bool reclaim_returns_row() const noexcept override { return true; }
};
}  // namespace

const liveness_ops& postgresql_liveness_ops() noexcept {
  static const postgresql_liveness ops;
  return ops;
}

}  // namespace dblock::detail
