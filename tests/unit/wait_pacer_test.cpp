// tests/unit/wait_pacer_test.cpp — the waiting acquire's sleep policy (lib/core/wait_pacer.hpp)
// without a database: bounds, doubling, the reset on a hand-off, the cap near the observed
// pace of grants, fine polls of the first in line without release notices, and the
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

TEST(WaitPacer, BehindTheFirstItBacksOffWhileStuckAndStartsOverWhenItMovesUp) {
  auto t = clk::time_point{} + 1h;
  wait_pacer p(us(2000), us(250'000), t, 11);
  us longest{0};
  for (int i = 0; i < 12; ++i) longest = std::max(longest, p.behind(5, t));  // not moving: a long hold
  EXPECT_GT(longest, us(100'000));
  EXPECT_LE(longest, us(250'000));
  EXPECT_LE(p.behind(4, t), us(2000)) << "moved up: from min_backoff again";
  // Grants every 2 ms: about half the time of its hand-offs, however long it waited.
  std::int64_t fence = 1;
  for (int i = 0; i < 6; ++i) {
    p.refused(fence++, t);
    t += 2ms;
  }
  for (int i = 0; i < 10; ++i) EXPECT_LE(p.behind(3, t), us(3000));
}

}  // namespace
}  // namespace dblock::detail
