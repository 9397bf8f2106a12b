// lib/core/link.hpp — a process's background connection to one database: it runs the
// renewals of every lease session registered with it and, where the dialect notifies
// (PostgreSQL), listens for release notifications, on one connection and one thread. All
// sessions of a process that open the same database with the same bounds share one link
// (link::shared), so a process holds at most that connection besides its own, however
// many sessions and waiters it has. Used by lib/core/lock.cpp. Internal.
//
// The link listens only while some waiter of the process wants release notices (a waiter
// that tries: the first in its name's line, or one without a ticket): PostgreSQL wakes
// every listening connection of a database on every release there, whatever the channel,
// so a process that listens without need costs each release a wake-up of its server
// process and of this thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "core/backend.hpp"

namespace dblock::detail {

class link {
 public:
  using clock = std::chrono::steady_clock;

  // A renewal job (a session). renew() runs on the link's thread when due and returns when
  // it is due again; it must not throw.
  class job {
   public:
    virtual ~job() = default;
    virtual clock::time_point renew(backend& conn) noexcept = 0;
  };

  // The link of this process to the database `main` is connected to, with `opts` (the
  // renewal bounds) for its connection; opened on first use, closed with its last user.
  // Throws what opening the connection throws.
  // role = liveness: the process's second link, which holds the sessions' liveness markers
  // and runs only their heartbeats (lib/core/liveness.hpp), so that a heartbeat never
  // queues behind a renewal of many rows.
  enum class role { renewals, liveness };
  [[nodiscard]] static std::shared_ptr<link> shared(const backend& main, const open_options& opts,
                                                    role r = role::renewals);
  // A link of one session's own on `conn` (an attached connection, or the session's database
  // connection when renewals share it): renewals only, no LISTEN.
  [[nodiscard]] static std::shared_ptr<link> on(std::shared_ptr<backend> conn);

  link(std::shared_ptr<backend> conn, bool can_listen);
  ~link();
  link(const link&) = delete;
  link& operator=(const link&) = delete;

  void add(job* j, clock::time_point due);
  // Stops renewing j; waits for a renewal of j in flight to end.
  void remove(job* j);
  // Release notices: while at least one want is counted, the link LISTENs; once none is,
  // it UNLISTENs. A no-op where listening is not possible (can_listen() false).
  void want_notices();
  void unwant_notices() noexcept;
  [[nodiscard]] bool can_listen() const noexcept { return can_listen_; }
  // The current subscription: a number that changes every time the link starts listening
  // (again), 0 while it does not listen. A release is heard only if it commits after the
  // subscription began.
  [[nodiscard]] std::uint64_t subscription() const;
  // Waits until the link listens (or `until`); returns subscription() then.
  std::uint64_t await_subscription(clock::time_point until);
  // Cuts the statement in flight on the link's connection (see backend::interrupt()).
  void interrupt() noexcept { conn_->interrupt(); }
  [[nodiscard]] backend& conn() noexcept { return *conn_; }
  [[nodiscard]] const std::shared_ptr<backend>& conn_ptr() const noexcept { return conn_; }

 private:
  void loop();
  void await_releases(clock::duration slice);
  void subscribe(bool on);
  void poke() noexcept;  // wakes the thread from await_releases

  std::shared_ptr<backend> conn_;
  const bool can_listen_;
  std::thread thread_;
  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  std::unordered_map<job*, clock::time_point> jobs_;  // job -> when due
  job* running_ = nullptr;  // the job whose renewal is in flight
  bool changed_ = false;    // jobs_ or wants_ changed: the thread re-plans
  bool stopping_ = false;
  int wants_ = 0;                    // counted want_notices()
  std::uint64_t subscription_ = 0;   // see subscription(); 0 = not listening
  std::uint64_t subscriptions_ = 0;  // how many times the link started listening
  std::uint64_t subscribed_on_ = 0;  // conn_->connection_number() when LISTEN was sent (thread only)
  int wake_fd_ = -1;                 // eventfd: poke() ends the thread's wait for notifications
};

// A waiter's want of release notices on a link (none: null), held from its first sleep that
// a release should end until it is dropped (a waiter that stops trying, or ends). Used by
// the waiting loops of lib/core (session_core.hpp's wait_for, multi_lock.cpp, election.cpp).
class notice_want {
 public:
  using clock = link::clock;
  explicit notice_want(link* l) noexcept : l_(l && l->can_listen() ? l : nullptr) {}
  ~notice_want() { drop(); }
  notice_want(const notice_want&) = delete;
  notice_want& operator=(const notice_want&) = delete;

  // The link's subscription, read before a look (0 without one).
  [[nodiscard]] std::uint64_t mark() const { return l_ ? l_->subscription() : 0; }
  // Before a sleep that a release should end: wants notices and waits, until `until` at
  // most, for the link to listen. False when the caller must look again before it sleeps:
  // the link began listening after `mark` was read (a release in between was not heard),
  // or it did not listen by `until`. True without a link (nothing to wait for: the caller
  // polls).
  [[nodiscard]] bool ready(std::uint64_t mark, clock::time_point until) {
    if (!l_) return true;
    if (!held_) {
      l_->want_notices();
      held_ = true;
    }
    const auto now = l_->await_subscription(until);
    return now != 0 && now == mark;
  }
  void drop() noexcept {
    if (!held_) return;
    held_ = false;
    l_->unwant_notices();
  }

 private:
  link* l_;
  bool held_ = false;
};

}  // namespace dblock::detail
