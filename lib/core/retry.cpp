// lib/core/retry.cpp — retry_transaction / retry_on_conflict and the full-jitter
// backoff arithmetic (dblock/retry.hpp).
#include <cmath>
#include <optional>
#include <thread>

#include "core/backoff.hpp"
#include "dblock/errors.hpp"
#include "dblock/retry.hpp"

namespace dblock {

namespace {

void check_policy(const retry_policy& p) {
  if (p.max_attempts < 1) throw invalid_argument("retry_policy: max_attempts must be >= 1");
  if (p.initial_backoff.count() < 0 || p.max_backoff.count() < 0)
    throw invalid_argument("retry_policy: backoffs must not be negative");
  if (!(p.multiplier >= 1.0)) throw invalid_argument("retry_policy: multiplier must be >= 1");
}

template <typename Run>
retry_result retry_loop(const retry_policy& policy, Run run) {
  check_policy(policy);
  std::optional<detail::backoff> bo;  // made on the first retry only
  retry_result res;
  for (int attempt = 1;; ++attempt) {
    res.attempts = attempt;
    auto backoff = [&](const error& e) {
      if (attempt >= policy.max_attempts) return false;
      if (!bo) bo.emplace(detail::retry_backoff(policy));
      // Full jitter in [0, backoff_ceiling(policy, attempt)] ms.
      const auto sleep = std::chrono::duration_cast<std::chrono::milliseconds>(bo->next());
      if (policy.on_retry) policy.on_retry(attempt, e, sleep);
      if (sleep > std::chrono::milliseconds::zero()) std::this_thread::sleep_for(sleep);
      res.slept += sleep;
      return true;
    };
    try {
      run();
      return res;
    } catch (const transaction_conflict& e) {
      if (!backoff(e)) throw;
    } catch (const lock_not_available& e) {
      if (!policy.retry_lock_not_available || !backoff(e)) throw;
    }
    // commit_unknown and every other error propagate untouched: never retried.
  }
}

}  // namespace

detail::backoff detail::retry_backoff(const retry_policy& p) {
  return backoff({.initial = p.initial_backoff, .max = p.max_backoff, .multiplier = p.multiplier});
}

std::chrono::milliseconds backoff_ceiling(const retry_policy& p, int retry) noexcept {
  if (retry < 1 || p.initial_backoff.count() <= 0 || p.max_backoff.count() <= 0) return std::chrono::milliseconds::zero();
  const double cap = static_cast<double>(p.max_backoff.count());
  const double mult = p.multiplier >= 1.0 ? p.multiplier : 1.0;
  // initial * mult^(retry-1), computed in floating point and clamped before it can overflow.
  const double v = static_cast<double>(p.initial_backoff.count()) * std::pow(mult, static_cast<double>(retry - 1));
  if (!(v < cap)) return p.max_backoff;
  return std::chrono::milliseconds(static_cast<std::int64_t>(v));
}

std::chrono::milliseconds backoff_delay(const retry_policy& p, int retry, std::mt19937_64& rng) {
  const auto ceiling = backoff_ceiling(p, retry).count();
  if (ceiling <= 0) return std::chrono::milliseconds::zero();
  return std::chrono::milliseconds(std::uniform_int_distribution<std::int64_t>(0, ceiling)(rng));
}

retry_result retry_transaction(database& db, const std::function<void(transaction_ref)>& fn, const retry_policy& policy) {
  if (!fn) throw invalid_argument("retry_transaction: no function");
  return retry_loop(policy, [&] { transact(db, fn); });
}

retry_result retry_on_conflict(const std::function<void()>& fn, const retry_policy& policy) {
  if (!fn) throw invalid_argument("retry_on_conflict: no function");
  return retry_loop(policy, fn);
}

}  // namespace dblock
