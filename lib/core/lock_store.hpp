// lib/core/lock_store.hpp — the lease-lock operations on the lock table, one function
// per operation over a backend and the dialect's sql/<dialect>/lock_*.sql files. The
// only place where dialects differ for locks (MySQL reads the holder with lock_state;
// SQLite reads the holder only when asked). Internal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "dblock/lock.hpp"

namespace dblock::detail::lock_store {

struct acquire_result {
  bool granted = false;
  std::optional<lock_info> state;  // the row after the statement (the holder when not granted), if known
};

// Retries a statement chosen as a deadlock victim (it was rolled back whole) a few times.
// behind_line (PostgreSQL; the tries of a waiting acquire with session_options::fair before
// it has its place in line): lock_acquire_queued.sql, which does not grant a free name while
// a waiter heads its line.
// likely_free (PostgreSQL, not behind_line; see session_core::freed for when the session
// says so): lock_acquire_fresh.sql first, the grant without lock_acquire.sql's fallback
// (cheaper per grant); when it returns no row, lock_acquire.sql.
// ttl_ms is how long the server keeps the row: the lease plus delay_ms, the holder's lock
// delay (stored in the row for `dblock locks`).
acquire_result acquire(backend& b, const std::string& name, const std::string& owner, std::int64_t ttl_ms,
                       std::int64_t delay_ms, const std::string& holder, bool behind_line = false,
                       bool likely_free = false);
acquire_result acquire_once(backend& b, const std::string& name, const std::string& owner, std::int64_t ttl_ms,
                            std::int64_t delay_ms, const std::string& holder, bool behind_line = false,
                            bool likely_free = false);
std::optional<lock_info> holder(backend& b, const std::string& name);
// Read-only retry of a refused acquire (lock_probe.sql): the row when another owner holds
// `name` live, else nothing (free, expired or ours: run acquire). One round trip.
std::optional<lock_info> probe(backend& b, const std::string& name, const std::string& owner);
// What a release did.
enum class release_outcome { deleted, decremented, not_ours };
// Deletes the row (final) or takes one hold off, of grant `fence`. not_ours: the row is gone
// or another's - including a row of the same owner with another fence (a newer grant of the
// name to this session after this one was lost), which is left alone.
// no_flush: PostgreSQL's final release outside a transaction commits without waiting
// for its WAL flush (lock_release_async.sql); ignored elsewhere.
release_outcome release(backend& b, const std::string& name, const std::string& owner, std::int64_t fence,
                        bool final_hold, bool no_flush = false);
// Renews every live lock of owner; returns the names still ours. `expected` = the number
// of locks held locally (MySQL reads names only when fewer rows matched).
std::vector<std::string> renew(backend& b, const std::string& owner, std::int64_t ttl_ms, std::size_t expected,
                               const std::vector<std::string>& local_names);
// In the caller's transaction: share-locks the row if still ours. False when not.
bool verify(backend& b, const std::string& name, const std::string& owner, std::int64_t fence);
std::vector<lock_info> list(backend& b);

// Wait line (session_options::fair; PostgreSQL and MariaDB only). `line` is a connection
// used for nothing else. line_enter blocks until it heads the line of `name` (true) or
// `wait_ms` (>= 1) passed (false); line_leave gives the place up (errors propagate: the
// caller then drops the connection, which leaves the line too).
bool line_enter(backend& line, const std::string& name, std::int64_t wait_ms);
void line_leave(backend& line, const std::string& name);

}  // namespace dblock::detail::lock_store
