// lib/core/ops/session_lock.hpp — the session-lock statement family
// (sql/<dialect>/session_lock_*.sql): server locks owned by one connection (advisory locks,
// GET_LOCK). Implemented per dialect in lib/dialects/<dialect>/session_lock.cpp; a dialect
// without them (dialect_traits::session_locks false) refuses every call. Internal.
#pragma once

#include <string_view>

#include "core/backend.hpp"

namespace dblock::detail {

class session_lock_ops {
 public:
  virtual ~session_lock_ops() = default;
  // Each is one round trip on `b` and true when the server said yes.
  [[nodiscard]] virtual bool try_lock(backend& b, std::string_view name) const = 0;
  virtual bool release(backend& b, std::string_view name) const = 0;
  [[nodiscard]] virtual bool held(backend& b, std::string_view name) const = 0;
};

[[nodiscard]] const session_lock_ops& session_locks_for(dialect d) noexcept;

}  // namespace dblock::detail
