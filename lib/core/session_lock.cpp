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
bool lease_backed(database& db) { return !detail::traits_of(db.kind()).session_locks || db.backend()->pooled(); }
}  // namespace

std::optional<session_lock> session_lock::try_lock(database& db, std::string_view name,
                                                   const session_lock_options& opts) {
  check_name(name);
  session_lock l;
  l.name_ = std::string(name);
  if (lease_backed(db)) {
    validate_lock_name("dblock:session:" + std::string(name));
    session_options so;
    so.ttl = opts.sqlite_ttl;
    l.fallback_ = std::make_unique<session>(db, so);
    auto le = l.fallback_->try_acquire("dblock:session:" + std::string(name));
    if (!le) return std::nullopt;
    l.lease_ = std::make_unique<lease>(std::move(*le));
    l.held_ = true;
    return l;
  }
  l.conn_ = opts.dedicated_connection && db.backend()->can_reopen() ? db.backend()->reopen() : db.backend();
  if (!detail::session_try(*l.conn_, name)) return std::nullopt;
  l.held_ = true;
  return l;
}

session_lock session_lock::lock(database& db, std::string_view name, std::chrono::milliseconds wait,
                                const session_lock_options& opts) {
  check_name(name);
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + wait;
  if (lease_backed(db)) {
    session_lock l;
    l.name_ = std::string(name);
    session_options so;
    so.ttl = opts.sqlite_ttl;
    l.fallback_ = std::make_unique<session>(db, so);
    l.lease_ = std::make_unique<lease>(l.fallback_->acquire("dblock:session:" + std::string(name), wait));
    l.held_ = true;
    return l;
  }
  session_lock l;
  l.name_ = std::string(name);
  l.conn_ = opts.dedicated_connection && db.backend()->can_reopen() ? db.backend()->reopen() : db.backend();
  if (!detail::session_wait(*l.conn_, name, std::max(std::chrono::milliseconds(0),
                                                      std::chrono::duration_cast<std::chrono::milliseconds>(
                                                          deadline - clock::now()))))
    throw timeout_error("session lock '" + std::string(name) + "' is held by another connection; not acquired within " +
                        std::to_string(wait.count()) + " ms");
  l.held_ = true;
  return l;
}

session_lock::session_lock(session_lock&& o) noexcept
    : conn_(std::move(o.conn_)),
      name_(std::move(o.name_)),
      fallback_(std::move(o.fallback_)),
      lease_(std::move(o.lease_)),
      held_(o.held_) {
  o.held_ = false;  // the moved-from object must not unlock in its destructor
}

session_lock& session_lock::operator=(session_lock&& o) noexcept {
  if (this != &o) {
    try {
      if (held_) unlock();
    } catch (...) {
    }
    conn_ = std::move(o.conn_);
    name_ = std::move(o.name_);
    fallback_ = std::move(o.fallback_);
    lease_ = std::move(o.lease_);
    held_ = o.held_;
    o.held_ = false;
  }
  return *this;
}

session_lock::~session_lock() {
  try {
    if (held_) unlock();
  } catch (...) {
    // The server frees it when the connection ends.
  }
}

bool session_lock::is_held() {
  if (!held_) return false;
  if (lease_) return lease_->is_held();
  try {
    return detail::session_held(*conn_, name_);
  } catch (const connection_error&) {
    return false;
  }
}

void session_lock::unlock() {
  if (!held_) return;
  held_ = false;
  if (lease_) {
    auto l = std::move(lease_);
    l->release();
    return;
  }
  bool was_held = false;
  try {
    was_held = detail::session_release(*conn_, name_);
  } catch (const connection_error&) {
    was_held = false;
  }
  if (!was_held)
    throw lock_lost("session lock '" + name_ + "' was no longer held by its connection (the connection was lost)");
}

}  // namespace dblock
