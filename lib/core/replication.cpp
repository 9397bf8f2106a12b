// lib/core/replication.cpp — the replication check behind session starts and migrations
// (include/dblock/replication.hpp): runs the dialect's check, counts and reports a setup
// that can lose a committed grant, and the process-wide warning callback.
#include <mutex>

#include "core/internal.hpp"
#include "core/ops/replication.hpp"
#include "dblock/database.hpp"
#include "dblock/errors.hpp"
#include "dblock/metrics.hpp"

namespace dblock {

namespace {
std::mutex warn_mu;
std::function<void(const std::string&)>& warn_callback() {
  static std::function<void(const std::string&)> cb;
  return cb;
}
}  // namespace

void on_warning(std::function<void(const std::string& line)> cb) {
  std::lock_guard lock(warn_mu);
  warn_callback() = std::move(cb);
}

replication_report check_replication(database& db) {
  auto b = detail::backend_of(db);
  return detail::replication_for(b->kind()).check(*b);
}

namespace detail {

void check_replication_now(backend& b, replication_policy policy, const char* when);

void check_replication_once(backend& b, replication_policy policy, const char* when) {
  // refuse checks every time: an earlier warn-mode check must not let it through.
  if (policy == replication_policy::ignore) return;
  if (!b.first_replication_check() && policy != replication_policy::refuse) return;
  check_replication_now(b, policy, when);
}

void check_replication_now(backend& b, replication_policy policy, const char* when) {
  if (policy == replication_policy::ignore) return;
  replication_report rep;
  try {
    rep = replication_for(b.kind()).check(b);
  } catch (const error&) {
    // Warning mode must not make a session start fail on an unanswered check; the
    // session's own statements report an unreachable server soon enough.
    if (policy == replication_policy::refuse) throw;
    return;
  }
  if (!rep.can_lose_grants) return;
  count(counter::replication_unsafe);
  std::string line = "replication of " + b.describe() + " can lose a committed grant on failover (" + when + "): ";
  for (std::size_t i = 0; i < rep.reasons.size(); ++i) line += (i ? "; " : "") + rep.reasons[i];
  line += ". Fences stay increasing, but two holders can overlap after a failover (docs/operations.md, "
          "\"Deployment topologies\")";
  if (policy == replication_policy::refuse)
    throw unsafe_replication(line + "; refused (replication_policy::refuse)");
  std::function<void(const std::string&)> cb;
  {
    std::lock_guard lock(warn_mu);
    cb = warn_callback();
  }
  if (cb) cb("warning: " + line);
}

}  // namespace detail
}  // namespace dblock
