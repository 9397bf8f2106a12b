// lib/core/migration_lease.hpp — the migration lock on a multi-primary cluster (Galera),
// where GET_LOCK holds on one node only: a lease row (dblock_migration_lease) that
// migrators on every node take through replicated, certified writes, renewed while the
// run lasts. Used by the migration runner (migrate.cpp). Internal.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/backend.hpp"

namespace dblock::detail {

class migration_lease {
 public:
  // Polls with backoff for up to `wait`; throws timeout_error when another migrator keeps it.
  // Renews every third of `ttl`: from a second connection when `b` can open one (a long DDL
  // statement on `b` does not stop the renewals), else between files (check()).
  migration_lease(backend& b, std::chrono::milliseconds wait, std::chrono::milliseconds ttl);
  ~migration_lease();  // releases, best effort
  migration_lease(const migration_lease&) = delete;
  migration_lease& operator=(const migration_lease&) = delete;

  // Throws lock_lost when the lease may have passed to another migrator (a renewal found it
  // taken, or none succeeded for a whole TTL), its message ending with `consequence`: the
  // run must stop before its next step.
  void check(const std::string& consequence);
  void release() noexcept;

 private:
  void renew_loop();
  // True: renewed; false: another owner holds it; empty: a conflict, no answer this time.
  [[nodiscard]] std::optional<bool> renew_on(backend& conn);

  backend& b_;
  std::string owner_;
  std::chrono::milliseconds ttl_;
  std::shared_ptr<backend> renew_conn_;  // empty: renewed on b_ between files
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool lost_ = false;
  bool released_ = false;
  std::chrono::steady_clock::time_point last_ok_;  // start of the last successful renewal
  std::thread renewer_;
};

}  // namespace dblock::detail
