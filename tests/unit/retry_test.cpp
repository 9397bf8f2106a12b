// tests/unit/retry_test.cpp — retry_on_conflict and the full-jitter backoff bounds
// (dblock/retry.hpp), without a database.
#include <gtest/gtest.h>

#include <set>

#include "dblock/retry.hpp"

namespace dblock {
namespace {

using namespace std::chrono_literals;

TEST(Retry, BackoffCeilingDoublesUpToTheCap) {
  retry_policy p;
  p.initial_backoff = 10ms;
  p.max_backoff = 100ms;
  p.multiplier = 2.0;
  EXPECT_EQ(backoff_ceiling(p, 0), 0ms);
  EXPECT_EQ(backoff_ceiling(p, 1), 10ms);
  EXPECT_EQ(backoff_ceiling(p, 2), 20ms);
  EXPECT_EQ(backoff_ceiling(p, 3), 40ms);
  EXPECT_EQ(backoff_ceiling(p, 4), 80ms);
  EXPECT_EQ(backoff_ceiling(p, 5), 100ms);
  EXPECT_EQ(backoff_ceiling(p, 1'000'000), 100ms);  // no overflow
}

TEST(Retry, FullJitterStaysWithinZeroAndTheCeilingAndSpreads) {
  retry_policy p;
  p.initial_backoff = 8ms;
  p.max_backoff = 64ms;
  std::mt19937_64 rng(42);
  for (int retry = 1; retry <= 6; ++retry) {
    const auto cap = backoff_ceiling(p, retry);
    std::set<long long> seen;
    for (int i = 0; i < 2000; ++i) {
      auto d = backoff_delay(p, retry, rng);
      ASSERT_GE(d, 0ms);
      ASSERT_LE(d, cap);
      seen.insert(d.count());
    }
    EXPECT_GT(seen.size(), static_cast<std::size_t>(cap.count() / 2)) << "jitter does not spread at retry " << retry;
  }
  p.initial_backoff = 0ms;
  EXPECT_EQ(backoff_delay(p, 3, rng), 0ms);
}

TEST(Retry, RetriesConflictsAndReportsAttempts) {
  retry_policy p;
  p.initial_backoff = 0ms;
  int calls = 0;
  std::vector<int> reported;
  p.on_retry = [&](int attempt, const error& e, std::chrono::milliseconds) {
    reported.push_back(attempt);
    EXPECT_TRUE(e.retryable());
  };
  auto r = retry_on_conflict([&] {
    if (++calls < 3) throw deadlock("provoked", "40P01");
  }, p);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(reported, (std::vector<int>{1, 2}));
}

TEST(Retry, NeverRetriesCommitUnknownOrOtherErrors) {
  retry_policy p;
  p.initial_backoff = 0ms;
  int calls = 0;
  EXPECT_THROW(retry_on_conflict([&] { ++calls; throw commit_unknown("lost during COMMIT"); }, p), commit_unknown);
  EXPECT_EQ(calls, 1);
  calls = 0;
  EXPECT_THROW(retry_on_conflict([&] { ++calls; throw unique_violation("dup"); }, p), unique_violation);
  EXPECT_EQ(calls, 1);
  calls = 0;
  EXPECT_THROW(retry_on_conflict([&] { ++calls; throw lock_not_available("busy"); }, p), lock_not_available);
  EXPECT_EQ(calls, 1);
  p.retry_lock_not_available = true;
  p.max_attempts = 4;
  calls = 0;
  EXPECT_THROW(retry_on_conflict([&] { ++calls; throw lock_not_available("busy"); }, p), lock_not_available);
  EXPECT_EQ(calls, 4);
}

TEST(Retry, RejectsNonsensePolicies) {
  retry_policy p;
  p.max_attempts = 0;
  EXPECT_THROW(retry_on_conflict([] {}, p), invalid_argument);
  p = {};
  p.multiplier = 0.5;
  EXPECT_THROW(retry_on_conflict([] {}, p), invalid_argument);
  p = {};
  p.initial_backoff = -1ms;
  EXPECT_THROW(retry_on_conflict([] {}, p), invalid_argument);
}

}  // namespace
}  // namespace dblock
