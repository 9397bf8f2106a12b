// lib/core/metrics.cpp — the process-wide counters of dblock/metrics.hpp and their
// Prometheus rendering.
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>

#include "core/internal.hpp"
#include "dblock/metrics.hpp"

namespace dblock {

namespace {

struct registry {
  std::array<std::atomic<std::uint64_t>, counter_count> counters{};
  std::array<std::atomic<std::uint64_t>, wait_buckets.size() + 1> buckets{};
  std::atomic<std::uint64_t> wait_micros{0};
  std::mutex cb_mu;
  std::shared_ptr<std::function<void(counter, std::uint64_t)>> cb;
  std::atomic<bool> has_cb{false};
};

registry& reg() {
  static registry r;
  return r;
}

struct counter_text {
  const char* name;
  const char* help;
};

constexpr counter_text texts[counter_count] = {
    {"lock_acquired", "Lease-lock grants (fresh, takeover or re-entry)."},
    {"lock_not_acquired", "Lease-lock tries refused because another owner held the lock."},
    {"lock_released", "Lease-lock holds released."},
    {"lock_renewals", "Watchdog renewal statements that succeeded."},
    {"lock_renewal_failures", "Watchdog renewal statements that failed and were retried within the lease."},
    {"lock_lost", "Leases reported lost."},
    {"lock_waits", "acquire() calls that had to wait."},
    {"idempotency_first", "Idempotency keys seen for the first time (attempt started)."},
    {"idempotency_replay", "Idempotency requests answered with the stored response."},
    {"idempotency_in_progress", "Idempotency requests refused because another attempt is in progress."},
    {"idempotency_mismatch", "Idempotency requests reusing a key with a different request."},
    {"idempotency_takeover", "Expired in-progress idempotency attempts taken over."},
    {"reaped_locks", "Expired lock rows deleted by the reaper."},
    {"reaped_idempotency", "Expired idempotency records deleted by the reaper."},
    {"reaper_runs", "Reaper passes completed."},
    {"reaper_errors", "Reaper passes that failed."},
    {"reaped_waiters", "Expired wait-line tickets deleted by the reaper."},
    {"replication_unsafe", "Session starts and migrations that found a replication setup able to lose a committed grant."},
    {"lock_crash_takeovers", "Leases ended before their expiry because their holder's connection had ended (crash detection)."},
    {"lock_handoff_notices", "Lease-lock grants a waiter held without reading them: from the releasing holder's hand-off notice, or in the releasing process from the release's answer."},
    {"lock_handoff_confirms", "Handed lease-lock grants a waiter confirmed with a write of its own before holding them (MariaDB, MySQL 8.0: the release was not made under its server lock, or the wait for that lock ran out)."},
};

}  // namespace

const char* to_string(counter c) noexcept {
  auto i = static_cast<std::size_t>(c);
  return i < counter_count ? texts[i].name : "unknown";
}

metrics_snapshot metrics() {
  auto& r = reg();
  metrics_snapshot s;
  for (std::size_t i = 0; i < counter_count; ++i) s.counters[i] = r.counters[i].load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < r.buckets.size(); ++i) s.wait_bucket_counts[i] = r.buckets[i].load(std::memory_order_relaxed);
  s.wait_seconds_sum = static_cast<double>(r.wait_micros.load(std::memory_order_relaxed)) / 1e6;
  return s;
}

void on_metric(std::function<void(counter, std::uint64_t)> cb) {
  auto& r = reg();
  std::lock_guard l(r.cb_mu);
  r.cb = cb ? std::make_shared<std::function<void(counter, std::uint64_t)>>(std::move(cb)) : nullptr;
  r.has_cb = static_cast<bool>(r.cb);
}

std::string render_prometheus(const metrics_snapshot& m) {
  std::string out;
  char line[256];
  for (std::size_t i = 0; i < counter_count; ++i) {
    std::snprintf(line, sizeof line, "# HELP dblock_%s_total %s\n# TYPE dblock_%s_total counter\ndblock_%s_total %llu\n",
                  texts[i].name, texts[i].help, texts[i].name, texts[i].name,
                  static_cast<unsigned long long>(m.counters[i]));
    out += line;
  }
  out += "# HELP dblock_lock_wait_seconds Time acquire() spent waiting for a lock held by another owner.\n";
  out += "# TYPE dblock_lock_wait_seconds histogram\n";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < wait_buckets.size(); ++i) {
    cumulative += m.wait_bucket_counts[i];
    std::snprintf(line, sizeof line, "dblock_lock_wait_seconds_bucket{le=\"%g\"} %llu\n", wait_buckets[i],
                  static_cast<unsigned long long>(cumulative));
    out += line;
  }
  cumulative += m.wait_bucket_counts[wait_buckets.size()];
  std::snprintf(line, sizeof line, "dblock_lock_wait_seconds_bucket{le=\"+Inf\"} %llu\n",
                static_cast<unsigned long long>(cumulative));
  out += line;
  std::snprintf(line, sizeof line, "dblock_lock_wait_seconds_sum %.6f\ndblock_lock_wait_seconds_count %llu\n",
                m.wait_seconds_sum, static_cast<unsigned long long>(cumulative));
  out += line;
  return out;
}

namespace detail {

void count(counter c, std::uint64_t amount) noexcept {
  auto& r = reg();
  r.counters[static_cast<std::size_t>(c)].fetch_add(amount, std::memory_order_relaxed);
  if (!r.has_cb.load(std::memory_order_relaxed)) return;
  std::shared_ptr<std::function<void(counter, std::uint64_t)>> cb;
  {
    std::lock_guard l(r.cb_mu);
    cb = r.cb;
  }
  if (cb) {
    try {
      (*cb)(c, amount);
    } catch (...) {
    }
  }
}

void observe_wait(double seconds) noexcept {
  auto& r = reg();
  std::size_t i = 0;
  while (i < wait_buckets.size() && seconds > wait_buckets[i]) ++i;
  r.buckets[i].fetch_add(1, std::memory_order_relaxed);
  r.wait_micros.fetch_add(static_cast<std::uint64_t>(seconds * 1e6), std::memory_order_relaxed);
}

}  // namespace detail
}  // namespace dblock
