// dblock/session_lock.hpp — session locks: held by a database connection and released
// by the server when that connection ends, like a ZooKeeper ephemeral node.
//   PostgreSQL: pg_try_advisory_lock(key), key = first 8 bytes of SHA-256(name) as a
//               signed 64-bit integer (per database). Two names whose keys collide
//               (probability ~ n^2 / 2^65 for n names) contend as one lock: a collision
//               can cost waiting, never a double grant.
//   MySQL/MariaDB: GET_LOCK(name) with the name qualified by the current database;
//               a qualified name over 64 characters becomes its SHA-256 hex (same trade-off).
//   SQLite:     no connection-scoped locks exist: falls back to a lease lock named
//               "dblock:session:<name>" (renewed by a watchdog; freed by TTL after a crash).
//   PostgreSQL behind a transaction pooler (?pooler=transaction): the same lease lock
//               (a session advisory lock would stay on a server connection others share).
//   MariaDB Galera cluster (wsrep_on = ON): the same lease lock, since GET_LOCK holds on
//               one node only and a replicated row holds on all of them.
// The exact SQL is in sql/<dialect>/session_lock_*.sql. Used by the migration runner
// and the single-active reaper.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "dblock/database.hpp"

namespace dblock {

struct session_lock_options {
  // Hold the lock on a connection of its own, opened from the database's URL, so other
  // work on `db` cannot end it; an attached connection holds it itself. Default: true.
  bool dedicated_connection = true;
  // TTL of the lease lock that stands in for a session lock on SQLite, behind a
  // transaction pooler and on a Galera cluster. Default: 30 s.
  std::chrono::milliseconds sqlite_ttl{30'000};
};

class session_lock {
 public:
  // One try. Empty when another connection holds it.
  [[nodiscard]] static std::optional<session_lock> try_lock(database& db, std::string_view name,
                                                            const session_lock_options& opts = {});
  // Polls with backoff and jitter up to `wait`; throws timeout_error when it runs out.
  [[nodiscard]] static session_lock lock(database& db, std::string_view name, std::chrono::milliseconds wait,
                                         const session_lock_options& opts = {});

  session_lock(session_lock&&) noexcept;
  session_lock& operator=(session_lock&&) noexcept;
  session_lock(const session_lock&) = delete;
  session_lock& operator=(const session_lock&) = delete;
  ~session_lock();  // releases, best effort, never throws

  [[nodiscard]] const std::string& name() const noexcept;
  // Asks the server whether this connection still holds it (one round trip). False
  // after the connection was lost (a reconnect does not bring the lock back).
  [[nodiscard]] bool is_held();
  // Releases; throws lock_lost when the lock had already been lost with its connection.
  void unlock();

 private:
  struct impl;  // the connection holding the lock, or the lease standing in for it
  explicit session_lock(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;  // empty once moved from
};

}  // namespace dblock
