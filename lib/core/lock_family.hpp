// lib/core/lock_family.hpp — what the lock family (multi-locks, lib/core/multi_lock.cpp;
// leader election, lib/core/election.cpp) uses of a session (lib/core/lock.cpp,
// lib/core/holders.cpp): its connection, owner token and statements, the read-write lock's
// decision taken inside an open transaction, and a way to record a grant made elsewhere as
// one of its holds, so that the grant is renewed, watched and reported lost like any lease.
// Internal.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/link.hpp"
#include "core/ops/holders.hpp"
#include "core/ops/lease_table.hpp"
#include "dblock/lock.hpp"

namespace dblock::detail {

[[nodiscard]] std::shared_ptr<session_core> core_of(session& s);
[[nodiscard]] backend& db_of(session_core& c);
[[nodiscard]] const lease_table_ops& table_of(session_core& c);
[[nodiscard]] const session_options& options_of(const session_core& c);
[[nodiscard]] const std::string& owner_of(const session_core& c);
// The request a try of `name` sends (a re-entry when the session holds it); empty when
// another thread of the session owns it (owner_scope::thread).
[[nodiscard]] std::optional<grant_request> request_for(session_core& c, const std::string& name);
// The session's liveness marker epoch (crash detection), read with t0 before a grant is sent.
[[nodiscard]] std::uint64_t marker_epoch_of(const session_core& c);
// Records a grant (made with db_of(c) held exclusively, sent at t0 under marker `epoch`) as
// a hold of the session.
[[nodiscard]] lease adopt_grant(const std::shared_ptr<session_core>& c, const std::string& name, std::int64_t fence,
                                std::chrono::steady_clock::time_point t0, std::uint64_t epoch);

// A read-write grant as decided by decide_rw; filled anew on each (retried) transaction.
struct rw_decision {
  bool granted = false;
  bool fresh = false;                // a new row (not a re-entry or an upgrade of the session's own)
  std::int64_t fence = 0;            // the granted hold's fence
  std::string misuse;                // thrown as invalid_argument (a semaphore's name, an upgrade beside readers)
  std::optional<lock_info> blocker;  // the soonest-ending live hold in the way, when one refused
  std::vector<holder_row> in_way;    // every such hold (crash detection's early takeover)
};
// The fence of the session's live read-write hold of `name`, if any: read under db_of(c)'s
// mutex before the grant transaction, handed to decide_rw (re-entry and upgrade).
[[nodiscard]] std::optional<std::int64_t> rw_held_fence(session_core& c, const std::string& name);
// Decides a read (write = false) or write hold of `name` inside the transaction open on
// db_of(c), and writes it when granted: gate, live holds, the rules of read-write locks
// (docs/locks.md), line_ahead below `bound` (behind_every_waiter for a try without a ticket;
// a ticket is left with the grant), the fence drawn under the gate, insert or re-entry. A
// refusal or misuse may still have deleted the session's own lost row of `name` (committing
// that is harmless; so is rolling it back).
[[nodiscard]] rw_decision decide_rw(session_core& c, const std::string& name, bool write, std::int64_t bound,
                                    std::optional<std::int64_t> mine);
// Records a granted decision (after its COMMIT, still under db_of(c)'s mutex; sent at t0 under
// marker `epoch`) as the session's hold of `name` (holder_key(name, 0)): a lease in mode read
// or write.
[[nodiscard]] lease adopt_rw(const std::shared_ptr<session_core>& c, const std::string& name, bool write,
                             const rw_decision& d, std::chrono::steady_clock::time_point t0, std::uint64_t epoch);
// Crash detection's early takeover of a member that refused a set's try, held with `fence`
// (session_core::take_over_member): true when the set's next try would be refused by it
// again and is not sent (*holder then says whom to wait for); `released`: a release of the
// name was seen since that try.
[[nodiscard]] bool take_over_member(session_core& c, const std::string& name, std::int64_t fence, bool released,
                                    std::optional<lock_info>* holder);
// The same for a read or write member (session_core::note_blockers / take_over_blockers over
// dblock_lock_holders): a set's try refused by such a member notes the holds in its way
// (inside the try); the waiting loop stamps that note with the release generation read
// before the try; before the next try take_over_rw_member reads those holds' markers, ends
// the ones whose marker stayed free for the grace, and returns true when the try would be
// refused again and is not sent (*holder then says whom to wait for).
void note_rw_member_refusal(session_core& c, const std::string& name, const std::vector<holder_row>& in_way,
                            std::optional<lock_info>* refused);
void stamp_rw_member_refusal(session_core& c, const std::string& name, std::uint64_t generation);
[[nodiscard]] bool take_over_rw_member(session_core& c, const std::string& name, std::uint64_t generation,
                                       std::optional<lock_info>* holder);
// Releases of other processes reach this process (NOTIFY), and the link a waiter wants
// them from (for a notice_want, lib/core/link.hpp; null when none).
[[nodiscard]] bool hears_releases(const session_core& c) noexcept;
[[nodiscard]] link* release_link(session_core& c) noexcept;

}  // namespace dblock::detail
