// lib/core/backoff.hpp — exponential backoff with jitter, the one implementation every
// polling and retry loop of the library uses. Pure arithmetic: no sleeping and no clock
// (sleep_before() is the one helper that sleeps), the random source seeded by the caller,
// so tests/unit checks it without a database. Internal.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace dblock {
struct retry_policy;
}

namespace dblock::detail {

struct backoff_policy {
  std::chrono::microseconds initial{1000};  // cap of the first delay
  std::chrono::microseconds max{200000};    // the cap never grows past this
  double multiplier = 2.0;
  enum class jitter { none, full, equal } spread = jitter::full;  // full: [1us, cap]; equal: [cap/2, cap]
};

// A seed for a jitter generator, drawn from a generator of the calling thread that
// std::random_device seeds once per thread and process (a forked child draws its own
// sequence, not a copy of its parent's). Not std::random_device per call: constructing one
// takes about 18 us on a virtual machine (its set-up runs CPUID, which traps to the
// hypervisor), and every wait and retry loop makes a generator.
[[nodiscard]] std::uint64_t jitter_seed();

class backoff {
 public:
  explicit backoff(backoff_policy p, std::uint64_t seed = jitter_seed());
  // The next delay; grows the cap. A cap of zero gives zero delays.
  std::chrono::microseconds next();
  // The same with this delay's cap lowered to `limit` (at least 1 us), e.g. to wake up when
  // a lease lapses; the cap still grows as after next().
  std::chrono::microseconds next(std::chrono::microseconds limit);
  void reset();  // back to `initial`
  [[nodiscard]] int attempts() const noexcept { return attempts_; }
  [[nodiscard]] std::chrono::microseconds cap() const noexcept { return cap_; }  // cap of the next delay

 private:
  std::chrono::microseconds draw(std::chrono::microseconds cap);
  void grow() noexcept;

  backoff_policy p_;
  std::mt19937_64 rng_;
  std::chrono::microseconds cap_;
  int attempts_ = 0;
};

// retry_policy's backoff (full jitter from initial_backoff, times multiplier, up to
// max_backoff), seeded from a per-thread generator (retry.cpp).
[[nodiscard]] backoff retry_backoff(const retry_policy& p);

// Sleeps next() but never past `deadline`; returns false when deadline already passed.
bool sleep_before(backoff& b, std::chrono::steady_clock::time_point deadline);

}  // namespace dblock::detail
