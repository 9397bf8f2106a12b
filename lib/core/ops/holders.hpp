// lib/core/ops/holders.hpp — the statement family of read-write locks and semaphores behind
// the dialect seam (see lib/core/dialect.hpp): holds in dblock_lock_holders (migration 0008),
// one row per read-write owner (slot 0) or per semaphore permit (slot 1..N). A grant runs in
// one short transaction on the session's connection: gate (serializes grants of the name),
// clear expired holds, read the live ones, decide (lib/core/holders.cpp), write; where the
// dialect has stored functions (migration 0010) the same grant is one statement. Each dialect
// implements it in lib/dialects/<dialect>/holders.cpp over sql/<dialect>/holders_*.sql; the
// renewal of these rows is part of lease_table_ops::renew. Internal.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "dblock/lock.hpp"

namespace dblock::detail {

// Where a hold of dblock_lock_holders sits in a session's table of holds (session_core::held),
// beside lease locks keyed by their name: a NUL (never in a lock name), the slot, a NUL, the
// name. Renewals return these keys for the holds still ours.
[[nodiscard]] inline std::string holder_key(std::string_view name, std::int64_t slot) {
  std::string k(1, '\0');
  k += std::to_string(slot);
  k += '\0';
  k += name;
  return k;
}
[[nodiscard]] inline bool is_holder_key(std::string_view key) noexcept { return !key.empty() && key[0] == '\0'; }

// A live hold, as holders_live.sql reads it.
struct holder_row {
  std::string owner;
  std::int64_t slot = 0;
  char kind = 'r';  // 'r' read-write lock, 's' semaphore
  int holds = 0;
  int write_holds = 0;
  int permits = 0;
  lock_info info;  // holder, fence, holds, expiry
};

// One new row (holders_insert.sql).
struct holder_grant {
  std::string name;
  std::string owner;
  std::int64_t slot = 0;
  char kind = 'r';
  int write_holds = 0;
  int permits = 0;
  std::int64_t fence = 0;
  std::int64_t row_ttl_ms = 0;
  std::string holder;
  std::int64_t delay_ms = 0;
};

// A grant in one statement (holders_acquire_rw.sql / holders_acquire_permits.sql, the
// functions of migration 0010): what the server decided.
struct one_statement_outcome {
  enum class kind {
    granted,          // a fresh hold (read-write), or the permits
    reentered,        // a re-entry (the hold's own fence) or an upgrade (a new fence)
    refused,          // a live hold in the way: blocker
    behind_line,      // an earlier waiter goes first
    not_rw,           // a read-write lock asked of a semaphore of `value` permits
    not_semaphore,    // permits asked of a read-write lock
    permits_differ,   // the semaphore has `value` permits
    upgrade_refused,  // `value` other readers hold the lock
  } what = kind::behind_line;
  std::int64_t value = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> granted;  // slot, fence (slot 0: read-write)
  std::optional<lock_info> blocker;
};

// One acquire in one statement; bounds and values as in lib/core/holders.cpp.
struct one_statement_request {
  std::string name;
  std::string owner;
  bool write = false;             // read-write: a write hold
  std::int64_t own_fence = 0;     // read-write: the fence of the session's live hold (0: none)
  int permits = 0;                // semaphore: its permit count
  int count = 0;                  // semaphore: permits wanted
  std::int64_t ticket = 0;        // the waiter's ticket, deleted with the grant (0: none)
  std::int64_t bound = 0;         // the wait-line bound (holders_line_ahead.sql)
  std::int64_t row_ttl_ms = 0;
  std::string holder;
  std::int64_t delay_ms = 0;
};

class holders_ops {
 public:
  virtual ~holders_ops() = default;
  // --- one statement (autocommit), where the dialect has migration 0010's functions -
  // True: try_rw / try_permits send the grant as one statement (below) instead of the
  // transaction of steps further down (which lib/core/multi_lock.cpp keeps using).
  [[nodiscard]] virtual bool one_statement_grants() const noexcept { return false; }
  [[nodiscard]] virtual one_statement_outcome acquire_rw(backend& b, const one_statement_request& r) const = 0;
  [[nodiscard]] virtual one_statement_outcome acquire_permits(backend& b, const one_statement_request& r) const = 0;
  // --- inside the grant's transaction ----------------------------------------------
  // Takes the name's grant gate and deletes its expired holds.
  virtual void gate(backend& b, const std::string& name) const = 0;
  [[nodiscard]] virtual std::vector<holder_row> live(backend& b, const std::string& name) const = 0;
  // Live wait-line tickets of `name` below `bound`.
  [[nodiscard]] virtual std::int64_t line_ahead(backend& b, const std::string& name, std::int64_t bound) const = 0;
  [[nodiscard]] virtual std::int64_t draw_fence(backend& b) const = 0;
  virtual void insert(backend& b, const holder_grant& g) const = 0;
  // One more hold of a live read-write row of `owner` (write: a write hold), with `fence`.
  [[nodiscard]] virtual bool reenter(backend& b, const std::string& name, const std::string& owner, bool write,
                                     std::int64_t fence, std::int64_t row_ttl_ms) const = 0;
  // --- autocommit (one round trip each) ------------------------------------------
  // Deletes the hold (final release); false when it was no longer ours.
  [[nodiscard]] virtual bool release(backend& b, const std::string& name, const std::string& owner, std::int64_t slot,
                                     std::int64_t fence) const = 0;
  // One of several holds of a read-write row; false when it was no longer ours.
  [[nodiscard]] virtual bool decrement(backend& b, const std::string& name, const std::string& owner,
                                       std::int64_t fence, bool write) const = 0;
  // In the caller's transaction: share-locks the hold if still ours with `fence`, unexpired.
  [[nodiscard]] virtual bool verify(backend& b, const std::string& name, const std::string& owner, std::int64_t slot,
                                    std::int64_t fence) const = 0;
  [[nodiscard]] virtual std::vector<holder_info> list(backend& b) const = 0;
};

[[nodiscard]] const holders_ops& holders_for(dialect d) noexcept;

}  // namespace dblock::detail
