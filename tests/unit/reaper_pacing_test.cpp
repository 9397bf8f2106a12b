// tests/unit/reaper_pacing_test.cpp — the reaper's pacing arithmetic (lib/core/reaper_pacing.hpp)
// without a database: the rest after a batch keeps the duty cycle, grows with the batch's
// own duration, and stays within its bounds.
#include <gtest/gtest.h>

#include "core/reaper_pacing.hpp"

namespace dblock::detail {
namespace {

using namespace std::chrono_literals;
using us = std::chrono::microseconds;

TEST(ReaperPacing, DutyCycleOneMeansNoRest) {
  reap_pacing p;
  p.duty_cycle = 1.0;
  for (us took : {0us, 1us, 12'345us, us(10s)}) EXPECT_EQ(reap_pause(p, took), 0us);
}

TEST(ReaperPacing, RestKeepsTheDutyCycle) {
  // busy / (busy + rest) == duty
  for (double duty : {0.1, 0.25, 0.5, 0.75, 0.9}) {
    reap_pacing p;
    p.duty_cycle = duty;
    for (us took : {1'000us, 7'000us, 40'000us, us(3s)}) {
      const auto rest = reap_pause(p, took);
      const double share = static_cast<double>(took.count()) / static_cast<double>((took + rest).count());
      EXPECT_NEAR(share, duty, 0.001) << "duty " << duty << ", batch of " << took.count() << " us";
    }
  }
}

TEST(ReaperPacing, ASlowerBatchGetsALongerRest) {
  reap_pacing p;
  p.duty_cycle = 0.75;
  EXPECT_EQ(reap_pause(p, 3'000us), 1'000us);
  EXPECT_EQ(reap_pause(p, 30'000us), 10'000us);
  EXPECT_LT(reap_pause(p, 3'000us), reap_pause(p, 3'003us));
}

TEST(ReaperPacing, BoundsHoldForEveryRest) {
  reap_pacing p;
  p.duty_cycle = 0.5;
  p.min_pause = 2'000us;
  p.max_pause = 20'000us;
  EXPECT_EQ(reap_pause(p, 100us), 2'000us);
  EXPECT_EQ(reap_pause(p, 10'000us), 10'000us);
  EXPECT_EQ(reap_pause(p, 500'000us), 20'000us);
  EXPECT_EQ(reap_pause(p, us(-5)), 2'000us) << "a clock step back is no negative batch";
  p.duty_cycle = 1.0;
  EXPECT_EQ(reap_pause(p, 10'000us), 2'000us) << "the floor holds without a duty cycle";
  p.max_pause = 1'000us;  // below the floor: the floor wins
  p.duty_cycle = 0.1;
  EXPECT_EQ(reap_pause(p, 10'000us), 2'000us);
}

TEST(ReaperPacing, NoOverflowOnAHungStatement) {
  reap_pacing p;
  p.duty_cycle = 0.5;
  EXPECT_EQ(reap_pause(p, us(std::chrono::hours(24))), us(std::chrono::hours(24)));
}

}  // namespace
}  // namespace dblock::detail
