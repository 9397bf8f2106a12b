// dblock/metrics.hpp — process-wide counters and timings of every dblock primitive:
// read a snapshot, render it in the Prometheus text exposition format, or receive each
// event through a callback. Counting is a relaxed atomic add: cheap on hot paths.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace dblock {

enum class counter : int {
  lock_acquired,         // grants (fresh, takeover or re-entry)
  lock_not_acquired,     // tries refused because another owner held the lock
  lock_released,         // holds released normally
  lock_renewals,         // watchdog renewal statements that succeeded
  lock_renewal_failures, // watchdog renewal statements that failed (retried within the lease)
  lock_lost,             // leases reported lost
  lock_waits,            // acquire() calls that had to wait
  idem_first,            // idempotency begin(): started a new attempt on a fresh key
  idem_replay,           // begin(): completed earlier, stored response replayed
  idem_in_progress,      // begin(): another live attempt holds the key
  idem_mismatch,         // begin(): same key, different request
  idem_takeover,         // begin(): expired in-progress lease taken over (attempt + 1)
  reaped_locks,          // expired lock rows deleted by the reaper
  reaped_idempotency,    // expired idempotency records deleted by the reaper
  reaper_runs,           // reaper passes completed
  reaper_errors,         // reaper passes that failed (it backs off and keeps going)
  reaped_waiters,        // expired wait-line tickets deleted by the reaper
  replication_unsafe,    // checks (session start, migrate) that found a setup able to lose a committed grant
  lock_crash_takeovers,  // leases ended early because their holder's connection ended (crash detection)
  lock_handoff_notices,  // grants a waiter held without reading them (the release's notice or answer)
  lock_handoff_confirms, // handed grants a waiter confirmed with a write of its own before holding (MariaDB, MySQL 8.0)
  count_
};

inline constexpr std::size_t counter_count = static_cast<std::size_t>(counter::count_);

// Upper bounds (seconds) of the lock-wait histogram buckets; +Inf is implied.
inline constexpr std::array<double, 10> wait_buckets = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1, 10};

struct metrics_snapshot {
  std::array<std::uint64_t, counter_count> counters{};
  // Time spent waiting in acquire() (only calls that waited): histogram + sum.
  std::array<std::uint64_t, wait_buckets.size() + 1> wait_bucket_counts{};  // last = +Inf
  double wait_seconds_sum = 0;

  [[nodiscard]] std::uint64_t operator[](counter c) const { return counters[static_cast<std::size_t>(c)]; }
};

[[nodiscard]] const char* to_string(counter c) noexcept;  // e.g. "lock_acquired"

// The current values (monotonic since process start).
[[nodiscard]] metrics_snapshot metrics();

// Called for every counted event (from the thread that caused it: keep it cheap, never
// throw). `amount` is 1 for most events, the row count for reaper deletions. Pass an
// empty function to remove. One callback per process.
void on_metric(std::function<void(counter, std::uint64_t amount)> cb);

// Prometheus text format 0.0.4: dblock_<name>_total counters and the
// dblock_lock_wait_seconds histogram, with HELP and TYPE lines.
[[nodiscard]] std::string render_prometheus(const metrics_snapshot& m);

}  // namespace dblock
