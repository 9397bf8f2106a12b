// lib/core/link.hpp — a process's background connection to one database: it runs the
// renewals of every lease session registered with it and, where the dialect notifies
// (PostgreSQL), listens for release notifications, on one connection and one thread. All
// sessions of a process that open the same database with the same bounds share one link
// (link::shared), so a process holds at most that connection besides its own, however
// many sessions and waiters it has. Used by lib/core/lock.cpp. Internal.
#pragma once

#include <chrono>
#include <condition_variable>
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
  // Listens for release notifications from now on (a no-op where that is not possible).
  void listen();
  [[nodiscard]] bool listening() const;
  // Cuts the statement in flight on the link's connection (see backend::interrupt()).
  void interrupt() noexcept { conn_->interrupt(); }
  [[nodiscard]] backend& conn() noexcept { return *conn_; }
  [[nodiscard]] const std::shared_ptr<backend>& conn_ptr() const noexcept { return conn_; }

 private:
  void loop();
  void await_releases(clock::duration slice);

  std::shared_ptr<backend> conn_;
  const bool can_listen_;
  std::thread thread_;
  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  std::unordered_map<job*, clock::time_point> jobs_;  // job -> when due
  job* running_ = nullptr;  // the job whose renewal is in flight
  bool changed_ = false;    // jobs_ or listen_ changed: the thread re-plans
  bool stopping_ = false;
  bool listen_ = false;
  std::uint64_t subscribed_on_ = 0;  // conn_->connection_number() when LISTEN was sent; 0 = never
};

}  // namespace dblock::detail
