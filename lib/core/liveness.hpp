// lib/core/liveness.hpp — crash detection: each lease session that can (see
// crash_fast_path_allowed) holds a liveness marker, a server lock bound to the process's
// background connection (lib/core/link.hpp) and freed by the server the moment that
// connection ends. A waiter that finds a holder's marker free, and still free a grace
// later, ends that holder's lease at once (lib/core/lock.cpp, lock_reclaim.sql) instead of
// waiting out its TTL. The holder side lives here: one `liveness` per link runs a heartbeat
// on the link's connection and says until when each hold may be trusted (the last
// confirmed heartbeat + `window`), so a holder whose marker connection ended is told its
// leases are lost before any waiter's grace can run out. docs/locks.md, "Crash detection".
// Internal.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "core/link.hpp"

namespace dblock::detail {

class liveness_ops;

// Whether the fast path may be used on this connection at all: the dialect has markers
// (not SQLite), the connection is not behind a transaction pooler (a marker would stay with
// the pooler's server connection), and `galera` is false (user locks are node-local on a
// Galera cluster). The one predicate both sides ask.
[[nodiscard]] bool crash_fast_path_allowed(const backend& b, bool galera = false) noexcept;

// A marker-backed owner token: 'm', one digit d (the holder's window is 50 ms x 2^d, so that
// a waiter knows its grace), 30 lowercase hex digits. Other owner tokens are 32 hex digits.
inline constexpr char marker_owner_prefix = 'm';

// The window code of a marker-backed owner token, or nothing for any other token.
[[nodiscard]] inline std::optional<int> marker_window_code(std::string_view owner) noexcept {
  if (owner.size() > 1 && owner[0] == marker_owner_prefix && owner[1] >= '0' && owner[1] <= '9') return owner[1] - '0';
  return std::nullopt;
}

class liveness final : public link::job {
 public:
  using clock = std::chrono::steady_clock;
  // A hold is trusted at most `window` after the send of the last heartbeat answered on the
  // connection that holds its marker (session_options::liveness_window, rounded up to
  // 50 ms x 2^code, code 0 to 9). The heartbeat runs every window / 4 (the smallest window
  // of the link's markers).
  [[nodiscard]] static int window_code(std::chrono::milliseconds w) noexcept;
  [[nodiscard]] static std::chrono::milliseconds window_of(int code) noexcept;
  // A waiter ends a holder's lease only after it saw the marker free this long before:
  // more than the holder's window (it has stopped trusting its holds by then), with room
  // for the two monotonic clocks' rates (5%, five times max_clock_drift's default) and 5 ms.
  [[nodiscard]] static std::chrono::milliseconds grace_for(std::chrono::milliseconds window) noexcept {
    return window + window / 20 + std::chrono::milliseconds(5);
  }
  // How soon a refused waiter looks again at a holder that keeps a marker.
  [[nodiscard]] static std::chrono::milliseconds look_again_for(std::chrono::milliseconds window) noexcept {
    return std::min(grace_for(window) / 4, std::chrono::milliseconds(25));
  }

  // One session's marker.
  struct marker {
    std::string owner;
    std::chrono::milliseconds window{50};
    std::uint64_t epoch = 0;  // the server connection it was taken on (hashed name); 0 = not held (guarded by liveness::mu_)
  };

  // The liveness of `l`'s connection, created with the first session that needs it.
  [[nodiscard]] static std::shared_ptr<liveness> of(const std::shared_ptr<link>& l);
  liveness(std::shared_ptr<link> l, const liveness_ops& ops);
  ~liveness() override;

  // Takes a marker for a new owner token made by `make_owner` (tries a few tokens when a key
  // is taken). Empty when the server cannot back one: the session then uses a plain token.
  // Throws what the connection throws.
  [[nodiscard]] std::shared_ptr<marker> adopt(const std::function<std::string()>& make_owner,
                                              std::chrono::milliseconds window);
  // Frees the marker (best effort) and stops keeping it.
  void forget(const std::shared_ptr<marker>& m) noexcept;
  // The epoch to record with a grant about to be sent (0: the marker is not held).
  [[nodiscard]] std::uint64_t epoch(const marker& m) const;
  // Until when a hold granted under `epoch` may be trusted: the clock's epoch (long past)
  // once its marker's connection ended or was replaced.
  [[nodiscard]] clock::time_point trusted_until(const marker& m, std::uint64_t epoch) const;

  clock::time_point renew(backend& conn) noexcept override;  // the heartbeat (link thread)

 private:
  void confirm(std::uint64_t conn, clock::time_point sent);  // caller holds mu_

  std::shared_ptr<link> link_;
  const liveness_ops& ops_;
  mutable std::mutex mu_;  // guards everything below and marker::epoch
  std::vector<std::shared_ptr<marker>> markers_;
  std::uint64_t confirmed_conn_ = 0;       // the server connection (hashed name) the last answered heartbeat ran on
  clock::time_point confirmed_sent_{};     // when that heartbeat was sent
  // The connections before it, each with its last confirmation, newest last (at most 64):
  // holds granted on one keep what was promised to them (that confirmation + the window),
  // never more, however many times the connection was replaced since.
  std::vector<std::pair<std::uint64_t, clock::time_point>> past_;
};

}  // namespace dblock::detail
