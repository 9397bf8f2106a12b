// lib/core/backoff.cpp — exponential backoff with jitter (backoff.hpp).
#include "core/backoff.hpp"

#include <unistd.h>

#include <algorithm>
#include <thread>

namespace dblock::detail {

using std::chrono::microseconds;

namespace {
microseconds first_cap(const backoff_policy& p) {
  return std::clamp(p.initial, microseconds::zero(), std::max(p.max, microseconds::zero()));
}
}  // namespace

std::uint64_t jitter_seed() {
  thread_local std::mt19937_64 seeds{std::random_device{}()};
  thread_local pid_t seeded_in = ::getpid();
  if (const pid_t pid = ::getpid(); pid != seeded_in) {  // a fork's child: its own sequence
    seeds.seed(std::random_device{}());
    seeded_in = pid;
  }
  return seeds();
}

backoff::backoff(backoff_policy p, std::uint64_t seed) : p_(p), rng_(seed), cap_(first_cap(p)) {}

microseconds backoff::draw(microseconds cap) {
  if (cap.count() <= 0) return microseconds::zero();
  using dist = std::uniform_int_distribution<std::int64_t>;
  switch (p_.spread) {
    case backoff_policy::jitter::none: return cap;
    case backoff_policy::jitter::full: return microseconds(dist(1, cap.count())(rng_));
    case backoff_policy::jitter::equal: return microseconds(dist(cap.count() - cap.count() / 2, cap.count())(rng_));
  }
  return cap;
}

void backoff::grow() noexcept {
  ++attempts_;
  const double mult = p_.multiplier >= 1.0 ? p_.multiplier : 1.0;
  // In floating point and clamped before the conversion, so no overflow.
  const double v = static_cast<double>(cap_.count()) * mult;
  cap_ = v < static_cast<double>(p_.max.count()) ? microseconds(static_cast<std::int64_t>(v)) : std::max(p_.max, cap_);
}

microseconds backoff::next() {
  const auto d = draw(cap_);
  grow();
  return d;
}

microseconds backoff::next(microseconds limit) {
  const auto d = draw(cap_.count() > 0 ? std::clamp(limit, microseconds(1), cap_) : cap_);
  grow();
  return d;
}

void backoff::reset() {
  cap_ = first_cap(p_);
  attempts_ = 0;
}

bool sleep_before(backoff& b, std::chrono::steady_clock::time_point deadline) {
  const auto now = std::chrono::steady_clock::now();
  if (now >= deadline) return false;
  std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(b.next(), deadline - now));
  return true;
}

}  // namespace dblock::detail
