// lib/core/ops/lease_table.hpp — the lease-lock statement families behind the dialect seam
// (see lib/core/dialect.hpp): the lock table (grant, renew, release, read) and the wait line
// (tickets in dblock_lock_waiters). lib/core/lock.cpp calls these; each dialect implements
// them in lib/dialects/<dialect>/lease_table.cpp over its sql/<dialect>/lock_*.sql files and
// returns typed rows. Internal.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "dblock/lock.hpp"

namespace dblock::detail {

// Line bounds: a free or expired name is granted only when no live ticket of its wait line
// is below the bound. A waiter's own try passes its ticket.
inline constexpr std::int64_t behind_every_waiter = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t ahead_of_every_waiter = 0;  // a re-entry: tickets start at 1
// A bound that is a waiter's own ticket: its try may find the lock handed to it.
[[nodiscard]] inline constexpr bool is_line_ticket(std::int64_t bound) noexcept {
  return bound != behind_every_waiter && bound != ahead_of_every_waiter;
}

struct grant_request {
  std::string name;
  std::string owner;
  std::int64_t row_ttl_ms = 0;  // the lease plus the lock delay: how long the server keeps the row
  std::int64_t delay_ms = 0;    // the holder's lock delay, stored in the row for `dblock locks`
  std::string holder;           // free text for humans
  std::int64_t line_bound = behind_every_waiter;
  // The session has reason to think the name is free (it released it last, or a probe found
  // no live holder): a dialect may send a cheaper statement first.
  bool likely_free = false;
};

struct grant_outcome {
  bool granted = false;
  // The row after the statement: ours when granted, else the live holder's when the dialect
  // could read it (see refusal_names_holder), else empty (free, but an earlier waiter is in
  // line, or a lost race).
  std::optional<lock_info> state;
  // Granted by the previous holder's release, which deleted the waiter's ticket with it.
  bool handed = false;
};

// handed: the final release made the row the grant of the head of the wait line
// (release(..., to_line)).
enum class release_outcome { deleted, decremented, not_ours, handed };

// The grant a final release handed on (release_outcome::handed): the head's owner token, its
// ticket and the new grant's fence. Set only when the release committed on its own (not inside
// the caller's transaction), so that the grant is durable when the releasing process passes it
// to a waiter of its own. unlock: the release left a server lock to free (end_hand_off) once
// that waiter has it; set whether or not the grant itself is known.
struct handed_grant {
  std::string owner;
  std::int64_t ticket = 0;
  std::int64_t fence = 0;
  bool unlock = false;
};

class lease_table_ops {
 public:
  virtual ~lease_table_ops() = default;

  // --- capabilities --------------------------------------------------------------
  // A refused try returns the live holder's row (else the caller asks holder()).
  [[nodiscard]] virtual bool refusal_names_holder() const noexcept = 0;
  // A waiter's granted try deleted its ticket too (else the caller calls
  // wait_line_ops::leave before the hold starts, so the ticket never blocks the next waiter).
  [[nodiscard]] virtual bool grant_consumes_ticket() const noexcept = 0;
  // The final release can skip waiting for its WAL flush (session_options::async_release).
  [[nodiscard]] virtual bool async_release() const noexcept = 0;

