// tests/faults/dblock_workload.cpp — the fault-injection workload (docs/correctness.md).
//
//   dblock_workload run --url URL --dir DIR [--duration-s S | --ops N] [--faults kill,pause,...]
//   dblock_workload worker ...        (started by `run`; one process per worker slot)
//
// `run` is the driver: it makes a fresh database (PostgreSQL/MariaDB: CREATE DATABASE
// dblock_t_<random> on the server of URL; SQLite: DIR/workload.db), migrates it, creates
// the workload's tables, starts N worker processes, injects faults while they run, stops
// them, reads the database's final state into DIR/final.json, runs the checker
// (checker.hpp) over DIR/history/*.jsonl and writes DIR/summary.json. Exit status 0 when
// the checker found no violation and no worker died on its own, 1 otherwise, 2 on a
// setup error.
//
// Each worker thread owns a dblock::session and loops over:
//   lock cycle   acquire a lease lock (one of --locks names), 1-3 writes to the lock's
//                resources while is_held() — a fenced write (UPDATE ... WHERE fence <= token)
//                or a write guarded by lease.verify_in(tx) — each logged in the same
//                transaction, then release.
//   family cycle (a share of the lock cycles, --family-share) a read or write hold of a
//                read-write lock (names R<i>) or a permit of a semaphore of --permits
//                permits (names S<i>), held while is_held() for a short while, then released;
//                the checker holds readers and writers apart and counts permits.
//   charge       an idempotent "charge" with run_once(tx): its side effect (a row in
//                idem_charges) and the idempotency record commit together.
//   lead cycle   (--elect-share of the cycles) campaign in election E0, 1-3 leader writes
//                to el_resource fenced by the leadership's token (UPDATE ... WHERE fence <=
//                token), each logged in el_log in the same transaction, then resign.
// Every operation is recorded (invoke, then ok / fail / info) in the worker's history.
//
// Faults (--faults, comma separated): kill (SIGKILL a random worker at a random moment,
// then start a new one), pause (SIGSTOP a worker for 1.5-2.5 x TTL, then SIGCONT),
// connkill (pg_terminate_backend / KILL CONNECTION of a random connection of the run's
// database), restart (the database server: scripts/servers restart-* and crash-restart-*,
// alternately; on SQLite: SIGKILL every worker at once, then restart them all), clock
// (the workers run under libfaketime with their monotonic clock left alone; the driver
// makes one worker's wall clock jump by minutes to days, back and forth), and network
// partitions (PostgreSQL, MariaDB): with any of them, each worker slot reaches the server
// through a relay of its own (dblock_test_relay, tests/support/relay.hpp), which the
// driver cuts: partition (one worker's network silent for longer than TTL + lock delay,
// then back), reply-loss (requests still reach the server, answers are held: a COMMIT
// applied whose reply is lost; then the connections are reset or the answers released),
// partition-all (the server cut off from every worker at once for about a TTL), and
// failover (PostgreSQL primary + standby started by scripts/servers with
// DBLOCK_SERVERS_PG_STANDBY, --url the pair's multi-host URL: the primary crashes and the
// standby is promoted, once per run), and node-kill (a 3-node Galera cluster started by
// scripts/servers with DBLOCK_SERVERS_ONLY=galera: one node is SIGKILLed, once per run;
// with --worker-url given per node, worker slots are spread over the nodes and the killed
// node's workers reconnect to the next host of their URL).
//
// Planted bugs (--bug) make the workers misuse dblock so that the checker must object:
//   unsafe-release  release = DELETE FROM dblock_locks WHERE name = ? (no owner check),
//                   with simulated pauses longer than the TTL inside the critical section
//   unfenced-write  writes without the fence condition, after a pause longer than the TTL
//   unchecked-action  acts (unfenced side effects) without checking is_held() first
//   idem-no-tx      begin(), then the side effect in its own transaction, then complete(),
//                   with pauses longer than the idempotency lease in between
//   rw-writer-beside-reader  a family cycle that wants the write hold takes a read hold and
//                   records it as the write hold (a writer admitted beside readers)
//   permit-overgrant a permit is taken from another semaphore of N + 1 permits and recorded
//                   as one of the N (permit N + 1 granted)
//   unfenced-election  a leader that never re-checks is_held() and writes as leader without
//                   the fence condition (and lead cycles only, held longer)
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/backend.hpp"
#include "core/catalog.hpp"
#include "dblock/election.hpp"
#include "dblock/errors.hpp"
#include "dblock/lock.hpp"
#include "dblock/open.hpp"
#include "dblock/transaction.hpp"
#include "faults/checker.hpp"
#include "faults/history.hpp"
#include "support/relay.hpp"
#include "support/servers.hpp"

#if __has_include("dblock/idempotency.hpp")
#include "dblock/idempotency.hpp"
#define DBLOCK_FAULTS_IDEMPOTENCY 1
#else
#define DBLOCK_FAULTS_IDEMPOTENCY 0
#endif

extern char** environ;

