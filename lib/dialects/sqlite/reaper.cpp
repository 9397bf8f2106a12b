// lib/dialects/sqlite/reaper.cpp — reaping on SQLite, which has one writer at a time:
// back-to-back batches would starve other writers (lock renewals retry every few ms)
// whatever the duty cycle, and past 20 ms a longer rest only slows the reaper (a writer
// waits for a batch, not a rest).
#include "dialects/common/families.hpp"

namespace dblock::detail {

namespace {
class sqlite_reaper_impl final : public counted_reaper {
  void bound_pacing(reap_pacing& p) const noexcept override {
    p.min_pause = std::chrono::milliseconds(2);
    p.max_pause = std::chrono::milliseconds(20);
  }
};
}  // namespace

const reaper_ops& sqlite_reaper() noexcept {
  static const sqlite_reaper_impl ops;
  return ops;
}

}  // namespace dblock::detail