  // --- statements (one round trip each unless said) ----------------------------------
  // Grant, takeover of an expired row, or re-entry (holds + 1, same fence).
  [[nodiscard]] virtual grant_outcome acquire(backend& b, const grant_request& r) const = 0;
  // The row of `name` as it is now, whoever holds it.
  [[nodiscard]] virtual std::optional<lock_info> holder(backend& b, const std::string& name) const = 0;
  // Read-only: the row when another owner holds `name` live, else nothing (free, expired or
  // ours: send acquire).
  [[nodiscard]] virtual std::optional<lock_info> probe(backend& b, const std::string& name,
                                                       const std::string& owner) const = 0;
  // probe() for a try that reports no holder: only how long the other owner's hold has
  // left. A dialect whose statement runs in process overrides it with a narrower read
  // (there the columns and their conversion are most of the cost); else probe().
  [[nodiscard]] virtual std::optional<std::chrono::milliseconds> probe_expiry(backend& b, const std::string& name,
                                                                             const std::string& owner) const {
    auto r = probe(b, name, owner);
    if (!r) return std::nullopt;
    return r->expires_in;
  }
  // Deletes the row of grant `fence` (final) or takes one hold off. not_ours: the row is gone
  // or another grant's. no_flush: see async_release(). to_line (a final release that waits
  // for its flush): hand the name to the head of its wait line in the same commit when that
  // head waits for this lease lock - the row becomes the grant its ticket asked for, with a
  // new fence, and the ticket is deleted (handed) - else delete the row. *grant, when given,
  // receives a hand-off's grant (see handed_grant); left empty when not known.
  virtual release_outcome release(backend& b, const std::string& name, const std::string& owner, std::int64_t fence,
                                  bool final_hold, bool no_flush, bool to_line, handed_grant* grant = nullptr) const = 0;
  // After a release that set grant->unlock: frees the server lock the hand-off was made under
  // (MariaDB, MySQL 8.0), which the head of the line waits for instead of confirming the grant
  // with a write. Called after the releasing process passed the grant on to a waiter of its
  // own, if one took it, so that such a waiter never waits for this round trip. Never throws.
  virtual void end_hand_off(backend& /*b*/, const std::string& /*name*/) const noexcept {}
  // Renews every live lock of `owner` and, when `waiting`, its live tickets; returns the
  // names still ours. `local` = the names held locally (a dialect that counts rows returns
  // them when every row matched). One round trip, or two on a dialect that renews tickets
  // apart while the session waits.
  [[nodiscard]] virtual std::vector<std::string> renew(backend& b, const std::string& owner, std::int64_t ttl_ms,
                                                       const std::vector<std::string>& local, bool waiting) const = 0;
  // In the caller's transaction: share-locks the row if still ours with `fence`, unexpired.
  [[nodiscard]] virtual bool verify(backend& b, const std::string& name, const std::string& owner,
                                    std::int64_t fence) const = 0;
  [[nodiscard]] virtual std::vector<lock_info> list(backend& b) const = 0;
};

// Where a ticket stands in its line.
struct line_position {
  std::int64_t ahead = 0;  // live tickets before it: 0 = first in line
  std::int64_t fence = 0;  // the live grant of the name, 0 when none
};

// The grant a lease lock's waiter asks for, stored with its ticket: a release may make it
// (lease_table_ops::release, to_line) while the waiter is not looking.
struct line_grant {
  std::int64_t row_ttl_ms = 0;  // as grant_request
  std::string holder;
  std::int64_t delay_ms = 0;
};

// The wait line: a waiter's ticket, renewed with the session's leases (lease_table_ops::renew).
class wait_line_ops {
 public:
  virtual ~wait_line_ops() = default;
  // A new ticket for `owner` in the line of `name`, live for ttl_ms. `grant`: the lease
  // lock's grant a release may hand the ticket; nullptr for any other waiter (a read-write
  // lock, a semaphore), which is never handed anything.
  [[nodiscard]] virtual std::int64_t join(backend& b, const std::string& name, const std::string& owner,
                                          std::int64_t ttl_ms, const line_grant* grant) const = 0;
  // Gives the ticket up (granted, timed out or failed). False when it was gone already:
  // expired, or consumed by a release that handed its waiter the lock (see drop_handed).
  virtual bool leave(backend& b, std::int64_t ticket, const std::string& owner) const = 0;
  // A waiter that stopped waiting gives back the lease row a release handed `ticket`
  // meanwhile; true when there was one.
  virtual bool drop_handed(backend& b, const std::string& name, const std::string& owner,
                           std::int64_t ticket) const = 0;
  // Read-only: where `ticket` stands in the line of `name`.
  [[nodiscard]] virtual line_position position(backend& b, const std::string& name, std::int64_t ticket) const = 0;
};

// Each dialect's objects (lib/dialects/lease_registry.cpp).
[[nodiscard]] const lease_table_ops& lease_table_for(dialect d) noexcept;
[[nodiscard]] const wait_line_ops& wait_line_for(dialect d) noexcept;

}  // namespace dblock::detail
