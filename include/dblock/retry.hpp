// dblock/retry.hpp — re-running a whole transaction when the database chose it as a
// deadlock victim or refused it with a serialization failure (dblock::transaction_conflict):
// exponential backoff with full jitter, a maximum number of attempts, the attempt count
// reported. A commit whose outcome is unknown (dblock::commit_unknown) is never retried,
// nor is any other error. The backoff arithmetic is exposed for callers' own loops.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>

#include "dblock/database.hpp"
#include "dblock/errors.hpp"
#include "dblock/transaction.hpp"

namespace dblock {

struct retry_policy {
  // Attempts in all, the first included (>= 1). Default: 5.
  int max_attempts = 5;
  // Backoff ceilings: the first, its growth per attempt and the largest; each sleep is
  // uniform in [0, ceiling] ("full jitter"). Default: 10 ms, 2, 1 s.
  std::chrono::milliseconds initial_backoff{10};
  std::chrono::milliseconds max_backoff{1000};
  double multiplier = 2.0;
  // Also retry lock_not_available (lock_timeout, innodb_lock_wait_timeout, SQLite busy).
  // Default: false.
  bool retry_lock_not_available = false;
  // Called before each backoff sleep with the attempt that failed (1-based), its error
  // and the sleep chosen. Optional; must not throw.
  std::function<void(int attempt, const error& e, std::chrono::milliseconds sleep)> on_retry;
};

struct retry_result {
  int attempts = 0;                        // attempts made, the successful one included
  std::chrono::milliseconds slept{0};      // total backoff
};

// Runs fn inside dblock::transact(db, fn) (BEGIN ... COMMIT on db's connection, BEGIN
// IMMEDIATE on SQLite); when it throws transaction_conflict (deadlock, serialization
// failure) the transaction has been rolled back: sleeps and runs fn again from the start,
// up to policy.max_attempts. fn may run several times: reset anything it accumulates at
// its top. After the last attempt the last error is rethrown. Throws invalid_argument
// for a policy with max_attempts < 1, a negative backoff or multiplier < 1.
retry_result retry_transaction(database& db, const std::function<void(transaction_ref)>& fn,
                               const retry_policy& policy = {});

// The same loop around any fn that runs its own transaction (for instance on the
// caller's pqxx connection with dblock::within): retries when fn throws
// transaction_conflict (or lock_not_available when the policy says so). Errors other
// than dblock::error subclasses (a client library's own exceptions) are not retried.
retry_result retry_on_conflict(const std::function<void()>& fn, const retry_policy& policy = {});

// Ceiling of the backoff before retry number `retry` (1 = before the second attempt):
// min(max_backoff, initial_backoff * multiplier^(retry-1)); zero for retry < 1.
[[nodiscard]] std::chrono::milliseconds backoff_ceiling(const retry_policy& policy, int retry) noexcept;
// A full-jitter sleep: uniform in [0, backoff_ceiling(policy, retry)].
[[nodiscard]] std::chrono::milliseconds backoff_delay(const retry_policy& policy, int retry, std::mt19937_64& rng);

}  // namespace dblock
