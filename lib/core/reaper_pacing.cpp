// lib/core/reaper_pacing.cpp — see reaper_pacing.hpp.
#include "core/reaper_pacing.hpp"

#include <algorithm>
#include <cmath>

namespace dblock::detail {

std::chrono::microseconds reap_pause(const reap_pacing& p, std::chrono::microseconds took) noexcept {
  const double duty = std::clamp(p.duty_cycle, 0.001, 1.0);  // the constructor rejects the rest
  const double busy = static_cast<double>(std::max<std::int64_t>(took.count(), 0));  // a clock step back is 0
  // Busy `took`, then idle took * (1 - duty) / duty: in statements a share `duty` of the time.
  auto pause = std::chrono::microseconds(std::llround(busy * (1.0 - duty) / duty));
  pause = std::max(pause, p.min_pause);
  if (p.max_pause.count() > 0) pause = std::min(pause, std::max(p.max_pause, p.min_pause));
  return pause;
}

}  // namespace dblock::detail
