// lib/core/lock_family.hpp — what the lock family (multi-locks, lib/core/multi_lock.cpp;
// leader election, lib/core/election.cpp) uses of a session (lib/core/lock.cpp): its
// connection, owner token and statements, and a way to record a grant made elsewhere as one
// of its holds, so that the grant is renewed, watched and reported lost like any lease.
// Internal.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/backend.hpp"
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
// Crash detection's early takeover of a member that refused a set's try, held with `fence`
// (session_core::take_over_member): true when the set's next try would be refused by it
// again and is not sent (*holder then says whom to wait for); `released`: a release of the
// name was seen since that try.
[[nodiscard]] bool take_over_member(session_core& c, const std::string& name, std::int64_t fence, bool released,
                                    std::optional<lock_info>* holder);
// Releases of other processes reach this process (NOTIFY), and the call that subscribes.
[[nodiscard]] bool hears_releases(const session_core& c) noexcept;
void listen_for_releases(session_core& c);

}  // namespace dblock::detail