#ifndef DBLOCK_SERVERS_SCRIPT
#define DBLOCK_SERVERS_SCRIPT "scripts/servers"
#endif
#ifndef DBLOCK_RELAY
#define DBLOCK_RELAY ""
#endif

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace dblock::faults {
namespace {

// libfaketime (Debian package faketime), multi-threaded flavour; empty when absent.
std::string faketime_lib() {
  std::error_code ec;
  for (const auto& de : fs::directory_iterator("/usr/lib", ec)) {
    const auto p = de.path() / "faketime" / "libfaketimeMT.so.1";
    if (fs::exists(p, ec)) return p.string();
  }
  return {};
}

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

void sleep_ms(std::int64_t ms) {
  if (ms > 0) std::this_thread::sleep_for(milliseconds(ms));
}

std::string error_kind_of(const std::exception& e) {
  if (auto* d = dynamic_cast<const dblock::error*>(&e)) return to_string(d->kind());
  return "exception";
}

// Runs test SQL ($1..$n placeholders) on a backend's own driver: inside dblock
// transactions only (the backend's transaction handles rollback and reconnects).
detail::result sql(const std::shared_ptr<detail::backend>& b, const std::string& text,
                   std::vector<detail::value> params = {}) {
  auto& drv = b->raw();
  // The name keys the MySQL driver's prepared-statement cache: use the text itself.
  auto st = detail::rewrite_placeholders("faults: " + text, text, drv.style());
  return drv.run(st, params);
}

std::int64_t to_i64(const detail::cell& c) { return c ? std::stoll(*c) : 0; }

// ====================================================================== worker

struct worker_config {
  std::string url;
  std::string history;
  std::string id;  // "w<slot>.<incarnation>"
  int threads = 2;
  int locks = 2;
  int ttl_ms = 1000;
  int lock_delay_ms = 1000;  // session_options::lock_delay (its default)
  int wait_ms = 3000;
  int cs_sleep_ms = 30;
  double lock_share = 0.6;  // fraction of lock cycles (the rest are charges)
  double family_share = 0.3;  // fraction of lock cycles that are read-write / semaphore cycles
  int permits = 2;            // permits of each semaphore S<i>
  double elect_share = 0.2;  // fraction of all cycles that are lead cycles (taken first)
  int idem_lease_ms = 1000;
  int key_period_ms = 500;
  int keys_per_period = 6;
  double pause_prob = 0.0;  // simulated in-process pauses (planted-bug runs)
  std::string bug = "none";
  std::uint64_t seed = 1;
};

class worker_thread {
 public:
  worker_thread(const worker_config& c, int t, history_writer& h)
      : cfg_(c), t_(t), h_(h), rng_(c.seed * 1000003ULL + static_cast<std::uint64_t>(t) * 7919ULL + ::getpid()) {}

  void run() {
    int errors_in_a_row = 0;
    while (!g_stop.load()) {
      try {
        if (!db_) connect();
        if (cfg_.bug == "unfenced-election" || uniform() < cfg_.elect_share) {
          lead_cycle();
        } else if (uniform() < cfg_.lock_share || !DBLOCK_FAULTS_IDEMPOTENCY) {
          if (uniform() < cfg_.family_share) family_cycle();
          else lock_cycle();
        } else {
          charge();
        }
        if (last_op_failed_) {
          ++errors_in_a_row;
          // The database is restarting or our connection was killed: back off a little;
          // after a few failures in a row start over with a new connection and session.
          sleep_ms(20 + static_cast<std::int64_t>(uniform() * 80));
          if (errors_in_a_row >= 5) {
            disconnect();
            errors_in_a_row = 0;
          }
        } else {
          errors_in_a_row = 0;
        }
      } catch (const std::exception& e) {
        h_.append({{"ev", "error"}, {"w", cfg_.id}, {"t", t_}, {"what", e.what()}, {"kind", error_kind_of(e)}});
        disconnect();
        sleep_ms(100 + static_cast<std::int64_t>(uniform() * 200));
      }
    }
    disconnect();
  }

 private:
  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }
  std::int64_t below(std::int64_t n) { return std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng_); }

  json ev(std::int64_t op, const char* f, const char* kind) const {
    return {{"w", cfg_.id}, {"t", t_}, {"op", op}, {"f", f}, {"ev", kind}};
  }
  std::string op_id(std::int64_t op) const { return cfg_.id + "/" + std::to_string(t_) + "/" + std::to_string(op); }

  void connect() {
    auto db = dblock::open(cfg_.url);
    session_options so;
    so.ttl = milliseconds(cfg_.ttl_ms);
    so.lock_delay = milliseconds(cfg_.lock_delay_ms);
    so.holder = cfg_.id + "/" + std::to_string(t_);
    // The library's own word that a lease is gone, with the time it said so.
    so.on_lost = [this, w = cfg_.id, t = t_](const lost_lease& l) {
      h_.append({{"ev", "lost"}, {"source", "callback"}, {"w", w}, {"t", t}, {"lock", l.name}, {"fence", l.fence},
                 {"reason", l.reason}});
    };
    auto s = std::make_unique<session>(db, so);
#if DBLOCK_FAULTS_IDEMPOTENCY
    idempotency_options io;
    io.lease = milliseconds(cfg_.idem_lease_ms);
    store_ = std::make_unique<idempotency_store>(db, io);
#endif
    session_ = std::move(s);
    db_.emplace(std::move(db));
  }

  void disconnect() {
#if DBLOCK_FAULTS_IDEMPOTENCY
    store_.reset();
#endif
    session_.reset();
    db_.reset();
  }

  // ---------------------------------------------------------------- family cycle
  // A read-write lock or semaphore hold: acquire (recorded with its mode), stay a little
  // while is_held(), release. No resource writes: the checker judges the windows.
  void family_cycle() {
    last_op_failed_ = false;
    const bool rw = uniform() < 0.5;
    const std::int64_t li = below(cfg_.locks);
    const std::string name = (rw ? "R" : "S") + std::to_string(li);
    const bool write = rw && uniform() < 0.3;
    const std::string mode = rw ? (write ? "write" : "read") : "permit";
    const std::int64_t op = ++next_op_;
    auto inv = ev(op, "acquire", "invoke");
    inv["lock"] = name;
    inv["mode"] = mode;
    h_.append(inv);
    std::optional<lease> l;
    std::optional<permit_set> p;
    try {
      if (rw) {
        // Planted bug: the would-be writer takes a read hold.
        const auto m = write && cfg_.bug != "rw-writer-beside-reader" ? lock_mode::write : lock_mode::read;
        l.emplace(session_->acquire(name, m, milliseconds(cfg_.wait_ms)));
      } else if (cfg_.bug == "permit-overgrant" && uniform() < 0.5) {
        // Planted bug: a permit of another semaphore of N + 1, recorded as one of the N.
        p.emplace(session_->acquire_permits(name + "+", cfg_.permits + 1, 1, milliseconds(cfg_.wait_ms)));
      } else {
        p.emplace(session_->acquire_permits(name, cfg_.permits, 1, milliseconds(cfg_.wait_ms)));
      }
    } catch (const timeout_error&) {
      auto e = ev(op, "acquire", "fail");
      e["error"] = "timeout";
      h_.append(e);
      return;
    } catch (const dblock::error& x) {
      auto e = ev(op, "acquire", "info");
      e["error"] = to_string(x.kind());
      e["what"] = x.what();
      h_.append(e);
      last_op_failed_ = true;
      return;
    }
    lease& held = l ? *l : p->permits().front();
    const std::int64_t fence = held.fence();
    const std::int64_t t0 = mono_ns();
    const std::int64_t until = t0 + held.remaining().count() * 1'000'000;
    {
      auto e = ev(op, "acquire", "ok");
      e["lock"] = name;
      e["fence"] = fence;
      e["until"] = until;
      e["mode"] = mode;
      if (!rw) e["permits"] = cfg_.permits;
      h_.append(e);
    }
    sleep_ms(below(cfg_.cs_sleep_ms + 1));
    if (held.remaining().count() <= 0) {
      std::string reason = held.lost_reason();
      h_.append({{"ev", "lost"}, {"source", "observed"}, {"w", cfg_.id}, {"t", t_}, {"lock", name}, {"fence", fence},
                 {"reason", reason.empty() ? "local deadline passed" : reason}});
    }
    const std::int64_t rop = ++next_op_;
    auto rinv = ev(rop, "release", "invoke");
    rinv["lock"] = name;
    rinv["fence"] = fence;
    rinv["until"] = until;
    h_.append(rinv);
    try {
      held.release();
      h_.append(ev(rop, "release", "ok"));
    } catch (const lock_lost& x) {
      auto e = ev(rop, "release", "fail");
      e["error"] = "lock_lost";
      e["what"] = x.what();
      h_.append(e);
    } catch (const dblock::error& x) {
      auto e = ev(rop, "release", "info");
      e["error"] = to_string(x.kind());
      e["what"] = x.what();
      h_.append(e);
      last_op_failed_ = true;
    }
  }

  // ---------------------------------------------------------------- lock cycle
  void lock_cycle() {
    last_op_failed_ = false;
    const std::int64_t li = below(cfg_.locks);
    const std::string name = "L" + std::to_string(li);
    const std::int64_t op = ++next_op_;
    auto inv = ev(op, "acquire", "invoke");
    inv["lock"] = name;
    h_.append(inv);
    std::optional<lease> l;
    try {
      l.emplace(session_->acquire(name, milliseconds(cfg_.wait_ms)));
    } catch (const timeout_error&) {
      auto e = ev(op, "acquire", "fail");
      e["error"] = "timeout";
      h_.append(e);
      return;
    } catch (const dblock::error& x) {
      // The grant may have happened (the reply was lost): outcome unknown.
      auto e = ev(op, "acquire", "info");
      e["error"] = to_string(x.kind());
      e["what"] = x.what();
      h_.append(e);
      last_op_failed_ = true;
      return;
    }
    const std::int64_t fence = l->fence();
    // The promise: held until at least now + remaining() (now read before asking).
    std::int64_t t0 = mono_ns();
    std::int64_t until = t0 + l->remaining().count() * 1'000'000;
    {
      auto e = ev(op, "acquire", "ok");
      e["lock"] = name;
      e["fence"] = fence;
      e["until"] = until;
      h_.append(e);
    }
    const bool unsafe_release = cfg_.bug == "unsafe-release";
    const bool unfenced = cfg_.bug == "unfenced-write";
    const bool unchecked = cfg_.bug == "unchecked-action";
    // Planted-bug runs hold longer (three writes), so that a pause lands mid-section.
    const int steps = unsafe_release || unfenced || unchecked ? 3 : 1 + static_cast<int>(below(3));
    for (int s = 0; s < steps && !g_stop.load(); ++s) {
      t0 = mono_ns();
      const auto rem = l->remaining();
      // Planted bugs: this worker never looks at is_held() after the grant: it keeps
      // writing (and releasing, and acting) after its lease is gone.
      if (rem.count() <= 0 && (unsafe_release || unfenced || unchecked)) {
        // no check
      } else if (rem.count() <= 0) {
        std::string reason = l->lost_reason();
        h_.append({{"ev", "lost"}, {"source", "observed"}, {"w", cfg_.id}, {"t", t_}, {"lock", name}, {"fence", fence},
                   {"reason", reason.empty() ? "local deadline passed" : reason}});
        break;
      }
      if (rem.count() > 0) until = std::max(until, t0 + rem.count() * 1'000'000);
      act(name, fence, until, !unchecked);
      // Some work between the check and the write: a pause (SIGSTOP) landing here makes
      // the write late, which is what fencing is for.
      sleep_ms(below(cfg_.cs_sleep_ms + 1));
      const char* mode = unfenced ? "unfenced" : (uniform() < 0.5 ? "fenced" : "verified");
      write(*l, name, li, fence, until, mode);
      if (last_op_failed_) break;
    }
    // Planted bug: one more side effect on the way out, whatever became of the lease.
    if (unchecked) act(name, fence, until, false);

    const std::int64_t rop = ++next_op_;
    auto rinv = ev(rop, "release", "invoke");
    rinv["lock"] = name;
    rinv["fence"] = fence;
    rinv["until"] = until;
    h_.append(rinv);
    try {
      if (unsafe_release) {
        // Planted bug: delete the lock row by name only, whoever holds it now.
        transact(*db_, [&](transaction_ref tx) {
          sql(detail::backend_of(tx), "DELETE FROM dblock_locks WHERE name = $1", {name});
        });
        h_.append(ev(rop, "release", "ok"));
        try {
          l.reset();  // the library's own release then finds nothing of ours: ignored
        } catch (...) {
        }
        return;
      }
      l->release();
      h_.append(ev(rop, "release", "ok"));
    } catch (const lock_lost& x) {
      auto e = ev(rop, "release", "fail");
      e["error"] = "lock_lost";
      e["what"] = x.what();
      h_.append(e);
    } catch (const dblock::error& x) {
      auto e = ev(rop, "release", "info");
      e["error"] = to_string(x.kind());
      e["what"] = x.what();
      h_.append(e);
      last_op_failed_ = true;
    }
  }

  // ---------------------------------------------------------------- lead cycle
  // Leadership of E0 is a lease of its own kind for the checker: "campaign" opens a window
  // (like an acquire), "resign" closes it (like a release); leader writes go to el_resource,
  // logged in el_log in server commit order, where a token going down is two leaders at once.
  void lead_cycle() {
    last_op_failed_ = false;
    const std::string name = "E0";
    const bool bug = cfg_.bug == "unfenced-election";
    const std::int64_t op = ++next_op_;
    auto inv = ev(op, "campaign", "invoke");
    inv["lock"] = name;
    h_.append(inv);
    std::optional<leadership> lead;
    try {
      election e(*session_, name);
      lead.emplace(e.campaign(cfg_.id + "/" + std::to_string(t_), milliseconds(cfg_.wait_ms)));
    } catch (const timeout_error&) {
      auto e = ev(op, "campaign", "fail");
      e["error"] = "timeout";
      h_.append(e);
      return;
    } catch (const dblock::error& x) {
      auto e = ev(op, "campaign", "info");  // the grant may have happened: outcome unknown
      e["error"] = to_string(x.kind());
      e["what"] = x.what();
      h_.append(e);
      last_op_failed_ = true;
      return;
    }
    const std::int64_t fence = lead->fence();
    std::int64_t t0 = mono_ns();
    std::int64_t until = t0 + lead->remaining().count() * 1'000'000;
    {
      auto e = ev(op, "campaign", "ok");
      e["lock"] = name;
      e["fence"] = fence;
      e["until"] = until;
      h_.append(e);
    }
    const int steps = bug ? 3 : 1 + static_cast<int>(below(3));
    for (int s = 0; s < steps && !g_stop.load(); ++s) {
      t0 = mono_ns();
      const auto rem = lead->remaining();
      if (rem.count() <= 0 && !bug) {
        std::string reason = lead->lost_reason();
        h_.append({{"ev", "lost"}, {"source", "observed"}, {"w", cfg_.id}, {"t", t_}, {"lock", name}, {"fence", fence},
                   {"reason", reason.empty() ? "local deadline passed" : reason}});
        break;
      }
      if (rem.count() > 0) until = std::max(until, t0 + rem.count() * 1'000'000);
      sleep_ms(below(cfg_.cs_sleep_ms + 1));
      lead_write(name, fence, until, !bug);
      if (last_op_failed_) break;
    }
    const std::int64_t rop = ++next_op_;
    auto rinv = ev(rop, "resign", "invoke");
    rinv["lock"] = name;
    rinv["fence"] = fence;
    rinv["until"] = until;
    h_.append(rinv);
    try {
      lead->resign();
      h_.append(ev(rop, "resign", "ok"));
    } catch (const lock_lost& x) {
      auto e = ev(rop, "resign", "fail");
      e["error"] = "lock_lost";
      e["what"] = x.what();
      h_.append(e);
    } catch (const dblock::error& x) {
      auto e = ev(rop, "resign", "info");
      e["error"] = to_string(x.kind());
      e["what"] = x.what();
      h_.append(e);
      last_op_failed_ = true;
    }
  }

  // A leader's write: fenced by the leadership's token, or not (the planted bug).
  void lead_write(const std::string& name, std::int64_t fence, std::int64_t until, bool fenced) {
    const std::int64_t op = ++next_op_;
    const std::string id = op_id(op);
    auto inv = ev(op, "lead_write", "invoke");
    inv["lock"] = name;
    inv["fence"] = fence;
    inv["mode"] = fenced ? "fenced" : "unfenced";
    inv["until"] = until;
    h_.append(inv);
    bool accepted = false;
    try {
      transact(*db_, [&](transaction_ref tx) {
        const auto& b = detail::backend_of(tx);
        auto r = fenced ? sql(b, "UPDATE el_resource SET value = $1, fence = $2 WHERE id = 0 AND fence <= $2", {id, fence})
                        : sql(b, "UPDATE el_resource SET value = $1, fence = $2 WHERE id = 0", {id, fence});
        accepted = r.affected == 1;
        if (accepted) sql(b, "INSERT INTO el_log (election, fence, op) VALUES (0, $1, $2)", {fence, id});
      });
      auto e = ev(op, "lead_write", "ok");
      e["accepted"] = accepted;
      h_.append(e);
    } catch (const commit_unknown& x) {
      auto e = ev(op, "lead_write", "info");
      e["error"] = "commit_unknown";
      e["what"] = x.what();
      h_.append(e);
      last_op_failed_ = true;
    } catch (const dblock::error& x) {
      auto e = ev(op, "lead_write", "fail");
      e["error"] = to_string(x.kind());
      e["what"] = x.what();
      h_.append(e);
      last_op_failed_ = true;
    }
  }

  // An unfenced action: a side effect that carries no token, so nothing downstream can
  // refuse a stale one (a message sent, a file written elsewhere). It happens at `at` and
  // only while the promise holds: a correct client checks is_held() right before acting,
  // and a pause between that check and this instant must not make it act late. The
  // checker holds every action to the next grant of the lock (late_unfenced_action).
  // `checked` false: the planted bug, acting whatever the lease says.
  void act(const std::string& name, std::int64_t fence, std::int64_t until, bool checked) {
    const std::int64_t at = mono_ns();
    if (checked && at >= until) return;
    h_.append({{"ev", "act"}, {"w", cfg_.id}, {"t", t_}, {"lock", name}, {"fence", fence}, {"m", at}, {"until", until}});
  }

  void write(lease& l, const std::string& name, std::int64_t li, std::int64_t fence, std::int64_t until,
             const std::string& mode) {
    const std::int64_t op = ++next_op_;
    const std::string id = op_id(op);
    const std::int64_t res = li * 2 + (mode == "verified" ? 1 : 0);
    auto inv = ev(op, "write", "invoke");
    inv["lock"] = name;
    inv["fence"] = fence;
    inv["mode"] = mode;
    inv["res"] = res;
    inv["until"] = until;
    h_.append(inv);
    bool accepted = false;
    try {
      transact(*db_, [&](transaction_ref tx) {
        const auto& b = detail::backend_of(tx);
        if (mode == "verified") {
          l.verify_in(tx);  // throws lock_lost unless still ours, unexpired, same fence
          sql(b, "UPDATE fw_resource SET value = $1, fence = $2 WHERE id = $3", {id, fence, res});
          accepted = true;
        } else if (mode == "fenced") {
          auto r = sql(b, "UPDATE fw_resource SET value = $1, fence = $2 WHERE id = $3 AND fence <= $2", {id, fence, res});
          accepted = r.affected == 1;
        } else {  // planted bug: no fence condition
          sql(b, "UPDATE fw_resource SET value = $1, fence = $2 WHERE id = $3", {id, fence, res});
          accepted = true;
        }
        if (accepted)
          sql(b, "INSERT INTO fw_log (resource, fence, op, kind) VALUES ($1, $2, $3, $4)", {res, fence, id, mode});
      });
      auto e = ev(op, "write", "ok");
      e["accepted"] = accepted;
      h_.append(e);
    } catch (const lock_lost& x) {
      auto e = ev(op, "write", "ok");  // refused by verify_in: rolled back, a definite outcome
      e["accepted"] = false;
      e["reason"] = "lock_lost";
      h_.append(e);
    } catch (const commit_unknown& x) {
      auto e = ev(op, "write", "info");
      e["error"] = "commit_unknown";
      e["what"] = x.what();
      h_.append(e);
      last_op_failed_ = true;
    } catch (const dblock::error& x) {
      // Failed before COMMIT: the server rolled the transaction back.
      auto e = ev(op, "write", "fail");
      e["error"] = to_string(x.kind());
      e["what"] = x.what();
      h_.append(e);
      last_op_failed_ = true;
    }
  }

  // ---------------------------------------------------------------- charges
  void charge() {
#if DBLOCK_FAULTS_IDEMPOTENCY
    last_op_failed_ = false;
    // Keys come in generations shared by every process (CLOCK_MONOTONIC is one clock
    // per machine): fresh keys keep arriving and are charged concurrently.
    // A client retries a request it got no answer for (in progress elsewhere, error,
    // unknown outcome) with the same key, a little later.
    std::string key;
    if (!pending_.empty() && pending_.front().second <= mono_ns()) {
      key = pending_.front().first;
      pending_.pop_front();
    } else {
      const std::int64_t gen = mono_ns() / (static_cast<std::int64_t>(cfg_.key_period_ms) * 1'000'000);
      key = "k" + std::to_string(gen) + "-" + std::to_string(below(cfg_.keys_per_period));
    }
    auto retry_later = [&](std::int64_t after_ms) {
      if (pending_.size() < 32) pending_.emplace_back(key, mono_ns() + after_ms * 1'000'000);
    };
    const std::string amount = std::to_string(std::hash<std::string>{}(key) % 10000);
    const std::string fp = fingerprint_fields({{"key", key}, {"amount", amount}});
    const std::int64_t op = ++next_op_;
    const std::string id = op_id(op);
    auto inv = ev(op, "charge", "invoke");
    inv["key"] = key;
    h_.append(inv);
    try {
      std::string outcome, body;
      std::int64_t attempt = 0;
      if (cfg_.bug == "idem-no-tx") {
        auto r = store_->begin("charges", key, fp);
        outcome = to_string(r.outcome);
        attempt = r.attempt.number;
        if (r.started()) {
          if (uniform() < cfg_.pause_prob) sleep_ms(cfg_.idem_lease_ms * 8 / 5);
          // Planted bug: the side effect commits on its own, apart from the record.
          transact(*db_, [&](transaction_ref tx) {
            sql(detail::backend_of(tx), "INSERT INTO idem_charges (idem_key, charge_id, op) VALUES ($1, $2, $3)", {key, id, id});
          });
          (void)store_->complete(r.attempt, {201, id});
          body = id;
        } else if (r.outcome == idempotency_outcome::replay) {
          body = r.response.body;
        }
      } else {
        run_once_result r;
        transact(*db_, [&](transaction_ref tx) {
          r = store_->run_once(tx, "charges", key, fp, [&](transaction_ref t2) {
            sql(detail::backend_of(t2), "INSERT INTO idem_charges (idem_key, charge_id, op) VALUES ($1, $2, $3)", {key, id, id});
            return idempotent_response{201, id};
          });
        });
        outcome = to_string(r.outcome);
        attempt = r.attempt;
        if (r.outcome == idempotency_outcome::started || r.outcome == idempotency_outcome::replay) body = r.response.body;
      }
      if (outcome == "in_progress") retry_later(100 + below(200));
      auto e = ev(op, "charge", "ok");
      e["key"] = key;
      e["outcome"] = outcome;
      e["attempt"] = attempt;
      if (!body.empty()) e["body"] = body;
      h_.append(e);
    } catch (const commit_unknown& x) {
      auto e = ev(op, "charge", "info");
      e["error"] = "commit_unknown";
      e["what"] = x.what();
      h_.append(e);
      last_op_failed_ = true;
      retry_later(100 + below(200));
    } catch (const dblock::error& x) {
      // run_once: rolled back before COMMIT (definite). begin()/complete() on their own
      // (planted-bug mode) commit statement by statement: unknown.
      auto e = ev(op, "charge", cfg_.bug == "idem-no-tx" ? "info" : "fail");
      e["error"] = to_string(x.kind());
      e["what"] = x.what();
      h_.append(e);
      last_op_failed_ = true;
      retry_later(100 + below(200));
    }
#endif
  }

  const worker_config& cfg_;
  int t_;
  history_writer& h_;
  std::mt19937_64 rng_;
  std::int64_t next_op_ = 0;
  bool last_op_failed_ = false;
  std::deque<std::pair<std::string, std::int64_t>> pending_;  // charge keys to retry, ready at (mono ns)
  std::optional<database> db_;
  std::unique_ptr<session> session_;
#if DBLOCK_FAULTS_IDEMPOTENCY
  std::unique_ptr<idempotency_store> store_;
#endif
};

