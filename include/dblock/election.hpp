// dblock/election.hpp — leader election (etcd's concurrency.Election, Curator's
// LeaderSelector) on the lease lock: the leader of election NAME is the holder of lease
// lock NAME, and its value (an address, an id) is stored with the fence of that grant
// (table dblock_elections). Leadership is a lease of the session: renewed by the session's
// one renewal statement, waiting in the name's first-come wait line, reported lost through
// session_options::on_lost, and fenced: the leader's fence is the lease's, so a deposed
// leader's late write is refused by a fenced write or verify_in. The SQL and the failure
// table are in docs/locks.md, "Leader election".
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "dblock/lock.hpp"

namespace dblock {

// The current leader of an election, as the server sees it.
struct leader_info {
  std::string name;
  std::string value;       // what the leader campaigned with
  std::int64_t fence = 0;  // the fence of its lease: larger for every later leader
  std::string holder;      // session_options::holder of the leader's session
  // Until the leader's lease ends unless renewed, by the server's clock.
  std::chrono::milliseconds expires_in{0};
};

// Being the leader. RAII: the destructor resigns (best effort, never throws). Move-only.
class leadership {
 public:
  leadership(leadership&&) noexcept;
  leadership& operator=(leadership&&) noexcept;
  leadership(const leadership&) = delete;
  leadership& operator=(const leadership&) = delete;
  ~leadership();

  [[nodiscard]] const std::string& name() const noexcept { return lease_.name(); }
  [[nodiscard]] const std::string& value() const noexcept { return value_; }
  // The lease's fence: pass it along with the leader's writes (fenced writes) so that a
  // deposed leader's late write is refused.
  [[nodiscard]] std::int64_t fence() const noexcept { return lease_.fence(); }
  // lease::is_held: false once resigned, lost, or past the local safety deadline.
  [[nodiscard]] bool is_held() const noexcept { return lease_.is_held(); }
  [[nodiscard]] std::chrono::milliseconds remaining() const noexcept { return lease_.remaining(); }
  [[nodiscard]] std::chrono::steady_clock::time_point trusted_until() const noexcept { return lease_.trusted_until(); }
  [[nodiscard]] std::string lost_reason() const { return lease_.lost_reason(); }
  // The lease underneath.
  [[nodiscard]] const lease& held_lease() const noexcept { return lease_; }
  // lease::verify_in: the caller's transaction commits only while this leadership holds.
  void verify_in(transaction_ref tx) const { lease_.verify_in(tx); }
  // Removes the value, then releases the lease (two round trips): the next campaigner in
  // line becomes leader. Throws lock_lost when leadership had been lost before.
  void resign();

 private:
  friend class election;
  leadership(std::shared_ptr<session_core> core, lease l, std::string value);
  std::shared_ptr<session_core> core_;
  lease lease_;
  std::string value_;
};

struct observe_options {
  // Longest time between two reads of the leader: a leader whose lease ends unreleased
  // (a crash) is seen at the latest this long after its lease's end. Releases and new
  // leaders of this process, and on PostgreSQL of every process (NOTIFY), wake the
  // observer at once. At least 10 ms. Default: 250 ms.
  std::chrono::milliseconds poll{250};
};

// Delivers changes of an election's leader to a callback, from a thread of its own: once at
// start with the leader then, then whenever the leader (its fence or value) changes or
// there is none. RAII: the destructor stops the thread (after a callback in flight).
class election_observer {
 public:
  election_observer(election_observer&&) noexcept = default;
  election_observer& operator=(election_observer&&) noexcept;  // stops this one first
  ~election_observer();
  // Stops delivering (waits for a callback in flight; never call it from the callback);
  // idempotent.
  void stop();

 private:
  friend class election;
  struct state;
  explicit election_observer(std::shared_ptr<state> st);
  std::shared_ptr<state> st_;
};

// One election, seen through a session (which must outlive it and what it returns).
class election {
 public:
  // Throws invalid_argument for an invalid name (validate_lock_name).
  election(session& s, std::string name);

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  // Becomes leader within `wait`, waiting in the name's wait line like acquire(), then
  // stores `value` (at most 4096 bytes of UTF-8). Throws timeout_error naming the current
  // leader when the wait runs out, lock_lost when the lease was lost before the value was
  // stored. A campaign of the leader's own session re-enters and replaces the value.
  [[nodiscard]] leadership campaign(std::string_view value, std::chrono::milliseconds wait);
  // One try: empty when another session leads.
  [[nodiscard]] std::optional<leadership> try_campaign(std::string_view value);
  // The current leader (one round trip); empty when nobody leads.
  [[nodiscard]] std::optional<leader_info> leader();
  // Calls on_change(leader) from the observer's thread; keep it short, never throw.
  [[nodiscard]] election_observer observe(std::function<void(const std::optional<leader_info>&)> on_change,
                                          observe_options opts = {});

 private:
  leadership won(lease l, std::string_view value);
  session* s_;
  std::shared_ptr<session_core> core_;
  std::string name_;
};

// The current leader of election `name` (for tools: `dblock leader`); empty when nobody leads.
[[nodiscard]] std::optional<leader_info> current_leader(database& db, std::string_view name);
// The current leader of every election, sorted by name (for tools: `dblock locks`); one
// round trip. A leader's lease is also listed by list_locks (lock.hpp) under the same name
// and fence.
[[nodiscard]] std::vector<leader_info> list_leaders(database& db);

}  // namespace dblock
