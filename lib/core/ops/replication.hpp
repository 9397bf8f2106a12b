// lib/core/ops/replication.hpp — reading whether the server's replication can lose a
// committed grant on failover (include/dblock/replication.hpp). Implemented per dialect
// in lib/dialects/<dialect>/replication.cpp. Internal.
#pragma once

#include "core/backend.hpp"
#include "dblock/replication.hpp"

namespace dblock::detail {

class replication_ops {
 public:
  virtual ~replication_ops() = default;
  // The report for the server behind `b`; throws what the statement throws.
  [[nodiscard]] virtual replication_report check(backend& b) const = 0;
};

[[nodiscard]] const replication_ops& replication_for(dialect d) noexcept;

// Runs the check of `policy` (nothing for ignore; warn: for the first caller on `b` only,
// refuse: every time); on a
// finding counts replication_unsafe and warns, or throws unsafe_replication (refuse).
// `when` says who asked ("session start", "migrate"), for the message.
void check_replication_once(backend& b, replication_policy policy, const char* when);
// The same without the once-per-handle rule (migrate: every run reports).
void check_replication_now(backend& b, replication_policy policy, const char* when);

}  // namespace dblock::detail