int worker_main(const worker_config& cfg) {
  // Die with the driver; stop cleanly on SIGTERM.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  struct sigaction sa{};
  sa.sa_handler = on_stop_signal;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  history_writer h(cfg.history);
  h.append({{"ev", "start"}, {"w", cfg.id}, {"pid", ::getpid()}, {"threads", cfg.threads},
            {"faketime", std::getenv("LD_PRELOAD") != nullptr}});
  std::vector<std::thread> ts;
  for (int t = 0; t < cfg.threads; ++t)
    ts.emplace_back([&cfg, &h, t] {
      worker_thread w(cfg, t, h);
      w.run();
    });
  for (auto& t : ts) t.join();
  h.append({{"ev", "stop"}, {"w", cfg.id}});
  return 0;
}

// ====================================================================== driver

struct run_config {
  std::string url;
  fs::path dir;
  int workers = 3;
  double duration_s = 10;
  std::int64_t ops = 0;  // stop after this many operations (0: duration only)
  std::vector<std::string> faults;
  int fault_interval_ms = 1500;
  std::vector<std::string> worker_urls;  // slot i connects to worker_urls[i % n] (same database)
  int kill_node = 3;        // node-kill: the Galera node to kill
  int failover_lag_ms = 0;  // failover: the standby stops receiving WAL this long before
  std::string servers_dir;
  std::string servers_script = DBLOCK_SERVERS_SCRIPT;
  std::string relay_program = DBLOCK_RELAY;
  bool keep_db = false;
  std::string summary;
  worker_config w;
};

