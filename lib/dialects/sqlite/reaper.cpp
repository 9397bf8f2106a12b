// lib/dialects/sqlite/reaper.cpp — reaping on SQLite, which has one writer at a time.
// Pacing: back-to-back batches would starve other writers (lock renewals retry every few
// ms) whatever the duty cycle, and past 20 ms a longer rest only slows the reaper (a writer
// waits for a batch, not a rest).
// The write lock: SQLite has no queue for it. A writer that finds it taken sleeps in its
// busy handler and looks again; a live client committing back to back leaves it free only
// for the microseconds between its statements, which a look every 0.1-2 ms rarely hits (a
// batch then waited 0.1-1 s for the lock). On its own connection the reaper refuses a busy
// lock at once and looks again itself every few tens of microseconds (reaper.cpp).
// async_commit: its batches commit without an fsync (reaper_session_async.sql).
#include "dialects/common/families.hpp"

namespace dblock::detail {

namespace {
class sqlite_reaper_impl final : public counted_reaper {
  void configure_session(backend& b, bool async_commit) const override {
    if (async_commit) b.exec("reaper_session_async");
    b.set_busy_timeout(std::chrono::milliseconds(0));
  }
  void bound_pacing(reap_pacing& p) const noexcept override {
    p.min_pause = std::chrono::milliseconds(2);
    p.max_pause = std::chrono::milliseconds(20);
  }
  std::chrono::microseconds writer_poll() const noexcept override { return std::chrono::microseconds(50); }
};
}  // namespace

const reaper_ops& sqlite_reaper() noexcept {
  static const sqlite_reaper_impl ops;
  return ops;
}

}  // namespace dblock::detail
