// lib/dialects/mysql8/liveness.cpp — crash detection's liveness markers on MySQL 8.0: the user lock 'dblock:o:<owner>'
// (sql/mysql8/lock_marker_*.sql, lock_probe_marker(_expiry).sql, lock_reclaim.sql, holders_probe_marker.sql, holders_reclaim.sql).
#include "dialects/common/marker_liveness.hpp"

namespace dblock::detail {

namespace {
class mysql8_liveness final : public connection_marker_liveness {
  bool reclaim_returns_row() const noexcept override { return false; }
};
}  // namespace

const liveness_ops& mysql8_liveness_ops() noexcept {
  static const mysql8_liveness ops;
  return ops;
}

}  // namespace dblock::detail
