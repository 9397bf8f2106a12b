// lib/core/reaper.cpp — the reaper thread (dblock/reaper.hpp): batched deletes of
// expired lock rows, wait-line tickets and idempotency records (sql/<dialect>/reap_*.sql)
// paced by a duty cycle (reaper_pacing.hpp), jittered interval, backoff on errors,
// optional single active reaper via a session lock.
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>

#include "core/backend.hpp"
#include "core/backoff.hpp"
#include "core/dialect.hpp"
#include "core/ops/reaper.hpp"
#include "core/reaper_pacing.hpp"
#include "dblock/metrics.hpp"
#include "dblock/reaper.hpp"
#include "dblock/session_lock.hpp"

namespace dblock {

struct reaper::state {
  database db;
  std::shared_ptr<detail::backend> conn;
  reaper_options opts;
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  std::thread thread;
  bool session_configured = false;
  // Set by configure_session on a single-writer database: the reaper looks for the write
  // lock itself, at most this long apart (reaper_ops::writer_poll); zero: the busy handler.
  std::chrono::microseconds writer_poll{0};
  std::optional<session_lock> active;  // single_active: held across passes
  std::mt19937_64 rng{detail::jitter_seed()};

  explicit state(database d) : db(std::move(d)) {}

  // `name` is reap_locks, reap_waiters or reap_idempotency. With opts.async_commit on PostgreSQL a batch
  // that is its own transaction runs <name>_async.sql: its commit does not wait for its WAL
  // flush (synchronous_commit = off for that implicit transaction only). On an attached
  // connection inside the caller's transaction the plain statement runs: the setting would
  // last until that transaction's commit and weaken it.
  std::uint64_t batch(const std::string& name, std::initializer_list<detail::value> params) {
    const bool async = opts.async_commit && detail::traits_of(conn->kind()).async_commit;
    const std::string async_name = name + "_async";
    const std::span<const detail::value> args(params.begin(), params.size());
    // InnoDB can pick a batch's DELETE as the victim of a deadlock with a live acquire or
    // release near the expiry boundary (MySQL error 1213 mid-pass): run it again a few
    // times, then the pass fails.
    const auto run = [&] {
      return detail::reaper_for(conn->kind()).deleted(detail::retry_conflicts(*conn, [&] {
        return async ? conn->exec_unless_in_transaction(async_name, name, args) : conn->exec(name, args);
      }));
    };
    if (writer_poll.count() <= 0) return run();
    // SQLite's write lock has no queue, and a writer committing back to back frees it only
    // for microseconds between statements: look often (jittered, so as not to fall in step
    // with a periodic writer) rather than sleep in the busy handler's longer steps, for as
    // long as a connection's default busy timeout. stop() ends the wait: an empty batch.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::uniform_int_distribution<long long> look(writer_poll.count() / 5, writer_poll.count());
    for (;;) {
      try {
        return run();
      } catch (const lock_not_available&) {
        if (stop_requested()) return 0;
        if (std::chrono::steady_clock::now() >= deadline) throw;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(look(rng)));
    }
  }

  bool is_active() {
    if (!opts.single_active) return true;
    if (active && active->is_held()) return true;
    active.reset();
    active = session_lock::try_lock(db, "dblock:reaper");
    return active.has_value();
  }

  reap_report pass() {
    reap_report rep;
    const auto t0 = std::chrono::steady_clock::now();
    if (!is_active()) {
      rep.skipped = true;
      return rep;
    }
    if (!session_configured && conn->can_reopen()) {
      const auto& ops = detail::reaper_for(conn->kind());
      ops.configure_session(*conn, opts.async_commit);
      writer_poll = ops.writer_poll();
      session_configured = true;
    }
    if (opts.reap_locks) {
      const std::int64_t grace = opts.grace.count();
      reap_table(rep.locks, [&](std::int64_t n) { return batch("reap_locks", {grace, n}); });
      reap_table(rep.waiters, [&](std::int64_t n) { return batch("reap_waiters", {grace, n}); });
      reap_table(rep.holders, [&](std::int64_t n) { return batch("reap_holders", {grace, n}); });
    }
    if (opts.reap_idempotency)
      reap_table(rep.idempotency, [&](std::int64_t n) { return batch("reap_idempotency", {n}); });
    rep.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    if (rep.locks + rep.holders) detail::count(counter::reaped_locks, rep.locks + rep.holders);
    if (rep.idempotency) detail::count(counter::reaped_idempotency, rep.idempotency);
    if (rep.waiters) detail::count(counter::reaped_waiters, rep.waiters);
    detail::count(counter::reaper_runs);
    return rep;
  }

