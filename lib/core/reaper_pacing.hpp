// lib/core/reaper_pacing.hpp — the reaper's pacing arithmetic (reaper_options::duty_cycle),
// kept free of clocks and databases so tests/unit can check it.
//
// Why: a batch of deletes competes with live traffic for the database's log flush (each
// 1,000-row batch on PostgreSQL commits ~100 kB of WAL that a live commit queued behind
// it waits for), for CPU, and on SQLite for the only writer lock. A rest after each batch,
// proportional to that batch's own duration, bounds the share of time the reaper spends
// in statements; a database slowed by load makes batches slower and so the rests longer.
#pragma once

#include <chrono>
#include <cstdint>

namespace dblock::detail {

struct reap_pacing {
  double duty_cycle = 1.0;                 // (0, 1]: share of wall time spent in batches
  std::chrono::microseconds min_pause{0};  // floor of every rest (SQLite: writer hand-off)
  std::chrono::microseconds max_pause{0};  // ceiling of every rest; 0 = none
};

// The rest after a batch that took `took`: took * (1 - duty) / duty, within the bounds.
[[nodiscard]] std::chrono::microseconds reap_pause(const reap_pacing& p, std::chrono::microseconds took) noexcept;

}  // namespace dblock::detail
