// lib/core/ops/liveness.hpp — the crash-detection statement family (sql/<dialect>/
// lock_marker_*.sql, lock_probe_marker.sql, lock_probe_marker_expiry.sql, lock_reclaim.sql, holders_probe_marker.sql,
// holders_reclaim.sql): a liveness marker per lease session held by the process's
// background connection, and a waiter's read of whether a holder's marker is still held
// (a lease lock's holder, or the holds of a read-write lock or semaphore).
// lib/core/liveness.cpp and lib/core/session_core.hpp call these;
// each dialect implements them in lib/dialects/<dialect>/liveness.cpp (SQLite: none).
// When the fast path applies is decided by crash_fast_path_allowed() (lib/core/liveness.hpp).
// Internal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "dblock/lock.hpp"

namespace dblock::detail {

enum class marker_take {
  taken,     // the marker is ours on this connection
  busy,      // another connection holds that key: pick another owner token
  unsuited,  // the server cannot back a marker (a Galera node): no fast path
};

// A live row of another owner, with its holder's marker state.
struct marked_holder {
  lock_info row;
  bool backed = false;  // the holder's session holds a marker (owner token 'm...')
  int window_code = 0;  // its window, 50 ms x 2^code (lib/core/liveness.hpp)
  bool gone = false;    // ... and that marker is free now: its connection has ended
};

// A live hold of dblock_lock_holders (a read-write lock's owner row, or a semaphore permit)
// of another owner, with its owner's marker state.
struct marked_hold {
  std::string owner;
  std::int64_t slot = 0;
  int write_holds = 0;
  lock_info row;  // holder, fence, holds, expiry
  bool backed = false;
  int window_code = 0;
  bool gone = false;
};

class liveness_ops {
 public:
  virtual ~liveness_ops() = default;
  // False: the dialect has no connection-bound marker (SQLite); nothing below is called.
  [[nodiscard]] virtual bool supported() const noexcept = 0;
  // One round trip each. take and ping also name the server connection they ran on
  // (`*server_connection`; empty: not a server a marker may live on, a standby): markers
  // taken under one name are held exactly while pings answer with that name.
  [[nodiscard]] virtual marker_take take(backend& b, const std::string& owner, std::string* server_connection) const = 0;
  virtual void drop(backend& b, const std::string& owner) const = 0;
  [[nodiscard]] virtual std::string ping(backend& b) const = 0;
  // lease_table_ops::probe with the holder's marker state.
  [[nodiscard]] virtual std::optional<marked_holder> probe(backend& b, const std::string& name,
                                                           const std::string& owner) const = 0;
  // probe() for a try that reports no holder: the row carries only the fence and the time
  // left (no holder text, hold count or expiry text), with the same marker state.
  [[nodiscard]] virtual std::optional<marked_holder> probe_expiry(backend& b, const std::string& name,
                                                                  const std::string& owner) const {
    return probe(b, name, owner);
  }
  // Ends grant `fence` of `name` at once if its holder's marker is free now; true when it did.
  [[nodiscard]] virtual bool reclaim(backend& b, const std::string& name, const std::string& owner,
                                     std::int64_t fence) const = 0;
  // Every live hold of read-write lock or semaphore `name` of owners other than `owner`, with
  // their markers' state (read-only, one round trip).
  [[nodiscard]] virtual std::vector<marked_hold> probe_holds(backend& b, const std::string& name,
                                                             const std::string& owner) const = 0;
  // Ends hold (name, hold_owner, slot, fence) at once if its owner's marker is free now; true
  // when it did. The caller holds the name's grant gate (holders_ops::gate) in a transaction.
  [[nodiscard]] virtual bool reclaim_hold(backend& b, const std::string& name, const std::string& hold_owner,
                                          std::int64_t slot, std::int64_t fence) const = 0;
};

[[nodiscard]] const liveness_ops& liveness_for(dialect d) noexcept;

}  // namespace dblock::detail