struct slot {
  int index = 0;
  int incarnation = 0;
  pid_t pid = -1;
  bool paused = false;
};

class driver {
 public:
  explicit driver(run_config c) : cfg_(std::move(c)), rng_(cfg_.w.seed) {}

  int run() {
    fs::create_directories(cfg_.dir / "history");
    fs::create_directories(cfg_.dir / "logs");
    faults_ = std::make_unique<history_writer>(cfg_.dir / "faults.jsonl");
    prepare_database();
    for (const auto& f : cfg_.faults)
      if (f == "clock") clock_fault_ = true;
    if (clock_fault_) {
      faketime_ = faketime_lib();
      if (faketime_.empty())
        throw std::runtime_error("the clock fault needs libfaketime (/usr/lib/<arch>/faketime/libfaketimeMT.so.1): "
                                 "apt-get install faketime (scripts/lib/deps.sh installs it)");
      fs::create_directories(cfg_.dir / "clock");
    }
    slots_.resize(static_cast<std::size_t>(cfg_.workers));
    if (std::any_of(cfg_.faults.begin(), cfg_.faults.end(), is_partition)) start_relays();
    for (int i = 0; i < cfg_.workers; ++i) {
      slots_[static_cast<std::size_t>(i)].index = i;
      if (clock_fault_) write_clock(i, 0);
      spawn(slots_[static_cast<std::size_t>(i)]);
    }
    const auto start = mono_ns();
    const std::int64_t end = cfg_.duration_s > 0 ? start + static_cast<std::int64_t>(cfg_.duration_s * 1e9) : 0;
    std::int64_t next_fault = start + 700'000'000 + jitter_ns();
    std::int64_t next_count = start;
    std::int64_t ops = 0;
    for (;;) {
      reap_unexpected();
      const auto now = mono_ns();
      if (now >= next_count) {
        ops = count_ops();
        next_count = now + 250'000'000;
      }
      if (cfg_.ops > 0 && ops >= cfg_.ops) break;
      if (end > 0 && now >= end) break;
      if (!cfg_.faults.empty() && now >= next_fault) {
        inject(cfg_.faults[static_cast<std::size_t>(below(static_cast<std::int64_t>(cfg_.faults.size())))]);
        next_fault = mono_ns() + jitter_ns();
      }
      sleep_ms(20);
    }
    const double elapsed = static_cast<double>(mono_ns() - start) / 1e9;
    stop_workers();
    // A clock left jumped would only matter to workers, which are gone; reset anyway.
    json fin = read_final_state();
    {
      std::ofstream out(cfg_.dir / "final.json");
      out << fin.dump();
    }
    auto report = check_run_dir(cfg_.dir);
    json summary = report.to_json();
    summary["database"] = to_string(dialect_);
    summary["elapsed_s"] = elapsed;
    summary["ops_per_s"] = elapsed > 0 ? static_cast<double>(report.stats.value("operations", 0)) / elapsed : 0.0;
    summary["faults_requested"] = cfg_.faults;
    summary["bug"] = cfg_.w.bug;
    summary["worker_restarts"] = restarts_;
    summary["worker_unexpected_exits"] = unexpected_;
    summary["worker_errors"] = count_worker_errors();
    summary["idempotency"] = DBLOCK_FAULTS_IDEMPOTENCY == 1;
    const auto summary_path = cfg_.summary.empty() ? cfg_.dir / "summary.json" : fs::path(cfg_.summary);
    {
      std::ofstream out(summary_path);
      out << summary.dump(2) << "\n";
    }
    std::cout << "dblock_workload: " << to_string(dialect_) << ", " << elapsed << " s, bug " << cfg_.w.bug << "\n"
              << format_report(report) << "worker restarts " << restarts_ << ", unexpected worker exits "
              << unexpected_ << "\n";
    drop_database();
    return report.violation_total() == 0 && unexpected_ == 0 ? 0 : 1;
  }

