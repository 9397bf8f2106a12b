// dblock/reaper.hpp — the reaper: a background thread (owned by a dblock::reaper you
// start and stop) that deletes expired lock rows and wait-line tickets (past a grace
// period) and expired idempotency records in bounded batches, at an interval with jitter.
// Guarantees: it never deletes a live row — a lock row is deleted only when its
// expires_at is older than now - grace by the server's clock, re-checked on the row's
// latest version, and a holder can only renew a row that has not expired; an
// idempotency record only past its retention and never while an attempt's lease is live.
// Each batch is one short autocommit statement (no long-held locks), paced so that live
// traffic keeps its latency (duty_cycle below); on PostgreSQL and SQLite its commit does not
// wait for its WAL flush (async_commit below). Database outages
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
  std::uint64_t waiters = 0;      // expired wait-line tickets deleted (with reap_locks)
  std::uint64_t holders = 0;      // read-write lock and semaphore holds deleted (with reap_locks)
  std::chrono::milliseconds took{0};
  bool skipped = false;  // single_active: another process is the active reaper
};

struct reaper_options {
  // Time between passes (a pass deletes batches until one comes back short).
  // Default: 10 s.
  std::chrono::milliseconds interval{10'000};
  // Each wait is interval * (1 +/- jitter), uniformly. Default: 0.2.
  double jitter = 0.2;
  // A lock row is reaped only once expired for this long. Default: 5 s.
  std::chrono::milliseconds grace{5'000};
  // Rows per DELETE statement. Default: 1000.
  int batch_size = 1000;
  // Most batches per table in one pass. Default: 10000.
  int max_batches = 10'000;
  // Share of a pass spent in DELETE statements, in (0, 1]: the reaper rests between
  // batches for the rest (docs/operations.md, "Pacing"); 1 = no rest. Default: 0.75.
  double duty_cycle = 0.75;
  // PostgreSQL: a batch's commit does not wait for its WAL flush; SQLite: the reaper's own
  // connection commits without an fsync (docs/operations.md, "Reaper"). Either way a crash
  // can only bring back rows that had expired. Ignored elsewhere. Default: true.
  bool async_commit = true;
  // Reap expired lock rows and expired wait-line tickets (past grace). Default: true.
  bool reap_locks = true;
  // Reap idempotency records past their retention. Default: true.
  bool reap_idempotency = true;
  // One active reaper across processes: a pass first takes the session lock
  // "dblock:reaper" and is skipped while another process holds it. Default: false.
  bool single_active = false;
  // Longest wait after failed passes (interval/10 * 2^failures, jittered, up to this).
  // Default: 60 s.
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
