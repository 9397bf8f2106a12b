// lib/core/wait_pacer.hpp — how long a waiting acquire sleeps between tries. Pure (no clock
// reads, no sleeping; the random source is seeded by the caller), unit-tested without a
// database (tests/unit/wait_pacer_test.cpp). Used by session::acquire (lib/core/lock.cpp).
//
// Exponential backoff with equal jitter from `min` to `max`, aware of hand-offs: a refused
// try that shows another grant than the previous one (a fence identifies a grant) means the
// lock is changing hands, so the backoff starts over, and while grants keep coming at the
// pace observed the cap stays near twice that interval instead of growing to `max`. A sleep
// never runs (much) past the holder's expiry. Where no release notice wakes the waiter
// (`notified` false), the first in line learns of a release only by trying: while grants
// come at the observed pace it polls at a fine period (an eighth of that pace, 250 us to
// `min`), so a hand-off costs about one such period rather than a doubling step.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>

namespace dblock::detail {

class wait_pacer {
 public:
  using clock = std::chrono::steady_clock;
  using us = std::chrono::microseconds;

  wait_pacer(us min, us max, clock::time_point start, std::uint64_t seed, bool notified = true);

  // A try was refused at `now`; `fence` is the grant that refused it, if known.
  void refused(std::optional<std::int64_t> fence, clock::time_point now);
  // Forgets what was learnt about the pace of grants (the waiter's situation changed).
  void reset(clock::time_point now);
  // The waiter became first in line: its backoff starts over; the pace of grants it saw
  // while behind is kept (the current hold began at the last grant it saw).
  void first_in_line();
  // The sleep before the next try. `holder_left`: the holder's time to expiry, if known.
  [[nodiscard]] us next(std::optional<std::chrono::milliseconds> holder_left, clock::time_point now);

  // The sleep of a waiter `ahead` places behind the first in line, before it looks again:
  // a quarter of the time the grants before its own but the current one take at the pace
  // learnt from how fast `ahead` fell (biased fast; at least `min`, at most `max` or 10 s,
  // whichever is longer), so that a waiter far back reads its place a few dozen times per
  // wait and the next in line every `min`. While the line stands still (a long hold), at
  // most a quarter of the time it has stood still, up to `max`.
  [[nodiscard]] us behind(std::int64_t ahead, clock::time_point now);

  [[nodiscard]] us interval() const noexcept { return interval_; }  // 0 = no hand-off seen yet

 private:
  us min_, max_;
  bool notified_;
  int step_ = 0;
  std::int64_t last_fence_ = 0;  // 0 = none yet (fences start at 1)
  clock::time_point last_change_;
  us interval_{0};  // smoothed time between observed grant changes
  std::int64_t last_ahead_ = -1;  // behind(): the place seen last, -1 = none
  clock::time_point last_moved_;  // behind(): when the place last fell (or was first seen)
  us line_pace_{0};               // behind(): smoothed time per grant ahead, 0 = unknown
  std::mt19937_64 rng_;
};

}  // namespace dblock::detail
