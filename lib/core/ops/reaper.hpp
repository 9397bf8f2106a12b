// lib/core/ops/reaper.hpp — the reaper's statement family (sql/<dialect>/reap_*.sql,
// reaper_session.sql). Implemented per dialect in lib/dialects/<dialect>/reaper.cpp.
// Internal.
#pragma once

#include <cstdint>

#include "core/backend.hpp"
#include "core/reaper_pacing.hpp"

namespace dblock::detail {

class reaper_ops {
 public:
  virtual ~reaper_ops() = default;
  // The rows a reap batch deleted, from its result.
  [[nodiscard]] virtual std::uint64_t deleted(const result& r) const = 0;
  // Once per connection the reaper opened itself, before its first batch.
  virtual void configure_session(backend& b) const = 0;
  // The dialect's bounds on the rest between batches.
  virtual void bound_pacing(reap_pacing& p) const noexcept = 0;
};

[[nodiscard]] const reaper_ops& reaper_for(dialect d) noexcept;

}  // namespace dblock::detail
