// lib/core/session_lock.cpp — session locks (dblock/session_lock.hpp) and the
// primitive operations the migration runner shares (session_lock_ops.hpp).
#include "core/backend.hpp"
#include "core/backoff.hpp"
#include "core/dialect.hpp"
#include "core/ops/session_lock.hpp"
#include "core/session_lock_ops.hpp"
#include "dblock/errors.hpp"
#include "dblock/lock.hpp"
#include "dblock/session_lock.hpp"

namespace dblock {

namespace detail {

bool session_try(backend& b, std::string_view name) { return session_locks_for(b.kind()).try_lock(b, name); }
bool session_release(backend& b, std::string_view name) { return session_locks_for(b.kind()).release(b, name); }
bool session_held(backend& b, std::string_view name) { return session_locks_for(b.kind()).held(b, name); }

bool session_wait(backend& b, std::string_view name, std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  // Full jitter, 5 ms doubling to 200 ms, never past the deadline.
  backoff bo({.initial = std::chrono::milliseconds(5), .max = std::chrono::milliseconds(200)});
  for (;;) {
    if (session_try(b, name)) return true;
    if (!sleep_before(bo, deadline)) return false;
  }
}

}  // namespace detail

namespace {
void check_name(std::string_view name) {
  if (name.empty()) throw invalid_argument("session lock name is empty");
  if (name.size() > 255)
    throw invalid_argument("session lock name is " + std::to_string(name.size()) + " bytes long (at most 255)");
}
// SQLite has no session locks; behind a transaction pooler a session advisory lock would
// stay on a server connection other clients share. Both use a lease lock instead.
// On a Galera cluster GET_LOCK holds on one node only: a lease row replicates.
bool lease_backed(database& db) {
  auto& b = *detail::backend_of(db);
  return !detail::traits_of(db.kind()).session_locks || b.pooled() || b.multi_primary();
}
}  // namespace

struct session_lock::impl {
  std::string name;
  std::shared_ptr<detail::backend> conn;  // the connection holding the server lock
  std::unique_ptr<session> fallback;      // lease-backed: the session and lease standing in
  std::unique_ptr<lease> held_lease;
  bool held = false;
};

std::optional<session_lock> session_lock::try_lock(database& db, std::string_view name,
                                                   const session_lock_options& opts) {
  check_name(name);
  auto l = std::make_unique<impl>();
  l->name = std::string(name);
  if (lease_backed(db)) {
    validate_lock_name("dblock:session:" + std::string(name));
    session_options so;
    so.ttl = opts.sqlite_ttl;
    l->fallback = std::make_unique<session>(db, so);
    auto le = l->fallback->try_acquire("dblock:session:" + std::string(name));
    if (!le) return std::nullopt;
    l->held_lease = std::make_unique<lease>(std::move(*le));
    l->held = true;
    return session_lock(std::move(l));
  }
  l->conn = opts.dedicated_connection && detail::backend_of(db)->can_reopen() ? detail::backend_of(db)->reopen() : detail::backend_of(db);
  if (!detail::session_try(*l->conn, name)) return std::nullopt;
  l->held = true;
  return session_lock(std::move(l));
}

session_lock session_lock::lock(database& db, std::string_view name, std::chrono::milliseconds wait,
                                const session_lock_options& opts) {
  check_name(name);
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + wait;
  auto l = std::make_unique<impl>();
  l->name = std::string(name);
  if (lease_backed(db)) {
    session_options so;
    so.ttl = opts.sqlite_ttl;
    l->fallback = std::make_unique<session>(db, so);
    l->held_lease = std::make_unique<lease>(l->fallback->acquire("dblock:session:" + std::string(name), wait));
    l->held = true;
    return session_lock(std::move(l));
  }
  l->conn = opts.dedicated_connection && detail::backend_of(db)->can_reopen() ? detail::backend_of(db)->reopen() : detail::backend_of(db);
  if (!detail::session_wait(*l->conn, name, std::max(std::chrono::milliseconds(0),
                                                      std::chrono::duration_cast<std::chrono::milliseconds>(
                                                          deadline - clock::now()))))
    throw timeout_error("session lock '" + std::string(name) + "' is held by another connection; not acquired within " +
                        std::to_string(wait.count()) + " ms");
  l->held = true;
  return session_lock(std::move(l));
}

session_lock::session_lock(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
session_lock::session_lock(session_lock&&) noexcept = default;

session_lock& session_lock::operator=(session_lock&& o) noexcept {
  if (this != &o) {
    try {
      unlock();
    } catch (...) {
    }
    impl_ = std::move(o.impl_);
  }
  return *this;
}

session_lock::~session_lock() {
  try {
    unlock();
  } catch (...) {
    // The server frees it when the connection ends.
  }
}

const std::string& session_lock::name() const noexcept {
  static const std::string none;
  return impl_ ? impl_->name : none;
}

bool session_lock::is_held() {
  if (!impl_ || !impl_->held) return false;
  if (impl_->held_lease) return impl_->held_lease->is_held();
  try {
    return detail::session_held(*impl_->conn, impl_->name);
  } catch (const connection_error&) {
    return false;
  }
}

void session_lock::unlock() {
  if (!impl_ || !impl_->held) return;
  impl_->held = false;
  if (impl_->held_lease) {
    auto l = std::move(impl_->held_lease);
    l->release();
    return;
  }
  bool was_held = false;
  try {
    was_held = detail::session_release(*impl_->conn, impl_->name);
  } catch (const connection_error&) {
    was_held = false;
  }
  if (!was_held)
    throw lock_lost("session lock '" + impl_->name + "' was no longer held by its connection (the connection was lost)");
}

}  // namespace dblock