  // Batches until one comes back short (or max_batches, or stop()), resting after each
  // full batch as opts.duty_cycle says (reaper_pacing.hpp).
  template <class Batch>
  void reap_table(std::uint64_t& total, Batch run_batch) {
    const auto pacing = pacing_for_dialect();
    const std::int64_t n = opts.batch_size;
    for (int i = 0; i < opts.max_batches; ++i) {
      const auto b0 = std::chrono::steady_clock::now();
      const auto k = run_batch(n);
      const auto took = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - b0);
      total += k;
      if (k < static_cast<std::uint64_t>(n) || stop_requested()) break;
      rest(detail::reap_pause(pacing, took));
    }
  }

  detail::reap_pacing pacing_for_dialect() const {
    detail::reap_pacing p;
    p.duty_cycle = opts.duty_cycle;
    detail::reaper_for(conn->kind()).bound_pacing(p);
    return p;
  }

  void rest(std::chrono::microseconds pause) {
    if (pause.count() <= 0) return;
    std::unique_lock l(mu);
    cv.wait_for(l, pause, [&] { return stopping; });
  }

  bool stop_requested() {
    std::lock_guard l(mu);
    return stopping;
  }

  std::chrono::milliseconds jittered(std::chrono::milliseconds base) {
    const double j = std::clamp(opts.jitter, 0.0, 1.0);
    std::uniform_real_distribution<double> d(1.0 - j, 1.0 + j);
    return std::chrono::milliseconds(static_cast<long long>(static_cast<double>(base.count()) * d(rng)));
  }

  void loop() {
    // No jitter of its own (jittered() spreads it): max(100 ms, interval/10), doubling per
    // failure up to max_backoff (and at most 1024 times the first).
    const std::chrono::milliseconds first(std::max<long long>(100, opts.interval.count() / 10));
    detail::backoff on_failure({.initial = first,
                                .max = std::min<std::chrono::milliseconds>(first * 1024, opts.max_backoff),
                                .spread = detail::backoff_policy::jitter::none});
    auto next = std::chrono::milliseconds(0);  // first pass right away
    for (;;) {
      {
        std::unique_lock l(mu);
        if (cv.wait_for(l, next, [&] { return stopping; })) return;
      }
      try {
        if (on_failure.attempts() > 0) session_configured = false;  // maybe a new connection
        auto rep = pass();
        on_failure.reset();
        next = jittered(opts.interval);
        if (opts.on_pass) {
          try {
            opts.on_pass(rep);
          } catch (...) {
          }
        }
      } catch (const error& e) {
        detail::count(counter::reaper_errors);
        active.reset();
        if (opts.on_error) {
          try {
            opts.on_error(e);
          } catch (...) {
          }
        }
        next = jittered(std::chrono::duration_cast<std::chrono::milliseconds>(on_failure.next()));
      } catch (const std::exception& e) {
        detail::count(counter::reaper_errors);
        if (opts.on_error) {
          try {
            opts.on_error(internal_error(e.what()));
          } catch (...) {
          }
        }
        (void)on_failure.next();  // counts toward the next error's backoff
        next = jittered(std::min(opts.max_backoff, opts.interval));
      }
    }
  }
};

reaper::reaper(database db, reaper_options opts) : s_(std::make_unique<state>(db)) {
  if (opts.batch_size < 1 || opts.batch_size > 100'000)
    throw invalid_argument("reaper batch_size " + std::to_string(opts.batch_size) + " is out of range 1-100000");
  if (opts.interval < std::chrono::milliseconds(10))
    throw invalid_argument("reaper interval " + std::to_string(opts.interval.count()) + " ms is too short");
  if (opts.grace < std::chrono::milliseconds(0)) throw invalid_argument("reaper grace must not be negative");
  if (opts.max_batches < 1) throw invalid_argument("reaper max_batches must be at least 1");
  if (!(opts.duty_cycle > 0.0 && opts.duty_cycle <= 1.0))
    throw invalid_argument("reaper duty_cycle " + std::to_string(opts.duty_cycle) + " is out of range (0, 1]");
  s_->opts = std::move(opts);
  s_->conn = detail::backend_of(db)->can_reopen() ? detail::backend_of(db)->reopen() : detail::backend_of(db);
}

reaper::~reaper() { stop(); }

void reaper::start() {
  std::lock_guard l(s_->mu);
  if (s_->thread.joinable()) return;
  s_->stopping = false;
  s_->thread = std::thread([s = s_.get()] { s->loop(); });
}

void reaper::stop() {
  {
    std::lock_guard l(s_->mu);
    s_->stopping = true;
  }
  s_->cv.notify_all();
  if (s_->thread.joinable()) s_->thread.join();
  s_->active.reset();
}

bool reaper::running() const noexcept {
  std::lock_guard l(s_->mu);
  return s_->thread.joinable() && !s_->stopping;
}

reap_report reaper::run_once() {
  if (running()) throw invalid_argument("run_once() while the reaper thread is running");
  return s_->pass();
}

}  // namespace dblock
