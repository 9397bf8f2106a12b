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
  line_pace_ = us(0);
  step_ = 0;
  last_ahead_ = -1;
  last_fence_ = 0;
  interval_ = us(0);
  last_change_ = now;
}

void wait_pacer::first_in_line() {
  // The pace learnt from moving up counts every grant; fences seen now and then skip some.
  if (line_pace_.count() > 0) interval_ = line_pace_;
  step_ = 0;
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
    // Moved up: (last_ahead_ - ahead) grants since last_moved_, the pace of this line.
    // Biased fast: a faster sample is believed at once, a slower one a quarter. Waking
    // early costs a read; waking after its turn stalls the whole line.
    const auto per_grant = std::max(us(1), std::chrono::duration_cast<us>(now - last_moved_) / (last_ahead_ - ahead));
    line_pace_ = line_pace_.count() == 0 ? per_grant : std::min(per_grant, (line_pace_ * 3 + per_grant) / 4);
    last_moved_ = now;
  } else if (last_ahead_ < 0) {
    last_moved_ = now;
  }
  last_ahead_ = ahead;
  // A quarter of the time the grants before ours but the current one take at that pace:
  // the next in line (ahead 1) looks every `min`.
  us cap = min_;
  if (line_pace_.count() > 0)
    cap = std::clamp(line_pace_ * (std::max<std::int64_t>(1, ahead) - 1) / 4, min_, std::max(max_, us(10'000'000)));
  // A line that stopped (a long hold) may be slept through for a quarter of the time it has
  // stood still (at most `max`): waking late then adds at most a quarter to that hold.
  cap = std::max(cap, std::min(max_, std::chrono::duration_cast<us>(now - last_moved_) / 4));
  const auto lo = std::max<long long>(1, cap.count() / 2);
  return us(std::uniform_int_distribution<long long>(lo, std::max<long long>(lo, cap.count()))(rng_));
}

}  // namespace dblock::detail
