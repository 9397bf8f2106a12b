// tests/unit/wait_pacer_test.cpp — the waiting acquire's sleep policy (lib/core/wait_pacer.hpp)
// without a database: bounds, doubling, the reset on a hand-off, the cap near the observed
// pace of grants, reads of a waiter far back in line, fine polls of the first in line without release notices, and the
// holder's expiry as a ceiling.
#include <gtest/gtest.h>

#include "core/wait_pacer.hpp"

namespace dblock::detail {
namespace {

using namespace std::chrono_literals;
using us = std::chrono::microseconds;
using clk = wait_pacer::clock;

TEST(WaitPacer, SleepsStayWithinEqualJitterOfADoublingCap) {
  const auto t = clk::time_point{} + 1h;
  wait_pacer p(us(2000), us(250'000), t, 42);
  us cap = us(2000);
  for (int i = 0; i < 12; ++i) {
    const auto s = p.next(std::nullopt, t);
    EXPECT_GE(s, cap / 2) << "try " << i;
    EXPECT_LE(s, cap) << "try " << i;
    cap = std::min(cap * 2, us(250'000));
  }
  for (int i = 0; i < 100; ++i) EXPECT_LE(p.next(std::nullopt, t), us(250'000));
}

TEST(WaitPacer, AHandOffStartsTheBackoffOver) {
  auto t = clk::time_point{} + 1h;
  wait_pacer p(us(1000), us(1'000'000), t, 7);
  p.refused(5, t);
  for (int i = 0; i < 8; ++i) (void)p.next(std::nullopt, t);  // cap now 256 ms
  EXPECT_GT(p.next(std::nullopt, t), us(100'000));
  t += 3ms;
  p.refused(6, t);  // another grant: changing hands
  EXPECT_LE(p.next(std::nullopt, t), us(6000));  // near the 3 ms pace, not the old cap
}

TEST(WaitPacer, KeepsNearThePaceOfGrantsWhileItHolds) {
  auto t = clk::time_point{} + 1h;
  wait_pacer p(us(500), us(250'000), t, 9);
  std::int64_t fence = 1;
  for (int i = 0; i < 10; ++i) {
    p.refused(fence++, t);
    t += 2ms;
  }
  EXPECT_NEAR(static_cast<double>(p.interval().count()), 2000.0, 200.0);
  for (int i = 0; i < 20; ++i) EXPECT_LE(p.next(std::nullopt, t), us(4000));  // 2 x interval, however many tries
  // A hold far longer than the pace: the doubling takes over again.
  t += 100ms;
  us longest{0};
  for (int i = 0; i < 12; ++i) longest = std::max(longest, p.next(std::nullopt, t));
  EXPECT_GT(longest, us(50'000));
}

// Without release notices the first in line polls at an eighth of the observed pace (at
// least 250 us, at most min) near the expected end of a hold, and the pace learnt while
// behind in line survives becoming first.
TEST(WaitPacer, PollsFinelyForAReleaseWhenNoNoticeWakesIt) {
  auto t = clk::time_point{} + 1h;
  wait_pacer quiet(us(2000), us(250'000), t, 11, /*notified=*/false);
  wait_pacer woken(us(2000), us(250'000), t, 11, /*notified=*/true);
  std::int64_t fence = 1;
  for (int i = 0; i < 10; ++i) {
    quiet.refused(fence, t);
    woken.refused(fence, t);
    ++fence;
    t += 4ms;
  }
  quiet.first_in_line();
  woken.first_in_line();
  EXPECT_NEAR(static_cast<double>(quiet.interval().count()), 4000.0, 400.0) << "pace kept";
  quiet.refused(fence, t);  // the hold that just began
  woken.refused(fence, t);
  us longest_quiet{0}, longest_woken{0};
  for (int i = 0; i < 20; ++i) {
    longest_quiet = std::max(longest_quiet, quiet.next(std::nullopt, t + 1ms));
    longest_woken = std::max(longest_woken, woken.next(std::nullopt, t + 1ms));
  }
  EXPECT_LE(longest_quiet, us(500)) << "an eighth of the 4 ms pace";
  EXPECT_GT(longest_woken, us(1000)) << "a release notice wakes it: no fine polls";
  // A hold far past the pace: the doubling goes on from twice the pace (8 ms), not from
  // where twenty fine polls would have taken it.
  EXPECT_LE(quiet.next(std::nullopt, t + 50ms), us(8000));
  us later{0};
  for (int i = 0; i < 12; ++i) later = std::max(later, quiet.next(std::nullopt, t + 50ms));
  EXPECT_GT(later, us(2000));
}

TEST(WaitPacer, NeverSleepsPastTheHoldersExpiry) {
  const auto t = clk::time_point{} + 1h;
  wait_pacer p(us(100'000), us(100'000), t, 3);
  EXPECT_LE(p.next(3ms, t), us(4000));
  EXPECT_GE(p.next(-5ms, t), us(50'000));  // already expired by the server's clock: no ceiling
}

TEST(WaitPacer, ResetForgetsThePace) {
  auto t = clk::time_point{} + 1h;
  wait_pacer p(us(1000), us(100'000), t, 1);
  p.refused(1, t);
  t += 1ms;
  p.refused(2, t);
  EXPECT_GT(p.interval().count(), 0);
  p.reset(t);
  EXPECT_EQ(p.interval().count(), 0);
  EXPECT_LE(p.next(std::nullopt, t), us(1000));
}

// While the line stands still (a long hold) a waiter sleeps at most a quarter of the time
// it has stood still, up to max_backoff.
TEST(WaitPacer, BehindTheFirstItSleepsLongerWhileTheLineStandsStill) {
  auto t = clk::time_point{} + 1h;
  wait_pacer p(us(2000), us(250'000), t, 11);
  EXPECT_LE(p.behind(5, t), us(2000));
  EXPECT_LE(p.behind(5, t + 40ms), us(10'000));
  EXPECT_GE(p.behind(5, t + 40ms), us(5000));
  EXPECT_LE(p.behind(5, t + 10s), us(250'000));
  EXPECT_GE(p.behind(5, t + 10s), us(125'000));
  // Moving again: a slow sample (1 grant in 10 s), then 3 grants in 8 ms, believed at once.
  (void)p.behind(4, t + 10s);
  EXPECT_LE(p.behind(1, t + 10s + 8ms), us(2000)) << "next in line: every min_backoff";
}

// A waiter far back reads its place about a quarter of the way to its expected turn: a
// few dozen reads per wait, not one every min_backoff, however fast the line moves.
TEST(WaitPacer, FarBackItLooksAgainHalfwayToItsTurn) {
  auto t = clk::time_point{} + 1h;
  wait_pacer p(us(2000), us(250'000), t, 5);
  std::int64_t ahead = 300;
  (void)p.behind(ahead, t);
  int reads = 0;
  while (ahead > 0) {
    const auto s = p.behind(ahead, t);
    ++reads;
    if (reads > 2) {  // the pace is known: 3 ms per grant
      // The simulated pace is 3 ms give or take the rounding of whole grants.
      EXPECT_LE(s, std::max(us(2000), us(3000) * (ahead - 1) * 13 / 40) + us(300)) << "ahead " << ahead;
      EXPECT_GE(s, std::min(us(10'000'000), us(3000) * (ahead - 1) / 16)) << "ahead " << ahead;
    }
    const auto grants = std::max<std::int64_t>(1, s / us(3000));  // one grant every 3 ms
    t += s;
    ahead = std::max<std::int64_t>(0, ahead - grants);
  }
  EXPECT_LE(reads, 40) << "a 300-place wait took " << reads << " reads";
  // Near the front: about half a hand-off, at least min_backoff.
  EXPECT_LE(p.behind(1, t), us(2000));
}

}  // namespace
}  // namespace dblock::detail
