// lib/core/ops/reaper.hpp — the reaper's statement family (sql/<dialect>/reap_*.sql,
// reaper_session.sql). Implemented per dialect in lib/dialects/<dialect>/reaper.cpp.
// Internal.
#pragma once

#include <chrono>
#include <cstdint>

#include "core/backend.hpp"
#include "core/reaper_pacing.hpp"

namespace dblock::detail {

class reaper_ops {
 public:
  virtual ~reaper_ops() = default;
  // The rows a reap batch deleted, from its result.
  [[nodiscard]] virtual std::uint64_t deleted(const result& r) const = 0;
  // Once per connection the reaper opened itself, before its first batch; async_commit is
  // reaper_options::async_commit.
  virtual void configure_session(backend& b, bool async_commit) const = 0;
  // The dialect's bounds on the rest between batches.
  virtual void bound_pacing(reap_pacing& p) const noexcept = 0;
  // A single-writer database: the longest rest between the reaper's own looks for the write
  // lock on a connection configure_session set up (it refuses a busy lock at once). Zero:
  // the connection's busy handler waits.
  [[nodiscard]] virtual std::chrono::microseconds writer_poll() const noexcept { return {}; }
};

[[nodiscard]] const reaper_ops& reaper_for(dialect d) noexcept;

}  // namespace dblock::detail
