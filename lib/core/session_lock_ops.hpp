// lib/core/session_lock_ops.hpp — session-lock operations on one backend connection
// (sql/<dialect>/session_lock_*.sql), shared by dblock::session_lock and the migration
// runner. PostgreSQL and MySQL/MariaDB only. Internal.
#pragma once

#include <chrono>
#include <string_view>

#include "core/backend.hpp"

namespace dblock::detail {

[[nodiscard]] bool session_try(backend& b, std::string_view name);
bool session_release(backend& b, std::string_view name);
[[nodiscard]] bool session_held(backend& b, std::string_view name);
// Polls session_try with backoff and full jitter until `wait` runs out.
[[nodiscard]] bool session_wait(backend& b, std::string_view name, std::chrono::milliseconds wait);

}  // namespace dblock::detail
