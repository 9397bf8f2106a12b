// tests/unit/backoff_test.cpp — the shared backoff unit (lib/core/backoff.hpp) without a
// database: each jitter kind stays within its bounds, the cap grows by the multiplier up to
// max, reset() starts over, a seed fixes the sequence, sleep_before() keeps its deadline,
// jitter_seed() differs between threads and between a forked child and its parent.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <set>
#include <thread>

#include "core/backoff.hpp"

namespace dblock::detail {
namespace {

using namespace std::chrono_literals;
using us = std::chrono::microseconds;
using jitter = backoff_policy::jitter;

backoff_policy policy(us initial, us max, double mult, jitter j) {
  backoff_policy p;
  p.initial = initial;
  p.max = max;
  p.multiplier = mult;
  p.spread = j;
  return p;
}

TEST(Backoff, FullJitterStaysWithinOneMicrosecondAndTheCap) {
  backoff b(policy(1000us, 50'000us, 2.0, jitter::full), 7);
  us lowest = us::max();
  for (int i = 0; i < 5000; ++i) {
    if (i % 10 == 0) b.reset();
    const us cap = b.cap();
    const us d = b.next();
    EXPECT_GE(d, 1us);
    EXPECT_LE(d, cap);
    lowest = std::min(lowest, d);
  }
  EXPECT_LT(lowest, 100us);  // the whole range is drawn from, not just its top
}

TEST(Backoff, EqualJitterStaysInTheUpperHalf) {
  backoff b(policy(1001us, 80'000us, 3.0, jitter::equal), 11);
  for (int i = 0; i < 5000; ++i) {
    if (i % 7 == 0) b.reset();
    const us cap = b.cap();
    const us d = b.next();
    EXPECT_GE(d, cap / 2);
    EXPECT_LE(d, cap);
  }
}

TEST(Backoff, NoJitterIsTheCap) {
  backoff b(policy(5ms, 40ms, 2.0, jitter::none));
  std::vector<us> got;
  for (int i = 0; i < 6; ++i) got.push_back(b.next());
  EXPECT_EQ(got, (std::vector<us>{5ms, 10ms, 20ms, 40ms, 40ms, 40ms}));
  EXPECT_EQ(b.attempts(), 6);
}

TEST(Backoff, CapGrowsByTheMultiplierUpToMax) {
  backoff b(policy(100us, 1000us, 1.5, jitter::full), 3);
  EXPECT_EQ(b.cap(), 100us);
  (void)b.next();
  EXPECT_EQ(b.cap(), 150us);
  (void)b.next();
  EXPECT_EQ(b.cap(), 225us);
  for (int i = 0; i < 100; ++i) (void)b.next();
  EXPECT_EQ(b.cap(), 1000us);
  for (int i = 0; i < 100'000; ++i) (void)b.next();  // no overflow however long it runs
  EXPECT_EQ(b.cap(), 1000us);
}

TEST(Backoff, InitialAboveMaxStartsAtMax) {
  backoff b(policy(10ms, 2ms, 2.0, jitter::none));
  EXPECT_EQ(b.cap(), 2ms);
  EXPECT_EQ(b.next(), 2ms);
}

TEST(Backoff, ZeroCapGivesZeroDelays) {
  backoff b(policy(0us, 100ms, 2.0, jitter::full));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(b.next(), 0us);
}

TEST(Backoff, ResetGoesBackToInitial) {
  backoff b(policy(2ms, 250ms, 2.0, jitter::full));
  for (int i = 0; i < 5; ++i) (void)b.next();
  EXPECT_EQ(b.cap(), 64ms);
  EXPECT_EQ(b.attempts(), 5);
  b.reset();
  EXPECT_EQ(b.cap(), 2ms);
  EXPECT_EQ(b.attempts(), 0);
}

TEST(Backoff, LimitLowersOneDelayOnly) {
  backoff b(policy(100ms, 1s, 2.0, jitter::full), 5);
  for (int i = 0; i < 200; ++i) {
    b.reset();
    const us d = b.next(3ms);
    EXPECT_GE(d, 1us);
    EXPECT_LE(d, 3ms);
    EXPECT_EQ(b.cap(), 200ms);
  }
  b.reset();
  EXPECT_LE(b.next(0us), 1us);  // never below 1 us
}

TEST(Backoff, SameSeedSameSequence) {
  const auto p = policy(1ms, 1s, 2.0, jitter::full);
  backoff a(p, 42), b(p, 42), c(p, 43);
  std::vector<us> sa, sb, sc;
  for (int i = 0; i < 20; ++i) {
    sa.push_back(a.next());
    sb.push_back(b.next());
    sc.push_back(c.next());
  }
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
}

TEST(Backoff, JitterSeedsDifferWithinAndAcrossThreads) {
  std::set<std::uint64_t> seeds;
  for (int i = 0; i < 4; ++i) seeds.insert(jitter_seed());
  std::uint64_t other[4] = {};
  std::thread t([&] {
    for (auto& s : other) s = jitter_seed();
  });
  t.join();
  for (auto s : other) seeds.insert(s);
  EXPECT_EQ(seeds.size(), 8u);  // 64-bit draws: a repeat means a shared or reset sequence
}

// A child forked after its parent drew seeds must not replay the parent's next ones (two
// processes backing off in step would collide again at every retry).
TEST(Backoff, AForkedChildDrawsItsOwnSeeds) {
  (void)jitter_seed();  // the parent's generator exists before the fork
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::uint64_t s[2] = {jitter_seed(), jitter_seed()};
    const bool ok = ::write(fds[1], s, sizeof s) == static_cast<ssize_t>(sizeof s);
    ::_exit(ok ? 0 : 1);
  }
  const std::uint64_t mine[2] = {jitter_seed(), jitter_seed()};
  std::uint64_t child[2] = {};
  EXPECT_EQ(::read(fds[0], child, sizeof child), static_cast<ssize_t>(sizeof child));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_NE(child[0], mine[0]);
  EXPECT_NE(child[1], mine[1]);
}

TEST(Backoff, SleepBeforeKeepsTheDeadline) {
  using clock = std::chrono::steady_clock;
  backoff b(policy(1s, 1s, 2.0, jitter::none));
  EXPECT_FALSE(sleep_before(b, clock::now() - 1ms));
  EXPECT_EQ(b.attempts(), 0);  // nothing drawn when the deadline has passed
  const auto t0 = clock::now();
  EXPECT_TRUE(sleep_before(b, t0 + 20ms));  // a 1 s delay, cut at the deadline
  const auto took = clock::now() - t0;
  EXPECT_GE(took, 15ms);
  EXPECT_LT(took, 500ms);
  EXPECT_FALSE(sleep_before(b, t0 + 20ms));
}

}  // namespace
}  // namespace dblock::detail
