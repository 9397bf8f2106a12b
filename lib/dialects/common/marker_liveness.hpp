// lib/dialects/common/marker_liveness.hpp — the crash-detection statements
// (lib/core/ops/liveness.hpp) of the dialects whose server holds a lock per connection
// (PostgreSQL advisory locks, MariaDB/MySQL user locks): the same calls and columns, each
// dialect's own sql/<dialect>/lock_marker_*.sql, lock_probe_marker.sql,
// lock_probe_marker_expiry.sql, lock_reclaim.sql,
// holders_probe_marker.sql, holders_reclaim.sql.
// Internal.
#pragma once

#include "core/ops/liveness.hpp"

namespace dblock::detail {

class connection_marker_liveness : public liveness_ops {
 public:
  bool supported() const noexcept override { return true; }
  marker_take take(backend& b, const std::string& owner, std::string* server_connection) const override;
  void drop(backend& b, const std::string& owner) const override;
  std::string ping(backend& b) const override;
  std::optional<marked_holder> probe(backend& b, const std::string& name, const std::string& owner) const override;
  std::optional<marked_holder> probe_expiry(backend& b, const std::string& name,
                                            const std::string& owner) const override;
  bool reclaim(backend& b, const std::string& name, const std::string& owner, std::int64_t fence) const override;
  std::vector<marked_hold> probe_holds(backend& b, const std::string& name, const std::string& owner) const override;
  bool reclaim_hold(backend& b, const std::string& name, const std::string& hold_owner, std::int64_t slot,
                    std::int64_t fence) const override;

 protected:
  // lock_reclaim.sql and holders_reclaim.sql return the reclaimed row (PostgreSQL) or count
  // it (MySQL family).
  [[nodiscard]] virtual bool reclaim_returns_row() const noexcept = 0;
};

}  // namespace dblock::detail
