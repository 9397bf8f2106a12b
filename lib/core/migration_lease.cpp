// lib/core/migration_lease.cpp — the migration lock as a replicated lease row on Galera
// (migration_lease.hpp). The SQL is sql/<dialect>/migration_lease_*.sql.
#include "core/migration_lease.hpp"

#include <optional>

#include "core/backoff.hpp"
#include "core/crypto.hpp"
#include "core/ops/migration.hpp"
#include "dblock/errors.hpp"

namespace dblock::detail {

namespace {
using clock = std::chrono::steady_clock;

// One try: true when `owner` holds it now, false when another owner does, empty on a
// certification conflict (two nodes writing the row at once) or a deadlock: no answer yet.
std::optional<bool> try_take(backend& b, std::string_view owner, std::chrono::milliseconds ttl) {
  try {
    return migrations_for(b.kind()).take_lease(b, owner, ttl);
  } catch (const error& e) {
    if (e.kind() == error_kind::deadlock || e.kind() == error_kind::serialization ||
        e.kind() == error_kind::lock_not_available)
      return std::nullopt;
    throw;
  }
}
}  // namespace

migration_lease::migration_lease(backend& b, std::chrono::milliseconds wait, std::chrono::milliseconds ttl)
    : b_(b), owner_(random_hex(16)), ttl_(ttl) {
  if (ttl < std::chrono::seconds(3))
    throw invalid_argument("migrate_options::cluster_lock_ttl must be at least 3000 ms, got " +
                           std::to_string(ttl.count()) + " ms");
  const auto& ops = migrations_for(b.kind());
  ops.prepare_lease(b);
  const auto deadline = clock::now() + wait;
  backoff pause({.initial = std::chrono::milliseconds(20), .max = std::chrono::milliseconds(1000)});
  for (;;) {
    const auto started = clock::now();
    if (try_take(b, owner_, ttl).value_or(false)) {
      last_ok_ = started;
      break;
    }
    if (!sleep_before(pause, deadline))
      throw timeout_error("another process has held the migration lock (dblock_migration_lease) for more than " +
                          std::to_string(wait.count()) + " ms in " + b.describe());
  }
  if (b.can_reopen()) {
    try {
      renew_conn_ = b.reopen();
    } catch (...) {
      renew_conn_.reset();  // renewed between files instead
    }
  }
  if (renew_conn_) renewer_ = std::thread([this] { renew_loop(); });
}

migration_lease::~migration_lease() { release(); }

std::optional<bool> migration_lease::renew_on(backend& conn) {
  const auto started = clock::now();
  const auto held = try_take(conn, owner_, ttl_);
  if (held.value_or(false)) {
    std::lock_guard lock(mu_);
    last_ok_ = started;
  }
  return held;
}

void migration_lease::renew_loop() {
  std::unique_lock lock(mu_);
  while (!stop_ && !lost_) {
    cv_.wait_for(lock, ttl_ / 3, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    bool ok = false;
    try {
      const auto held = renew_on(*renew_conn_);
      if (held == false) {  // another migrator took it after it expired
        lock.lock();
        lost_ = true;
        break;
      }
      ok = held.has_value();
    } catch (...) {
      // Unreachable for now: keep trying every second until a whole TTL has passed.
    }
    lock.lock();
    if (!ok && clock::now() - last_ok_ >= ttl_) lost_ = true;
    if (!ok && !lost_) cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; });
  }
}

void migration_lease::check(const std::string& consequence) {
  bool lost;
  bool due;
  {
    std::lock_guard lock(mu_);
    lost = lost_ || clock::now() - last_ok_ >= ttl_;
    due = !renew_conn_ && clock::now() - last_ok_ >= ttl_ / 3;
  }
  if (!lost && due) lost = renew_on(b_) == false;
  if (lost)
    throw lock_lost("the migration lock (lease row dblock_migration_lease) was not kept for its " +
                    std::to_string(ttl_.count()) + " ms TTL in " + b_.describe() + "; another migrator may hold it now: " + consequence);
}

void migration_lease::release() noexcept {
  {
    std::lock_guard lock(mu_);
    if (released_) return;
    released_ = true;
    stop_ = true;
  }
  cv_.notify_all();
  if (renewer_.joinable()) renewer_.join();
  try {
    migrations_for(b_.kind()).release_lease(b_, owner_);
  } catch (...) {
    // It expires after its TTL.
  }
}

}  // namespace dblock::detail
