// dblock/reaper.hpp — the reaper: a background thread (owned by a dblock::reaper you
// start and stop) that deletes expired lock rows (past a grace period) and expired
// idempotency records in bounded batches, at an interval with jitter.
// Guarantees: it never deletes a live row — a lock row is deleted only when its
// expires_at is older than now - grace by the server's clock, re-checked on the row's
// latest version, and a holder can only renew a row that has not expired; an
// idempotency record only past its retention and never while an attempt's lease is live.
// Each batch is one short autocommit statement (no long-held locks), paced so that live
// traffic keeps its latency (duty_cycle below); on PostgreSQL its commit does not wait for
// its WAL flush (async_commit below). Database outages
// are reported through on_error and retried with backoff; stop() returns promptly.
// The exact SQL is in sql/<dialect>/reap_*.sql.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "dblock/database.hpp"
#include "dblock/errors.hpp"

namespace dblock {

struct reap_report {
  std::uint64_t locks = 0;        // lock rows deleted
  std::uint64_t idempotency = 0;  // idempotency records deleted
  std::chrono::milliseconds took{0};
  bool skipped = false;  // single_active: another process is the active reaper
};

struct reaper_options {
  // Time between passes; each pass deletes batches until one comes back short. Default 10 s.
  std::chrono::milliseconds interval{10'000};
  // Each wait is interval * (1 +/- jitter), uniformly. Default 0.2.
  double jitter = 0.2;
  // A lock row is reaped only once expired for this long (a takeover needs no reaper:
  // acquire takes over expired rows itself). Default 5 s.
  std::chrono::milliseconds grace{5'000};
  // Rows per DELETE statement. Default 1000.
  int batch_size = 1000;
  // Upper bound of batches per table per pass (bounds one pass). Default 10000.
  int max_batches = 10'000;
  // Pacing, so that reaping a backlog does not raise live acquires' latency: a batch
  // competes with live commits for the log flush and for CPU (on SQLite, for the only
  // writer lock). After each full batch the reaper rests took * (1 - duty_cycle) /
  // duty_cycle, `took` being that batch's own duration: it spends at most this share of a
  // pass in statements, and a database slowed by load gets longer rests by itself.
  // SQLite rests 2-20 ms whatever the value. 1 = no rest on PostgreSQL and MariaDB (as
  // fast as the database goes: the knob for a large backlog). Range (0, 1]. Default 0.75
  // (a third of each batch's time).
  double duty_cycle = 0.75;
  // PostgreSQL: each batch's commit does not wait for its WAL flush (synchronous_commit =
  // off, set inside the statement for its own implicit transaction only; the connection's
  // setting is unchanged afterwards). A crash can lose only the deletions of rows that had
  // already expired - they are reaped again - and any later durable commit flushes them
  // with it, WAL being sequential. It also skips waiting for a synchronous standby.
  // Ignored by MySQL/MariaDB and SQLite, and on an attached connection whose caller has a
  // transaction open (the caller's commit decides durability there). Default true.
  bool async_commit = true;
  bool reap_locks = true;
  bool reap_idempotency = true;
  // Only one active reaper across the fleet: each pass first takes the session lock
  // "dblock:reaper" (advisory lock / GET_LOCK; a lease lock on SQLite) and skips the
  // pass when another process holds it. Default false.
  bool single_active = false;
  // After a failed pass: wait min(max_backoff, interval/10 * 2^failures) with jitter.
  std::chrono::milliseconds max_backoff{60'000};
  // Called after every pass from the reaper thread (keep it short; never throw).
  std::function<void(const reap_report&)> on_pass;
  // Called for every failed pass; the reaper backs off and keeps running.
  std::function<void(const error&)> on_error;
};

class reaper {
 public:
  // Works on a connection of its own when db was opened from a URL.
  explicit reaper(database db, reaper_options opts = {});
  ~reaper();  // stop()
  reaper(const reaper&) = delete;
  reaper& operator=(const reaper&) = delete;

  void start();  // starts the thread (no-op when running)
  void stop();   // wakes and joins the thread; returns within one statement's time
  [[nodiscard]] bool running() const noexcept;

  // One pass now, on the calling thread. Throws on database errors.
  reap_report run_once();

 private:
  struct state;
  std::unique_ptr<state> s_;
};

}  // namespace dblock