  ~driver() {
    for (auto& s : slots_)
      if (s.pid > 0) {
        ::kill(s.pid, SIGKILL);
        ::waitpid(s.pid, nullptr, 0);
      }
  }

 private:
  std::int64_t below(std::int64_t n) { return std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng_); }
  std::int64_t jitter_ns() {
    return static_cast<std::int64_t>(cfg_.fault_interval_ms) * 1'000'000 / 2 +
           below(static_cast<std::int64_t>(cfg_.fault_interval_ms) * 1'000'000 + 1);
  }

  void record(json e) {
    e["ev"] = "fault";
    faults_->append(std::move(e));
  }

  // ---------------------------------------------------------------- database
  void prepare_database() {
    auto u = parse_url(cfg_.url);
    dialect_ = u.kind;
    if (u.kind == dialect::sqlite) {
      run_url_ = "sqlite://" + fs::absolute(cfg_.dir / "workload.db").string();
    } else {
      const std::string plain = u.client == client_library::soci ? cfg_.url.substr(5) : cfg_.url;  // "soci+"
      server_url_ = plain;
      db_name_ = test::create_database(plain, u.kind);
      run_url_ = (u.client == client_library::soci ? "soci+" : "") + test::with_database(plain, db_name_);
      for (const auto& w : cfg_.worker_urls) {
        const bool soci = w.rfind("soci+", 0) == 0;
        worker_run_urls_.push_back((soci ? "soci+" : "") + test::with_database(soci ? w.substr(5) : w, db_name_));
      }
    }
    auto db = dblock::open(run_url_);
    db.migrate();
    const bool pg = dialect_ == dialect::postgresql, my = dialect_ == dialect::mysql || dialect_ == dialect::mysql8;
    const std::string serial = pg ? "bigserial PRIMARY KEY" : my ? "BIGINT AUTO_INCREMENT PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT";
    const std::string text = my ? "VARCHAR(200)" : "TEXT";
    auto& b = detail::backend_of(db);
    b->run_script("CREATE TABLE fw_resource (id BIGINT PRIMARY KEY, value " + text +
                  " NOT NULL, fence BIGINT NOT NULL)");
    b->run_script("CREATE TABLE fw_log (seq " + serial + ", resource BIGINT NOT NULL, fence BIGINT NOT NULL, op " +
                  text + " NOT NULL, kind " + text + " NOT NULL)");
    b->run_script("CREATE TABLE el_resource (id BIGINT PRIMARY KEY, value " + text + " NOT NULL, fence BIGINT NOT NULL)");
    b->run_script("CREATE TABLE el_log (seq " + serial + ", election BIGINT NOT NULL, fence BIGINT NOT NULL, op " +
                  text + " NOT NULL)");
    b->run_script("INSERT INTO el_resource (id, value, fence) VALUES (0, '', 0)");
    b->run_script("CREATE TABLE idem_charges (id " + serial + ", idem_key " + text + " NOT NULL, charge_id " + text +
                  " NOT NULL, op " + text + " NOT NULL)");
    for (int i = 0; i < cfg_.w.locks * 2; ++i)
      b->run_script("INSERT INTO fw_resource (id, value, fence) VALUES (" + std::to_string(i) + ", '', 0)");
    cfg_.w.url = run_url_;
  }

  void drop_database() {
    if (cfg_.keep_db || db_name_.empty()) return;
    test::drop_database(server_url_, dialect_, db_name_);
  }

  // Opens the run's database, retrying while a restarted server comes back.
  database open_retrying(std::chrono::seconds patience = 60s) {
    const auto until = std::chrono::steady_clock::now() + patience;
    for (;;) {
      try {
        return dblock::open(run_url_);
      } catch (const dblock::error&) {
        if (std::chrono::steady_clock::now() >= until) throw;
        sleep_ms(200);
      }
    }
  }

  json read_final_state() {
    json fin;
    auto db = open_retrying();
    auto b = detail::backend_of(db);
    auto rows = [&](const std::string& q) { return sql(b, q).rows; };
    json log = json::array(), res = json::array(), charges = json::array();
    for (auto& r : rows("SELECT seq, resource, fence, op, kind FROM fw_log ORDER BY seq"))
      log.push_back({to_i64(r[0]), to_i64(r[1]), to_i64(r[2]), r[3].value_or(""), r[4].value_or("")});
    for (auto& r : rows("SELECT id, value, fence FROM fw_resource ORDER BY id"))
      res.push_back({to_i64(r[0]), r[1].value_or(""), to_i64(r[2])});
    for (auto& r : rows("SELECT id, idem_key, charge_id, op FROM idem_charges ORDER BY id"))
      charges.push_back({to_i64(r[0]), r[1].value_or(""), r[2].value_or(""), r[3].value_or("")});
    json leader_log = json::array();
    for (auto& r : rows("SELECT seq, election, fence, op FROM el_log ORDER BY seq"))
      leader_log.push_back({to_i64(r[0]), to_i64(r[1]), to_i64(r[2]), r[3].value_or("")});
    fin["leader_log"] = leader_log;
    fin["log"] = log;
    fin["resources"] = res;
    fin["charges"] = charges;
#if DBLOCK_FAULTS_IDEMPOTENCY
    idempotency_store store(db);
    idempotency_filter f;
    f.scope = "charges";
    f.include_expired = true;
    f.limit = 100000;
    json recs = json::array();
    for (const auto& r : store.list(f)) {
      auto full = store.get("charges", r.key, true);
      if (!full) continue;
      recs.push_back({{"key", full->key},
                      {"status", to_string(full->status)},
                      {"attempt", full->attempt},
                      {"code", full->response_code.value_or(0)},
                      {"body", full->response_body.value_or("")}});
    }
    fin["records"] = recs;
#endif
    fin["complete"] = true;
    return fin;
  }

  // ---------------------------------------------------------------- workers
  void spawn(slot& s) {
    ++s.incarnation;
    const std::string id = "w" + std::to_string(s.index) + "." + std::to_string(s.incarnation);
    const auto& w = cfg_.w;
    // Through the slot's relay when partitions are injected: a cut is per worker.
    const std::string& own = worker_run_urls_.empty()
                                 ? run_url_
                                 : worker_run_urls_[static_cast<std::size_t>(s.index) % worker_run_urls_.size()];
    const std::string url = relays_.empty() ? own : relays_[static_cast<std::size_t>(s.index)]->url_through(own);
    std::vector<std::string> args = {
        "/proc/self/exe", "worker", "--url", url,
        "--history", (cfg_.dir / "history" / (id + ".jsonl")).string(),
        "--id", id, "--threads", std::to_string(w.threads), "--locks", std::to_string(w.locks),
        "--ttl-ms", std::to_string(w.ttl_ms), "--lock-delay-ms", std::to_string(w.lock_delay_ms),
        "--wait-ms", std::to_string(w.wait_ms),
        "--cs-sleep-ms", std::to_string(w.cs_sleep_ms), "--lock-share", std::to_string(w.lock_share),
        "--family-share", std::to_string(w.family_share), "--permits", std::to_string(w.permits),
        "--elect-share", std::to_string(w.elect_share),
        "--idem-lease-ms", std::to_string(w.idem_lease_ms), "--key-period-ms", std::to_string(w.key_period_ms),
        "--keys-per-period", std::to_string(w.keys_per_period), "--pause-prob", std::to_string(w.pause_prob),
        "--bug", w.bug, "--seed", std::to_string(w.seed * 131 + static_cast<std::uint64_t>(s.index) * 17 + static_cast<std::uint64_t>(s.incarnation))};
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
    if (clock_fault_) {
      env.push_back("LD_PRELOAD=" + faketime_);
      env.push_back("FAKETIME_TIMESTAMP_FILE=" + clock_file(s.index).string());
      env.push_back("FAKETIME_CACHE_DURATION=1");
      env.push_back("FAKETIME_DONT_FAKE_MONOTONIC=1");
      env.push_back("DONT_FAKE_MONOTONIC=1");
    }
    const std::string log = (cfg_.dir / "logs" / (id + ".log")).string();
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      ::execve("/proc/self/exe", argv.data(), envp.data());
      ::_exit(127);
    }
    s.pid = pid;
    s.paused = false;
  }

  // A worker that exited without being told to (crash, uncaught exception): recorded,
  // counted (the run fails) and replaced.
  void reap_unexpected() {
    for (auto& s : slots_) {
      if (s.pid <= 0) continue;
      int st = 0;
      if (::waitpid(s.pid, &st, WNOHANG) == s.pid) {
        ++unexpected_;
        faults_->append({{"ev", "worker_exit"}, {"slot", s.index}, {"incarnation", s.incarnation},
                         {"status", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st)}});
        std::cerr << "dblock_workload: worker w" << s.index << "." << s.incarnation << " exited on its own (status "
                  << (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st)) << "); see logs/\n";
        s.pid = -1;
        spawn(s);
      }
    }
  }

  void stop_workers() {
    // A worker blocked behind a cut network must see it again to stop cleanly.
    for (auto& r : relays_) {
      try {
        r->resume();
      } catch (const std::exception& e) {
        std::cerr << "dblock_workload: relay resume failed: " << e.what() << "\n";
      }
    }
    for (auto& s : slots_)
      if (s.pid > 0) {
        if (s.paused) ::kill(s.pid, SIGCONT);
        ::kill(s.pid, SIGTERM);
      }
    // A worker thread blocked in a statement (a lock wait on the server, a cluster that
    // stalls its commits while it drops a dead node) gives up after its connection's
    // network timeout: workers open with the default, so they get that long and 10 s more.
    const auto patience = std::chrono::duration_cast<std::chrono::nanoseconds>(open_options{}.network_timeout) + 10s;
    const auto start = mono_ns();
    const auto until = start + patience.count();
    const auto explain_at = start + std::chrono::nanoseconds(10s).count();
    for (auto& s : slots_) {
      bool explained = false;
      while (s.pid > 0) {
        int st = 0;
        pid_t r = ::waitpid(s.pid, &st, WNOHANG);
        if (r == s.pid) {
          // A worker restarted just before the stop can get SIGTERM before it installs
          // its handler: dying of that SIGTERM is the stop it was asked for (the checker
          // treats its unfinished operations as unknown, like a kill).
          const bool stopped_by_us = WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM;
          if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && !stopped_by_us) {
            ++unexpected_;
            std::cerr << "dblock_workload: worker w" << s.index << "." << s.incarnation << " ended with status "
                      << (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st)) << " when stopped\n";
          }
          s.pid = -1;
          break;
        }
        if (!explained && mono_ns() >= explain_at) {
          // Slow but maybe not stuck: where it is now says what it waits for.
          std::cerr << "dblock_workload: worker w" << s.index << "." << s.incarnation
                    << " still running 10 s after SIGTERM\n";
          explain_stuck(s);
          explained = true;
        }
        if (mono_ns() >= until) {
          std::cerr << "dblock_workload: worker w" << s.index << "." << s.incarnation
                    << " did not stop within " << std::chrono::duration_cast<std::chrono::seconds>(patience).count()
                    << " s; killing it\n";
          explain_stuck(s);
          ::kill(s.pid, SIGKILL);
          ::waitpid(s.pid, nullptr, 0);
          ++unexpected_;
          s.pid = -1;
          break;
        }
        sleep_ms(10);
      }
    }
  }

  // Why a worker did not stop: where each of its threads sleeps in the kernel, its last
  // history events, and what the database servers are running (the run folder is often
  // deleted with the test that ran it, so this goes to stderr).
  void explain_stuck(const slot& s) {
    const std::string id = "w" + std::to_string(s.index) + "." + std::to_string(s.incarnation);
    const fs::path tasks = fs::path("/proc") / std::to_string(s.pid) / "task";
    std::error_code ec;
    for (const auto& t : fs::directory_iterator(tasks, ec)) {
      auto first_line = [&](const char* f) {
        std::ifstream in(t.path() / f);
        std::string line;
        std::getline(in, line);
        return line;
      };
      // x86-64 numbers of the calls a worker blocks in; others print as numbers.
      static const std::map<std::string, std::string> names = {
          {"0", "read"},      {"7", "poll"},   {"23", "select"}, {"35", "nanosleep"}, {"45", "recvfrom"},
          {"202", "futex"},   {"230", "clock_nanosleep"},        {"232", "epoll_wait"}, {"271", "ppoll"}};
      const std::string call = first_line("syscall");
      const auto nr = call.substr(0, call.find(' '));
      const auto known = names.find(nr);
      std::cerr << "  thread " << t.path().filename().string() << ": in " << (known != names.end() ? known->second : nr)
                << " (wchan " << first_line("wchan") << ")\n";
    }
    std::vector<std::string> lines;
    std::ifstream h(cfg_.dir / "history" / (id + ".jsonl"));
    for (std::string line; std::getline(h, line);) lines.push_back(line);
    std::cerr << "  last history events of " << id << ":\n";
    for (std::size_t i = lines.size() > 8 ? lines.size() - 8 : 0; i < lines.size(); ++i)
      std::cerr << "    " << lines[i] << "\n";
    const bool pg = dialect_ == dialect::postgresql;
    if (!pg && dialect_ != dialect::mysql && dialect_ != dialect::mysql8) return;
    const std::string q = pg ? "SELECT pid, now() - query_start, state, wait_event_type, wait_event, left(query, 160) "
                               "FROM pg_stat_activity WHERE state <> 'idle' AND pid <> pg_backend_pid()"
                             : "SELECT ID, TIME, COMMAND, STATE, LEFT(INFO, 160) FROM information_schema.PROCESSLIST "
                               "WHERE COMMAND <> 'Sleep' AND ID <> CONNECTION_ID()";
    std::vector<std::string> urls = worker_run_urls_.empty() ? std::vector<std::string>{run_url_} : worker_run_urls_;
    for (const auto& u : urls) {
      try {
        open_options o;
        o.connect_timeout = std::chrono::seconds(2);
        o.network_timeout = std::chrono::seconds(5);
        auto db = dblock::open(u, o);
        std::cerr << "  busy server sessions at " << detail::backend_of(db)->describe() << ":\n";
        for (const auto& r : sql(detail::backend_of(db), q).rows) {
          std::cerr << "   ";
          for (const auto& c : r) std::cerr << " | " << c.value_or("NULL");
          std::cerr << "\n";
        }
      } catch (const std::exception& e) {
        std::cerr << "  (cannot list the sessions at a worker URL: " << e.what() << ")\n";
      }
    }
  }

  std::int64_t count_ops() {
    // Counts invocations in the histories incrementally (new bytes only).
    static const std::string needle = "\"ev\":\"invoke\"";
    for (const auto& de : fs::directory_iterator(cfg_.dir / "history")) {
      auto& st = scan_[de.path().string()];
      std::ifstream in(de.path(), std::ios::binary);
      in.seekg(static_cast<std::streamoff>(st.first));
      std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      // Only complete lines: a line being written stays for the next scan.
      auto last_nl = chunk.rfind('\n');
      if (last_nl == std::string::npos) continue;
      chunk.resize(last_nl + 1);
      for (auto p = chunk.find(needle); p != std::string::npos; p = chunk.find(needle, p + 1)) ++st.second;
      st.first += chunk.size();
    }
    std::int64_t n = 0;
    for (auto& [k, v] : scan_) n += v.second;
    return n;
  }

  std::size_t count_worker_errors() {
    std::size_t n = 0;
    for (const auto& de : fs::directory_iterator(cfg_.dir / "history"))
      for (const auto& e : read_jsonl(de.path()))
        if (e.value("ev", "") == "error") ++n;
    return n;
  }

  // ---------------------------------------------------------------- faults
  fs::path clock_file(int index) const { return cfg_.dir / "clock" / ("w" + std::to_string(index) + ".rc"); }
  void write_clock(int index, std::int64_t offset_s) {
    const auto p = clock_file(index);
    const auto tmp = p.string() + ".tmp";
    {
      std::ofstream out(tmp);
      out << (offset_s >= 0 ? "+" : "") << offset_s << "\n";
    }
    fs::rename(tmp, p);
  }

  slot& random_live_slot() {
    for (;;) {
      auto& s = slots_[static_cast<std::size_t>(below(static_cast<std::int64_t>(slots_.size())))];
      if (s.pid > 0) return s;
    }
  }

  void inject(const std::string& kind) {
    if (kind == "kill") {
      auto& s = random_live_slot();
      ::kill(s.pid, SIGKILL);
      ::waitpid(s.pid, nullptr, 0);
      record({{"kind", "kill"}, {"worker", "w" + std::to_string(s.index) + "." + std::to_string(s.incarnation)}});
      s.pid = -1;
      ++restarts_;
      spawn(s);
    } else if (kind == "pause") {
      // Mostly a worker that holds a lock right now: the interesting pause.
      auto& s = below(4) < 3 ? holder_slot() : random_live_slot();
      const std::int64_t ms = cfg_.w.ttl_ms * 3 / 2 + below(cfg_.w.ttl_ms + 1);
      ::kill(s.pid, SIGSTOP);
      s.paused = true;
      record({{"kind", "pause"}, {"worker", "w" + std::to_string(s.index) + "." + std::to_string(s.incarnation)},
              {"ms", ms}});
      sleep_ms(ms);
      ::kill(s.pid, SIGCONT);
      s.paused = false;
    } else if (kind == "connkill") {
      kill_connection();
    } else if (kind == "restart") {
      restart_server();
    } else if (kind == "failover") {
      failover();
    } else if (kind == "node-kill") {
      kill_node();
    } else if (is_partition(kind)) {
      partition(kind);
    } else if (kind == "clock") {
      static const std::int64_t offsets[] = {-86400, -7200, -600, -90, 90, 600, 7200, 86400, 0};
      const int index = static_cast<int>(below(static_cast<std::int64_t>(slots_.size())));
      std::int64_t off = 0;
      do off = offsets[below(static_cast<std::int64_t>(std::size(offsets)))];
      while (off == clock_offsets_[index]);  // always a jump
      clock_offsets_[index] = off;
      write_clock(index, off);
      record({{"kind", "clock"}, {"slot", index}, {"offset_s", off}});
    } else {
      throw std::runtime_error("unknown fault kind '" + kind + "'");
    }
  }

  // ---------------------------------------------------------------- partitions
  static bool is_partition(const std::string& kind) {
    return kind == "partition" || kind == "reply-loss" || kind == "partition-all";
  }

  void start_relays() {
    if (dialect_ == dialect::sqlite) throw std::runtime_error("partition faults: SQLite has no network to cut");
    if (cfg_.relay_program.empty() || !fs::exists(cfg_.relay_program))
      throw std::runtime_error("partition faults need dblock_test_relay (--relay PATH)");
    const std::string plain = run_url_.rfind("soci+", 0) == 0 ? run_url_.substr(5) : run_url_;
    for (std::size_t i = 0; i < slots_.size(); ++i)
      relays_.push_back(std::make_unique<test::relay>(test::relay::target_of(plain), cfg_.relay_program));
  }

  void partition(const std::string& kind) {
    const std::int64_t ttl = cfg_.w.ttl_ms;
    if (kind == "partition-all") {
      // The server cut off from every client at once, for about a TTL: nobody can renew,
      // nobody can take over; afterwards every lease has run out at once.
      const std::int64_t ms = ttl / 2 + below(ttl * 3 / 2 + 1);
      int connections = 0;
      for (auto& r : relays_) connections += r->connections();
      for (auto& r : relays_) r->pause();
      record({{"kind", kind}, {"ms", ms}, {"connections", connections}});
      sleep_ms(ms);
      for (auto& r : relays_) r->resume();
      return;
    }
    // Mostly a worker that holds a lock right now, as for pause.
    auto& s = below(4) < 3 ? holder_slot() : random_live_slot();
    auto& r = *relays_[static_cast<std::size_t>(s.index)];
    const std::string who = "w" + std::to_string(s.index) + "." + std::to_string(s.incarnation);
    const int connections = r.connections();
    if (connections == 0) {
      // Nothing to cut (the worker is between connections): not injected.
      faults_->append({{"ev", "fault_skipped"}, {"kind", kind}, {"worker", who}, {"what", "no connection"}});
      return;
    }
    if (kind == "partition") {
      // Silent for longer than the TTL plus the default lock delay (1 s), so that another
      // worker can take the cut-off holder's lock over while it is still cut off.
      const std::int64_t ms = ttl * 3 / 2 + below(ttl + 1) + 1000;
      r.pause();
      record({{"kind", kind}, {"worker", who}, {"ms", ms}, {"connections", connections}});
      sleep_ms(ms);
      r.resume();
    } else {
      // Statements (COMMITs, renewals) reach the server and are applied, their answers
      // are held; then either the connections die (the answers are lost for good) or the
      // answers arrive late.
      const std::int64_t ms = ttl * 3 / 10 + below(ttl * 6 / 5 + 1);
      const bool drop = below(3) < 2;  // mostly lost for good: commit_unknown
      r.pause_replies();
      record({{"kind", kind}, {"worker", who}, {"ms", ms}, {"connections", connections},
              {"then", drop ? "drop" : "resume"}});
      sleep_ms(ms);
      if (drop) r.drop();
      r.resume();
    }
  }

  // A live worker that currently holds a lock (by the lock table's holder text
  // "w<slot>.<incarnation>/<thread>"), or any live worker.
  slot& holder_slot() {
    try {
      auto db = open_retrying(5s);
      std::vector<slot*> candidates;
      for (const auto& info : list_locks(db)) {
        if (info.expires_in.count() <= 0) continue;  // expired: not held any more
        const std::string& h = info.holder;
        for (auto& s : slots_)
          if (s.pid > 0 && h.rfind("w" + std::to_string(s.index) + "." + std::to_string(s.incarnation) + "/", 0) == 0)
            candidates.push_back(&s);
      }
      if (!candidates.empty()) return *candidates[static_cast<std::size_t>(below(static_cast<std::int64_t>(candidates.size())))];
    } catch (const dblock::error&) {
    }
    return random_live_slot();
  }

  void kill_connection() {
    if (dialect_ == dialect::sqlite) throw std::runtime_error("connkill: SQLite has no server connections");
    try {
      auto db = open_retrying(10s);
      auto b = detail::backend_of(db);
      std::vector<std::int64_t> ids;
      if (dialect_ == dialect::postgresql) {
        for (auto& r : sql(b, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> "
                              "pg_backend_pid() AND backend_type = 'client backend'").rows)
          ids.push_back(to_i64(r[0]));
      } else {
        for (auto& r : sql(b, "SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND id <> "
                              "CONNECTION_ID() AND command <> 'Daemon'").rows)
          ids.push_back(to_i64(r[0]));
      }
      if (ids.empty()) return;
      // Each connection of the workload (a worker's own, its session's watchdog and
      // LISTEN connections) is killed with probability 1/3; at least one.
      std::vector<std::int64_t> victims;
      for (auto id : ids)
        if (below(3) == 0) victims.push_back(id);
      if (victims.empty()) victims.push_back(ids[static_cast<std::size_t>(below(static_cast<std::int64_t>(ids.size())))]);
      std::size_t killed = 0;
      for (auto victim : victims) {
        try {
          if (dialect_ == dialect::postgresql) sql(b, "SELECT pg_terminate_backend($1)", {victim});
          else b->run_script("KILL CONNECTION " + std::to_string(victim));
          ++killed;
        } catch (const dblock::error&) {
          // Gone by itself meanwhile (KILL of an unknown id).
        }
      }
      if (killed > 0) record({{"kind", "connkill"}, {"connections", killed}, {"of", ids.size()}});
    } catch (const dblock::error& e) {
      // The victim may have gone by itself meanwhile (KILL of an unknown id): not injected.
      faults_->append({{"ev", "fault_skipped"}, {"kind", "connkill"}, {"what", e.what()}});
    }
  }

  // The primary crashes and its standby is promoted (scripts/servers failover-pg): once per
  // run, as the pair then has no standby left. Workers reach the new primary through the
  // multi-host URL they were given.
  void failover() {
    if (failovers_ > 0) return;
    if (cfg_.servers_dir.empty()) throw std::runtime_error("the failover fault needs --servers-dir (a primary + standby pair)");
    ++failovers_;
    if (cfg_.failover_lag_ms > 0) {
      // Asynchronous replication falling behind: what the primary grants from here on is
      // lost with it.
      run_servers_script("detach-pg-standby");
      record({{"kind", "standby-detached"}, {"lag_ms", cfg_.failover_lag_ms}});
      sleep_ms(cfg_.failover_lag_ms);
    }
    const auto t0 = mono_ns();
    run_servers_script("failover-pg");
    record({{"kind", "failover"}, {"how", "failover-pg"}, {"m", t0}, {"took_ms", (mono_ns() - t0) / 1'000'000}});
  }

  // One node of a Galera cluster dies (SIGKILL), once per run: the other two keep quorum.
  void kill_node() {
    if (node_kills_ > 0) return;
    if (cfg_.servers_dir.empty()) throw std::runtime_error("the node-kill fault needs --servers-dir (a Galera cluster)");
    ++node_kills_;
    const auto t0 = mono_ns();
    run_servers_script("kill-galera-node", std::to_string(cfg_.kill_node));
    record({{"kind", "node-kill"}, {"node", cfg_.kill_node}, {"m", t0}, {"took_ms", (mono_ns() - t0) / 1'000'000}});
  }

  void run_servers_script(const std::string& what, const std::string& arg = {}) {
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open((cfg_.dir / "logs" / "servers.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      if (arg.empty())
        ::execl("/bin/bash", "bash", cfg_.servers_script.c_str(), what.c_str(), cfg_.servers_dir.c_str(),
                static_cast<char*>(nullptr));
      else
        ::execl("/bin/bash", "bash", cfg_.servers_script.c_str(), what.c_str(), cfg_.servers_dir.c_str(), arg.c_str(),
                static_cast<char*>(nullptr));
      ::_exit(127);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      throw std::runtime_error("scripts/servers " + what + " failed (see " + (cfg_.dir / "logs" / "servers.log").string() + ")");
  }

  void restart_server() {
    if (dialect_ == dialect::sqlite) {
      // No server: the closest thing is every client process dying at the same instant
      // (mid-transaction, mid-commit), then all of them starting again.
      for (auto& s : slots_)
        if (s.pid > 0) ::kill(s.pid, SIGKILL);
      for (auto& s : slots_)
        if (s.pid > 0) {
          ::waitpid(s.pid, nullptr, 0);
          s.pid = -1;
        }
      record({{"kind", "restart"}, {"how", "sigkill-all-workers"}});
      for (auto& s : slots_) {
        ++restarts_;
        spawn(s);
      }
      return;
    }
    if (cfg_.servers_dir.empty()) throw std::runtime_error("the restart fault needs --servers-dir (DBLOCK_TEST_SERVERS_DIR)");
    const bool crash = (restart_count_++ % 2) == 1;
    const std::string what = std::string(crash ? "crash-restart-" : "restart-") + (dialect_ == dialect::postgresql ? "pg" : "mysql");
    const auto t0 = mono_ns();
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open((cfg_.dir / "logs" / "servers.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      ::execl("/bin/bash", "bash", cfg_.servers_script.c_str(), what.c_str(), cfg_.servers_dir.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      throw std::runtime_error("scripts/servers " + what + " failed (see " + (cfg_.dir / "logs" / "servers.log").string() + ")");
    record({{"kind", "restart"}, {"how", what}, {"m", t0}, {"took_ms", (mono_ns() - t0) / 1'000'000}});
  }

  run_config cfg_;
  std::mt19937_64 rng_;
  dialect dialect_ = dialect::sqlite;
  std::string run_url_, server_url_, db_name_;
  std::unique_ptr<history_writer> faults_;
  std::vector<slot> slots_;
  std::vector<std::unique_ptr<test::relay>> relays_;  // one per slot with partition faults
  std::map<std::string, std::pair<std::size_t, std::int64_t>> scan_;
  bool clock_fault_ = false;
  std::string faketime_;  // libfaketime's path when the clock fault is on
  std::map<int, std::int64_t> clock_offsets_;  // slot -> current wall-clock offset (s)
  int restarts_ = 0, unexpected_ = 0, restart_count_ = 0, failovers_ = 0, node_kills_ = 0;
  std::vector<std::string> worker_run_urls_;  // cfg_.worker_urls on the run's database
};

void add_worker_options(CLI::App& app, worker_config& w) {
  app.add_option("--threads", w.threads, "threads (sessions) per worker process")->check(CLI::Range(1, 64));
  app.add_option("--locks", w.locks, "lock names contended for")->check(CLI::Range(1, 1000));
  app.add_option("--ttl-ms", w.ttl_ms, "lease TTL")->check(CLI::Range(100, 600000));
  app.add_option("--lock-delay-ms", w.lock_delay_ms, "lock delay of the workers' sessions")
      ->check(CLI::Range(0, 600000));
  app.add_option("--wait-ms", w.wait_ms, "how long acquire waits");
  app.add_option("--cs-sleep-ms", w.cs_sleep_ms, "longest sleep before each write in the critical section");
  app.add_option("--lock-share", w.lock_share, "fraction of operations that are lock cycles (the rest: charges)");
  app.add_option("--family-share", w.family_share,
                 "fraction of lock cycles on read-write locks and semaphores (the rest: lease locks)");
  app.add_option("--permits", w.permits, "permits of each semaphore")->check(CLI::Range(1, 100));
  app.add_option("--elect-share", w.elect_share, "fraction of all cycles that are lead cycles (election E0)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--idem-lease-ms", w.idem_lease_ms, "idempotency attempt lease");
  app.add_option("--key-period-ms", w.key_period_ms, "a new generation of idempotency keys every ...");
  app.add_option("--keys-per-period", w.keys_per_period, "keys per generation");
  app.add_option("--pause-prob", w.pause_prob, "probability of a simulated pause (planted-bug runs)");
  app.add_option("--bug", w.bug, "planted bug")->check(CLI::IsMember({"none", "unsafe-release", "unfenced-write", "unchecked-action", "idem-no-tx",
                                                                     "rw-writer-beside-reader", "permit-overgrant",
                                                                     "unfenced-election"}));
  app.add_option("--seed", w.seed, "random seed");
}

}  // namespace
}  // namespace dblock::faults

int main(int argc, char** argv) {
  using namespace dblock::faults;
  CLI::App app{"dblock fault-injection workload: driver (run) and worker processes (worker)"};
  app.require_subcommand(1);
  worker_config wc;
  auto* worker = app.add_subcommand("worker", "one worker process (started by run)");
  worker->add_option("--url", wc.url)->required();
  worker->add_option("--history", wc.history)->required();
  worker->add_option("--id", wc.id)->required();
  add_worker_options(*worker, wc);

  run_config rc;
  std::string faults;
  auto* run = app.add_subcommand("run", "run a workload with faults, then check it");
  run->add_option("--url", rc.url, "database: postgresql://, mysql://, soci+..., or sqlite (a file in --dir)")->required();
  run->add_option("--dir", rc.dir, "output folder: history/, faults.jsonl, final.json, summary.json")->required();
  run->add_option("--workers", rc.workers, "worker processes")->check(CLI::Range(1, 64));
  run->add_option("--duration-s", rc.duration_s, "run this long (0: until --ops)");
  run->add_option("--ops", rc.ops, "stop after this many operations");
  run->add_option("--faults", faults,
                  "comma separated: kill,pause,connkill,restart,clock,partition,reply-loss,partition-all");
  run->add_option("--fault-interval-ms", rc.fault_interval_ms, "mean time between faults");
  run->add_option("--worker-url", rc.worker_urls,
                  "a URL of the same servers for worker slots (repeatable; slot i takes the (i mod n)th), "
                  "e.g. one multi-host URL per Galera node");
  run->add_option("--kill-node", rc.kill_node, "node-kill fault: the Galera node to kill")->check(CLI::Range(1, 9));
  run->add_option("--failover-lag-ms", rc.failover_lag_ms,
                  "failover fault: the standby stops receiving WAL this long before the primary crashes "
                  "(asynchronous standbys only: a synchronous primary would wait for it)");
  run->add_option("--servers-dir", rc.servers_dir, "scripts/servers folder (restart fault)")
      ->envname("DBLOCK_TEST_SERVERS_DIR");
  run->add_option("--servers-script", rc.servers_script, "path of scripts/servers");
  run->add_option("--relay", rc.relay_program, "path of dblock_test_relay (partition faults)");
  run->add_option("--summary", rc.summary, "where to write the summary JSON (default DIR/summary.json)");
  run->add_flag("--keep-db", rc.keep_db, "do not drop the run's database");
  add_worker_options(*run, rc.w);
  CLI11_PARSE(app, argc, argv);

  try {
    if (*worker) return worker_main(wc);
    if (rc.url == "sqlite") rc.url = "sqlite:workload.db";
    std::stringstream ss(faults);
    for (std::string f; std::getline(ss, f, ',');)
      if (!f.empty() && f != "none") rc.faults.push_back(f);
    static const std::set<std::string> kinds = {"kill",      "pause",      "connkill",     "restart",
                                                "clock",     "partition",  "reply-loss",   "partition-all",
                                                "failover",  "node-kill"};
    for (const auto& f : rc.faults)
      if (!kinds.count(f)) {
        std::cerr << "dblock_workload: unknown fault '" << f
                  << "' (kill, pause, connkill, restart, clock, partition, reply-loss, partition-all, failover, "
                     "node-kill)\n";
        return 64;
      }
    if (rc.duration_s <= 0 && rc.ops <= 0) rc.duration_s = 10;
    return driver(rc).run();
  } catch (const std::exception& e) {
    std::cerr << "dblock_workload: " << dblock::redact_url(e.what()) << "\n";
    return 2;
  }
}
