// lib/core/wait_pacer.cpp — see wait_pacer.hpp.
#include "core/wait_pacer.hpp"

#include <algorithm>

namespace dblock::detail {

wait_pacer::wait_pacer(us min, us max, clock::time_point start, std::uint64_t seed, bool notified)
    : min_(min), max_(std::max(min, max)), notified_(notified), last_change_(start), rng_(seed) {}

void wait_pacer::refused(std::optional<std::int64_t> fence, clock::time_point now) {
  if (!fence) return;
  if (last_fence_ != 0 && last_fence_ != *fence) {
    // Another grant since the last refusal: the lock is changing hands.
    const auto gap = std::chrono::duration_cast<us>(now - last_change_);
    interval_ = interval_.count() == 0 ? gap : (interval_ * 3 + gap) / 4;
    step_ = 0;
  }
  if (last_fence_ != *fence) last_change_ = now;
  last_fence_ = *fence;
}

void wait_pacer::reset(clock::time_point now) {
  step_ = 0;
  behind_step_ = 0;
  last_ahead_ = -1;
  last_fence_ = 0;
  interval_ = us(0);
  last_change_ = now;
}

void wait_pacer::first_in_line() {
  step_ = 0;
  behind_step_ = 0;
  last_ahead_ = -1;
}

wait_pacer::us wait_pacer::next(std::optional<std::chrono::milliseconds> holder_left, clock::time_point now) {
  const us doubling = std::min<us>(max_, min_ * (std::int64_t{1} << std::min(step_, 20)));
  us cap = doubling;
  if (interval_.count() > 0 && now - last_change_ < 4 * interval_) {
    // Still changing hands at the observed pace: stay near it, and let the doubling grow
    // only up to twice the pace, so that a hold outliving it doubles on from there.
    cap = std::clamp(2 * interval_, min_, doubling);
    if (doubling < 2 * interval_) ++step_;
    // Only a try finds the release: poll finely around the expected end of the hold.
    if (!notified_ && now - last_change_ < 2 * interval_) cap = std::min(cap, std::clamp(interval_ / 8, us(250), min_));
  } else {
    ++step_;  // a long hold, or no pace known yet
  }
  // Equal jitter: spread waiters out without pointless sub-cap polls.
  const auto lo = std::max<long long>(1, cap.count() / 2);
  auto sleep = us(std::uniform_int_distribution<long long>(lo, std::max<long long>(lo, cap.count()))(rng_));
  if (holder_left && holder_left->count() >= 0) sleep = std::min<us>(sleep, *holder_left + std::chrono::milliseconds(1));
  return sleep;
}

wait_pacer::us wait_pacer::behind(std::int64_t ahead, clock::time_point now) {
  if (last_ahead_ >= 0 && ahead < last_ahead_) {
    behind_step_ = 0;  // moved up
  } else if (last_ahead_ >= 0) {
    behind_step_ = std::min(behind_step_ + 1, 20);
  }
  last_ahead_ = ahead;
  us cap = std::min<us>(max_, min_ * (std::int64_t{1} << behind_step_));
  if (interval_.count() > 0 && now - last_change_ < 4 * interval_)
    cap = std::min(cap, std::max(min_, interval_ * std::max<std::int64_t>(1, ahead) / 2));
  const auto lo = std::max<long long>(1, cap.count() / 2);
  return us(std::uniform_int_distribution<long long>(lo, std::max<long long>(lo, cap.count()))(rng_));
}

}  // namespace dblock::detail
