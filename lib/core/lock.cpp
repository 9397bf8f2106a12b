// lib/core/lock.cpp — lease locks (dblock/lock.hpp): sessions, leases, the watchdog
// that renews all of a session's locks in one statement, the deadline thread that
// declares a lease lost when its time runs out locally (whatever the watchdog is stuck
// in), waiting with backoff + full jitter, in-process hand-off and the PostgreSQL
// LISTEN connection. Table access goes
// through lock_store (SQL in sql/<dialect>/lock_*.sql).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/backend.hpp"
#include "core/crypto.hpp"
#include "core/lock_store.hpp"
#include "dblock/errors.hpp"
#include "dblock/lock.hpp"
#include "dblock/metrics.hpp"

namespace dblock {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

void validate_lock_name(std::string_view name) {
  if (name.empty()) throw invalid_argument("lock name is empty");
  if (name.size() > 255)
    throw invalid_argument("lock name is " + std::to_string(name.size()) + " bytes long (at most 255)");
  // UTF-8: reject bad lead/continuation bytes, overlong forms, surrogates and > U+10FFFF.
  const auto* p = reinterpret_cast<const unsigned char*>(name.data());
  const std::size_t n = name.size();
  for (std::size_t i = 0; i < n;) {
    unsigned c = p[i];
    if (c == 0) throw invalid_argument("lock name contains a NUL byte at offset " + std::to_string(i));
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len != 0 && i + len <= n;
    unsigned cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; ok && k < len; ++k) {
      ok = (p[i + k] & 0xC0) == 0x80;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (ok) {
      static const unsigned min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= min_cp[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (!ok) throw invalid_argument("lock name is not valid UTF-8 (bad byte at offset " + std::to_string(i) + ")");
    i += len;
  }
}

namespace detail {

// Process-wide wake-ups: a release in this process (or a NOTIFY seen by any session's
// listener) bumps the name's generation; waiters sleep on it instead of polling blind.
class release_board {
 public:
  static release_board& get() {
    static release_board b;
    return b;
  }
  std::uint64_t generation(const std::string& name) {
    std::lock_guard l(mu_);
    return gen_[name];
  }
  void bump(const std::string& name) {
    {
      std::lock_guard l(mu_);
      ++gen_[name];
    }
    cv_.notify_all();
  }
  // Also returns early once *also differs from also_seen (see nudge()).
  void wait(const std::string& name, std::uint64_t seen, clock_type::time_point until,
            const std::atomic<std::uint64_t>* also = nullptr, std::uint64_t also_seen = 0) {
    std::unique_lock l(mu_);
    cv_.wait_until(l, until, [&] { return gen_[name] != seen || (also && also->load() != also_seen); });
  }
  // Wakes the waiters to re-check what they wait for, after an `also` counter changed.
  void nudge() {
    { std::lock_guard l(mu_); }  // a waiter between its check and its sleep sees the change
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, std::uint64_t> gen_;
};

struct held_lock {
  std::string name;
  std::int64_t fence = 0;
  // Everything below is guarded by session_core::mu.
  int local_holds = 0;
  std::thread::id thread;
  clock_type::time_point granted_at;
  clock_type::time_point deadline;
  bool lost = false;
  std::string lost_reason;
};

struct session_core {
  std::shared_ptr<backend> db;     // acquire / release / verify
  std::shared_ptr<backend> watch;  // watchdog renewals (own connection when possible)
  session_options opts;
  std::string owner;
  std::string holder;
  // ttl * max_clock_drift: a hold counts as lost this long before its local deadline.
  clock_type::duration margin{0};
  // What the server is asked to keep a row for: the lease plus the lock delay.
  std::int64_t row_ttl_ms = 0;

  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<held_lock>> held;

  std::condition_variable wake;  // watchdog / listener stop
  bool stopping = false;
  std::thread watchdog;
  bool renewing = false;  // a renewal is in flight on `watch`; guarded by mu
  // When the deadline thread cuts that renewal: half a renewal period (at least 1 s) after
  // it was sent, so that a renewal stuck on a silent network is retried (on a new
  // connection) before the lease runs out - and before `dblock exec` would stop its
  // command. A lease's trusted end cuts it in any case. Guarded by mu.
  clock_type::time_point renew_cut_at = clock_type::time_point::max();

  // The deadline thread: at each hold's trusted end (deadline - margin) it marks the hold
  // lost and fires on_lost, on a thread that never touches the network, and cuts a
  // renewal still in flight on the watchdog's own connection (that renewal's deadline).
  std::thread keeper;
  std::condition_variable keeper_cv;
  clock_type::time_point keeper_next = clock_type::time_point::max();  // guarded by mu

  // Caller holds mu. Wakes the deadline thread when `end` comes before its next wake-up
  // (rarely: it sleeps until the earliest trusted end, and renewals only move ends later).
  void schedule(clock_type::time_point end) {
    if (end < keeper_next) {
      keeper_next = end;
      keeper_cv.notify_one();
    }
  }

  void keeper_loop() {
    std::unique_lock l(mu);
    while (!stopping) {
      const auto now = clock_type::now();
      auto next = clock_type::time_point::max();
      std::vector<lost_lease> lost;
      for (auto& [n, h] : held) {
        if (h->lost) continue;
        const auto end = h->deadline - margin;
        if (now < end) {
          next = std::min(next, end);
        } else if (mark_lost(*h, "the lease ran out before a renewal was confirmed (local deadline minus the " +
                                     std::to_string(std::chrono::duration_cast<milliseconds>(margin).count()) +
                                     " ms clock-drift margin)")) {
          lost.push_back({n, h->fence, h->lost_reason});
        }
      }
      // The renewal in flight, on the watchdog's own connection: cut at its deadline, or
      // now if a lease it speaks for just ran out. The watchdog reconnects and goes on.
      bool cut = false;
      if (renewing && watch != db) {
        if (now >= renew_cut_at || !lost.empty()) {
          cut = true;
          renew_cut_at = clock_type::time_point::max();
        } else {
          next = std::min(next, renew_cut_at);
        }
      }
      keeper_next = next;
      if (!lost.empty() || cut) {
        l.unlock();
        if (cut) watch->interrupt();
        fire(lost);
        l.lock();
        continue;
      }
      if (next == clock_type::time_point::max()) {
        keeper_cv.wait(l, [&] { return stopping || keeper_next != clock_type::time_point::max(); });
      } else {
        keeper_cv.wait_until(l, next, [&] { return stopping || keeper_next < next; });
      }
    }
  }

  std::thread listener;
  bool listener_started = false;
  // Names this session last saw held live by another owner (a refused try). Until that
  // holder's expiry, and while no release of the name is seen (release_board generation),
  // a try sends the read-only lock_probe.sql first: a refusal then costs a plain
  // primary-key read (PostgreSQL: no PL/pgSQL call; MariaDB: no X-lock on the holder's
  // row; SQLite: no write lock), and only a probe that finds the name free is followed by
  // lock_acquire.sql. Guarded by mu.
  struct busy_hint {
    clock_type::time_point until;
    std::uint64_t generation = 0;
  };
  std::unordered_map<std::string, busy_hint> busy;

  void note_busy(const std::string& name, const lock_info& h, std::uint64_t generation, clock_type::time_point sent) {
    std::lock_guard l(mu);
    freed.erase(name);  // refused: not free
    if (h.expires_in.count() <= 0) return;
    if (busy.size() >= 1024) busy.clear();  // many names tried once: keep it small
    busy[name] = {sent + h.expires_in, generation};
  }

  // Names this session released itself last (kept on every dialect, used on PostgreSQL). A
  // try of such a name - or, by the head of its wait line, of a name whose release was seen
  // since its refusal or that lock_probe.sql found free - sends lock_acquire_fresh.sql, the
  // grant without lock_acquire.sql's fallback, and lock_acquire.sql only when that returns
  // no row. A stale entry costs that one round trip, nothing else. Guarded by mu.
  std::unordered_set<std::string> freed;
  void note_freed(const std::string& name) {
    std::lock_guard l(mu);
    if (freed.size() >= 1024) freed.clear();
    freed.insert(name);
  }

  // session_options::fair: idle wait-line connections, kept for reuse (a place in line is
  // a server lock held by a connection that does nothing else meanwhile).
  std::vector<std::shared_ptr<backend>> line_idle;

  // PostgreSQL: line connections are opened on a thread of their own, one request (ticket)
  // per waiter, while the waiter keeps trying (queued behind the head, so it passes no one)
  // instead of stalling for the set-up as the lock is handed on. A connection costs 16 ms on
  // the benchmark's VM, 57 ms when 7 processes open one at once (SCRAM and a fork).
  struct line_ticket {            // guarded by mu
    std::shared_ptr<backend> conn;  // the connection, once opened
    bool done = false;              // opened, or failed (conn stays empty)
    bool withdrawn = false;         // its acquire returned first: open nothing, or keep it idle
  };
  std::deque<std::shared_ptr<line_ticket>> line_requests;  // guarded by mu
  std::atomic<std::uint64_t> line_opened{0};  // tickets done: wakes the waiters sleeping on one
  std::thread line_opener;

  std::shared_ptr<line_ticket> request_line() {
    auto t = std::make_shared<line_ticket>();
    {
      std::lock_guard l(mu);
      try {
        if (stopping) throw std::runtime_error("session stopping");
        if (!line_opener.joinable()) line_opener = std::thread([this] { opener_loop(); });
        line_requests.push_back(t);
      } catch (...) {
        t->done = true;  // no connection: the waiter polls without a place in line
        return t;
      }
    }
    line_cv.notify_all();
    return t;
  }

  // True once the ticket is done; `conn` is then the connection, or empty if the open failed.
  bool collect_line(line_ticket& t, std::shared_ptr<backend>& conn) {
    std::lock_guard l(mu);
    if (!t.done) return false;
    conn = std::move(t.conn);
    return true;
  }

  // The acquire that asked returned: a connection opened for it later goes to the idle list.
  void withdraw_line(line_ticket& t) noexcept {
    std::shared_ptr<backend> conn;
    {
      std::lock_guard l(mu);
      t.withdrawn = true;
      conn = std::move(t.conn);
    }
    try {
      if (conn) return_line(std::move(conn));
    } catch (...) {
    }
  }

  void opener_loop() {
    std::unique_lock l(mu);
    for (;;) {
      line_cv.wait(l, [&] { return stopping || !line_requests.empty(); });
      if (stopping) return;
      auto t = std::move(line_requests.front());
      line_requests.pop_front();
      if (t->withdrawn) continue;  // its acquire is over: nothing to set up
      l.unlock();
      std::shared_ptr<backend> conn, spare;
      try {
        conn = db->reopen();
      } catch (...) {
        // Failed: the ticket's waiter polls without a place in line.
      }
      l.lock();
      t->done = true;
      (t->withdrawn ? spare : t->conn) = std::move(conn);
      l.unlock();
      try {
        if (spare) return_line(std::move(spare));
      } catch (...) {
      }
      ++line_opened;
      release_board::get().nudge();
      l.lock();
    }
  }

  // An idle line connection, or nothing.
  std::shared_ptr<backend> take_idle_line() {
    std::lock_guard l(mu);
    if (line_idle.empty()) return nullptr;
    auto conn = std::move(line_idle.back());
    line_idle.pop_back();
    return conn;
  }

  // Whether waiters of this session can take a place in a wait line.
  // Not behind a transaction pooler: a place in line is a session advisory lock.
  [[nodiscard]] bool can_queue() const {
    return opts.fair && db->kind() != dialect::sqlite && db->can_reopen() && !db->pooled();
  }

  void return_line(std::shared_ptr<backend> conn) {
    std::lock_guard l(mu);
    if (line_idle.size() < 4) line_idle.push_back(std::move(conn));  // more were waiting at once: close it
  }

  // Gives a place in line up: the server lock, then the LISTEN of its time as head (an idle
  // connection must not be woken by every release). The connection is reused if that
  // worked, else dropped - its end frees the place on the server.
  void leave_line(std::shared_ptr<backend> conn, const std::string& name) {
    try {
      lock_store::line_leave(*conn, name);
      conn->raw().unlisten_all();
      return_line(std::move(conn));
    } catch (...) {
    }
  }

  // A granted head leaves on the line thread: acquire returns without waiting for the
  // round trips, and the next in line becomes head while the lock is held anyway.
  std::vector<std::pair<std::shared_ptr<backend>, std::string>> leaving;  // guarded by mu
  std::condition_variable line_cv;
  std::thread line_thread;

  void leave_line_later(std::shared_ptr<backend> conn, std::string name) {
    {
      std::lock_guard l(mu);
      if (!stopping) {
        leaving.emplace_back(std::move(conn), std::move(name));
        if (!line_thread.joinable()) line_thread = std::thread([this] { line_loop(); });
      }
    }
    if (conn) leave_line(std::move(conn), name);  // stopping: leave here
    line_cv.notify_all();  // the opener waits on it too
  }

  void line_loop() {
    std::unique_lock l(mu);
    for (;;) {
      line_cv.wait(l, [&] { return stopping || !leaving.empty(); });  // notified for opens too
      if (leaving.empty()) return;  // stopping, and every place given up
      auto batch = std::move(leaving);
      leaving.clear();
      l.unlock();
      for (auto& [conn, name] : batch) leave_line(std::move(conn), name);
      l.lock();
    }
  }

  // Marks h lost once; returns true when this call did it (caller fires the callback).
  static bool mark_lost(held_lock& h, const std::string& reason) {
    if (h.lost) return false;
    h.lost = true;
    h.lost_reason = reason;
    return true;
  }

  void fire(const std::vector<lost_lease>& lost) {
    if (!lost.empty()) detail::count(counter::lock_lost, lost.size());
    if (!opts.on_lost) return;
    for (const auto& l : lost) {
      try {
        opts.on_lost(l);
      } catch (...) {
        // A callback must not take the watchdog down.
      }
    }
  }

  void watchdog_loop() {
    const auto period = std::max(milliseconds(10), opts.ttl / std::max(2, opts.renew_divisor));
    auto next = period;
    std::mt19937 rng(std::random_device{}());
    int failures = 0;
    for (;;) {
      {
        std::unique_lock l(mu);
        if (wake.wait_for(l, next, [&] { return stopping; })) return;
      }
      std::vector<std::string> names;
      // The holds this renewal speaks for. Only they are judged by its result: a hold that
      // joined `held` after this snapshot (its acquire was in flight) is not in `names`, and
      // on MySQL the renewed list IS `names` when every row matched (lock_store::renew).
      std::unordered_set<const held_lock*> asked;
      {
        std::lock_guard l(mu);
        for (auto& [n, h] : held)
          if (!h->lost) {
            names.push_back(n);
            asked.insert(h.get());
          }
      }
      next = period;
      if (names.empty()) continue;
      const auto t0 = clock_type::now();  // read BEFORE sending: the local deadline is conservative
      std::vector<lost_lease> lost;
      struct in_flight {  // the deadline thread cuts the connection only while this is set
        session_core& c;
        bool started = false;  // false: the session is stopping, send nothing
        in_flight(session_core& core, clock_type::duration cut_after) : c(core) {
          std::lock_guard l(c.mu);
          if (c.stopping) return;
          started = c.renewing = true;
          c.renew_cut_at = clock_type::now() + cut_after;
          c.schedule(c.renew_cut_at);
        }
        ~in_flight() {
          std::lock_guard l(c.mu);
          c.renewing = false;
          c.renew_cut_at = clock_type::time_point::max();
        }
      };
      try {
        std::vector<std::string> still;
        {
          // Never sooner than 1 s (the watchdog connection's own floor): a renewal of many
          // rows on a busy server is slow, not stuck, and cutting it would lose them all.
          in_flight mark(*this, std::max<clock_type::duration>(period / 2, std::chrono::seconds(1)));
          if (!mark.started) return;
          still = lock_store::renew(*watch, owner, row_ttl_ms, names.size(), names);
        }
        std::sort(still.begin(), still.end());
        failures = 0;
        detail::count(counter::lock_renewals);
        std::lock_guard l(mu);
        for (auto& [n, h] : held) {
          if (h->lost || h->granted_at >= t0 || !asked.count(h.get())) continue;  // judged next time
          if (std::binary_search(still.begin(), still.end(), n)) {
            h->deadline = std::max(h->deadline, t0 + opts.ttl);
          } else if (mark_lost(*h, "the lock row is gone or belongs to another owner (expired, taken over or deleted)")) {
            lost.push_back({n, h->fence, h->lost_reason});
          }
        }
      } catch (const std::exception& e) {
        // Keep trying within the lease; give up per lock at its local deadline.
        detail::count(counter::lock_renewal_failures);
        const auto now = clock_type::now();
        {
          std::lock_guard l(mu);
          for (auto& [n, h] : held)
            if (!h->lost && now >= h->deadline - margin &&
                mark_lost(*h, std::string("renewal failed until the lease ran out: ") + e.what()))
              lost.push_back({n, h->fence, h->lost_reason});
        }
        if (dynamic_cast<const lock_not_available*>(&e)) {
          // SQLite busy: retry almost at once (see the constructor).
          next = milliseconds(std::uniform_int_distribution<int>(1, 5)(rng));
        } else {
          // Anything else (connection lost...): sooner than the period, backing off, with jitter.
          ++failures;
          auto cap = std::min<long long>(period.count(), 50LL << std::min(failures, 6));
          next = milliseconds(std::uniform_int_distribution<long long>(cap / 2, cap)(rng));
        }
      }
      fire(lost);
    }
  }

  void listener_loop(std::shared_ptr<backend> conn) {
    auto& board = release_board::get();
    bool subscribed = false;
    for (;;) {
      {
        std::lock_guard l(mu);
        if (stopping) return;
      }
      try {
        if (!subscribed) {
          conn->raw().listen("dblock_release");
          subscribed = true;
        }
        for (auto& name : conn->raw().await_notifications(milliseconds(200))) board.bump(name);
      } catch (const std::exception&) {
        // Lost the listening connection: libpqxx reconnects and re-LISTENs on next use;
        // meanwhile waiters keep polling. Back off briefly.
        std::unique_lock l(mu);
        if (wake.wait_for(l, milliseconds(500), [&] { return stopping; })) return;
      }
    }
  }

  void ensure_listener() {
    // Behind a transaction pooler LISTEN would subscribe a shared server connection.
    if (!opts.listen || db->kind() != dialect::postgresql || !db->can_reopen() || db->pooled()) return;
    std::lock_guard l(mu);
    if (listener_started || stopping) return;
    listener_started = true;
    // Connects on its own thread: the waiter that asked keeps polling meanwhile, and the
    // session's mutex is not held through a connection set-up.
    try {
      listener = std::thread([this] {
        std::shared_ptr<backend> conn;
        try {
          conn = db->reopen();
        } catch (...) {
          return;  // no listener: waiting falls back to polling with backoff
        }
        if (conn->raw().can_listen()) listener_loop(std::move(conn));
      });
    } catch (...) {
      // No thread, no listener: waiting falls back to polling with backoff.
    }
  }

  void stop() {
    bool cut = false;
    {
      std::lock_guard l(mu);
      stopping = true;
      cut = renewing && watch != db;
    }
    if (cut) watch->interrupt();  // do not wait out a renewal stuck on a silent network
    wake.notify_all();
    keeper_cv.notify_all();
    line_cv.notify_all();
    if (keeper.joinable()) keeper.join();
    if (watchdog.joinable()) watchdog.join();
    if (listener.joinable()) listener.join();
    if (line_thread.joinable()) line_thread.join();
    if (line_opener.joinable()) line_opener.join();
  }
};

// The head of a lock's wait line (session_options::fair). On PostgreSQL the head waits
// for releases on its own line connection (LISTEN while head): no session listener is
// needed, so a release wakes the one client that will try instead of one per session.
// Leaving gives the place up (see session_core::leave_line).
class line_place {
 public:
  line_place(session_core& c, std::shared_ptr<backend> conn, std::string name)
      : c_(c), conn_(std::move(conn)), name_(std::move(name)) {}
  line_place(const line_place&) = delete;
  line_place& operator=(const line_place&) = delete;
  ~line_place() {
    if (conn_) c_.leave_line(std::move(conn_), name_);  // acquire threw: leave here
  }

  // Starts listening for releases (PostgreSQL); false where that is not possible.
  bool listen() {
    if (!listening_ && conn_->raw().can_listen()) {
      try {
        conn_->raw().listen("dblock_release");
        listening_ = true;
      } catch (const std::exception&) {
      }
    }
    return listening_;
  }
  [[nodiscard]] bool listening() const noexcept { return listening_; }

  // Sleeps until a release of the name is announced (true) or `until` (false). Throws if
  // the connection failed (the caller then waits without it).
  bool await_release(clock_type::time_point until) {
    for (;;) {
      const auto now = clock_type::now();
      if (now >= until) return false;
      const auto left = std::chrono::ceil<milliseconds>(until - now);
      for (const auto& n : conn_->raw().await_notifications(left))
        if (n == name_) return true;
    }
  }

  // Granted: give the place up on the line thread.
  void leave_later() { c_.leave_line_later(std::move(conn_), name_); }

 private:
  session_core& c_;
  std::shared_ptr<backend> conn_;
  std::string name_;
  bool listening_ = false;
};

// Waits in the line of `name` on `conn` (an idle line connection) until this thread heads
// it, for at most one TTL and never past `deadline` (the session can_queue()). Nothing when
// the wait ran out (a long hold, or a head that stopped running: the caller polls from then
// on), or when the line's connection failed (it is dropped).
std::unique_ptr<line_place> enter_line(session_core& c, std::shared_ptr<backend> conn, const std::string& name,
                                       clock_type::time_point deadline) {
  auto until = std::min(deadline, clock_type::now() + c.opts.ttl);
  // MariaDB's place in line is a GET_LOCK that waits in the server: keep it under the
  // connection's read timeout (open_options::network_timeout), which would end it as a
  // lost connection.
  if (conn->kind() == dialect::mysql) until = std::min(until, clock_type::now() + conn->options().network_timeout * 3 / 4);
  const auto wait_ms = std::chrono::duration_cast<milliseconds>(until - clock_type::now()).count();
  if (wait_ms < 1) {
    c.return_line(std::move(conn));
    return nullptr;
  }
  try {
    if (lock_store::line_enter(*conn, name, wait_ms)) return std::make_unique<line_place>(c, std::move(conn), name);
    c.return_line(std::move(conn));
  } catch (const std::exception&) {
    // Connection lost: waiting falls back to polling.
  }
  return nullptr;
}

}  // namespace detail

namespace {

std::string default_holder() {
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host) + ":" + std::to_string(::getpid());
}

std::string describe_holder(const std::string& name, const std::optional<lock_info>& h) {
  if (!h) return "lock '" + name + "' is held by another owner";
  return "lock '" + name + "' is held by '" + h->holder + "' (fence " + std::to_string(h->fence) + ") until " +
         h->expires_at + " server time (" + std::to_string(h->expires_in.count()) + " ms from now)";
}

}  // namespace

// ----------------------------------------------------------------------------- session

session::session(database db, session_options opts) : core_(std::make_shared<detail::session_core>()) {
  if (opts.ttl < milliseconds(100))
    throw invalid_argument("lock TTL " + std::to_string(opts.ttl.count()) + " ms is too short (at least 100 ms)");
  if (opts.ttl > std::chrono::hours(24 * 366))
    throw invalid_argument("lock TTL " + std::to_string(opts.ttl.count()) + " ms is too long (at most 366 days)");
  if (opts.renew_divisor < 2) throw invalid_argument("renew_divisor must be at least 2");
  if (opts.min_backoff <= milliseconds(0) || opts.max_backoff < opts.min_backoff)
    throw invalid_argument("backoff bounds must satisfy 0 < min_backoff <= max_backoff");
  if (!(opts.max_clock_drift >= 0.0 && opts.max_clock_drift <= 0.5))
    throw invalid_argument("max_clock_drift " + std::to_string(opts.max_clock_drift) +
                           " is out of range (0 to 0.5)");
  if (opts.lock_delay < milliseconds(0) || opts.lock_delay > std::chrono::hours(24))
    throw invalid_argument("lock_delay " + std::to_string(opts.lock_delay.count()) +
                           " ms is out of range (0 to 24 h)");
  auto& c = *core_;
  c.db = detail::backend_of(db);
  c.opts = std::move(opts);
  c.margin = std::chrono::duration_cast<clock_type::duration>(
      std::chrono::duration<double, std::milli>(static_cast<double>(c.opts.ttl.count()) * c.opts.max_clock_drift));
  c.row_ttl_ms = c.opts.ttl.count() + c.opts.lock_delay.count();
  c.owner = detail::random_hex(16);
  c.holder = c.opts.holder.empty() ? default_holder() : c.opts.holder;
  if (c.holder.size() > 255) c.holder.resize(255);
  // The watchdog gets its own connection so renewals never queue behind user work, with
  // timeouts of half the renewal period (at least 1 s): a renewal stuck on a silent network
  // fails and is retried well before its lease runs out (see renew_cut_at).
  if (c.db->can_reopen()) {
    auto o = c.db->options();
    const auto bound = c.opts.ttl / c.opts.renew_divisor / 2;
    o.network_timeout = std::clamp<milliseconds>(bound, std::chrono::seconds(1),
                                                 std::max<milliseconds>(o.network_timeout, std::chrono::seconds(1)));
    o.connect_timeout = std::clamp(std::chrono::ceil<std::chrono::seconds>(bound), std::chrono::seconds(1),
                                   std::max(o.connect_timeout, std::chrono::seconds(1)));
    c.watch = c.db->reopen(o);
  } else {
    c.watch = c.db;
  }
  // SQLite's busy handler sleeps up to 100 ms between retries and is unfair to a long
  // waiter: under write contention the watchdog could starve past the lease. Its own
  // connection fails fast instead and the watchdog retries every few milliseconds.
  if (c.watch != c.db && c.watch->kind() == dialect::sqlite) c.watch->set_busy_timeout(milliseconds(20));
  c.watchdog = std::thread([core = core_.get()] { core->watchdog_loop(); });
  try {
    c.keeper = std::thread([core = core_.get()] { core->keeper_loop(); });
  } catch (...) {
    c.stop();
    throw;
  }
}

session::~session() { core_->stop(); }

const std::string& session::owner() const noexcept { return core_->owner; }
milliseconds session::ttl() const noexcept { return core_->opts.ttl; }
milliseconds session::margin() const noexcept { return std::chrono::duration_cast<milliseconds>(core_->margin); }
milliseconds session::renew_period() const noexcept { return core_->opts.ttl / core_->opts.renew_divisor; }

std::optional<lock_info> session::holder_of(std::string_view name) {
  validate_lock_name(name);
  return detail::lock_store::holder(*core_->db, std::string(name));
}

std::optional<lease> session::try_acquire(std::string_view name_view) {
  validate_lock_name(name_view);
  return try_once(std::string(name_view), nullptr);
}

std::optional<lease> session::try_once(const std::string& name, std::optional<lock_info>* refused, bool behind_line,
                                       bool at_head) {
  auto& c = *core_;
  const auto generation = detail::release_board::get().generation(name);  // before sending
  bool probe_first = false;
  bool likely_free = false;  // see session_core::freed
  {
    std::lock_guard l(c.mu);
    if (auto it = c.held.find(name); it != c.held.end() && !it->second->lost &&
                                     c.opts.scope == owner_scope::thread &&
                                     it->second->thread != std::this_thread::get_id())
    {
      detail::count(counter::lock_not_acquired);
      return std::nullopt;  // another thread of this session owns it
    }
    likely_free = c.freed.count(name) > 0;
    if (auto it = c.busy.find(name); it != c.busy.end()) {
      probe_first = clock_type::now() < it->second.until && it->second.generation == generation;
      // The head of the line, woken by a release (not merely past the holder's expiry, which
      // means a takeover), is the one waiter that tries: likely free. Other waiters and
      // pollers race for it, and all but one would miss.
      likely_free = likely_free || (at_head && it->second.generation != generation);
      if (!probe_first) c.busy.erase(it);
    }
  }
  // From here to the record in `held`, under the connection's mutex: no other thread of
  // this session changes the row's holds in between (a final release deciding on its local
  // count and then deleting could otherwise delete a hold re-entered meanwhile). The
  // session's statements on this connection run one at a time anyway.
  return c.db->exclusive([&]() -> std::optional<lease> {
    const auto t0 = clock_type::now();  // before sending: the local deadline errs early
    detail::lock_store::acquire_result r;
    if (probe_first) {
      r.state = detail::lock_store::probe(*c.db, name, c.owner);
      if (at_head) likely_free = !r.state;  // no live holder: free (or expired, or ours)
    }
    if (!r.state)
      r = detail::lock_store::acquire(*c.db, name, c.owner, c.row_ttl_ms, c.opts.lock_delay.count(), c.holder,
                                      behind_line, likely_free);
    if (!r.granted) {
      detail::count(counter::lock_not_acquired);
      if (r.state) {
        c.note_busy(name, *r.state, generation, t0);
      } else if (likely_free) {
        std::lock_guard l(c.mu);
        c.freed.erase(name);  // not free after all (a lost race): no second guess
      }
      if (refused) *refused = std::move(r.state);
      return std::nullopt;
    }
    detail::count(counter::lock_acquired);
    std::shared_ptr<detail::held_lock> h;
    {
      std::lock_guard l(c.mu);
      c.busy.erase(name);
      c.freed.erase(name);
      auto& slot = c.held[name];
      if (!slot || slot->lost || slot->fence != r.state->fence) {
        slot = std::make_shared<detail::held_lock>();
        slot->name = name;
        slot->fence = r.state->fence;
      }
      h = slot;
      ++h->local_holds;
      h->thread = std::this_thread::get_id();
      h->granted_at = t0;
      h->deadline = t0 + c.opts.ttl;
      c.schedule(h->deadline - c.margin);
    }
    return lease(core_, h);
  });
}

lease session::acquire(std::string_view name_view, milliseconds wait) {
  validate_lock_name(name_view);
  if (wait < milliseconds(0)) throw invalid_argument("negative wait " + std::to_string(wait.count()) + " ms");
  auto& c = *core_;
  const std::string name(name_view);
  auto& board = detail::release_board::get();
  const auto deadline = clock_type::now() + wait;
  std::mt19937_64 rng(std::random_device{}());
  const auto started = clock_type::now();
  auto record_wait = [&] {
    detail::count(counter::lock_waits);
    detail::observe_wait(std::chrono::duration<double>(clock_type::now() - started).count());
  };
  using us = std::chrono::microseconds;
  const auto min_b = std::chrono::duration_cast<us>(c.opts.min_backoff);
  const auto max_b = std::chrono::duration_cast<us>(c.opts.max_backoff);
  // Change-aware backoff. `step` doubles the cap while the same grant keeps refusing us
  // (a long hold: no point polling fast) and is reset when a refused try shows another
  // grant than the last one (the lock is changing hands: the next hand-off is near).
  // `interval` estimates the time between grants from the changes we saw; while the lock
  // keeps changing hands at that pace the cap stays near it instead of reaching max_backoff.
  int step = 0;
  std::int64_t last_fence = 0;  // fence of the grant that refused us last; 0 = none yet (fences start at 1)
  clock_type::time_point last_change = started;
  us interval{0};  // smoothed time between observed grant changes; 0 = none seen yet
  // session_options::fair: after the first refusal, wait in line; the head polls alone
  // (and, on PostgreSQL, waiters whose line connection is still being opened, with tries
  // that pass no one).
  std::unique_ptr<detail::line_place> place;  // leaves the line when acquire returns or throws
  bool line_tried = false;                    // took (or tried to take) a place in line, or gave up on one
  std::shared_ptr<detail::session_core::line_ticket> ticket;  // a line connection being opened for us
  struct withdraw_on_exit {
    detail::session_core& c;
    std::shared_ptr<detail::session_core::line_ticket>& t;
    ~withdraw_on_exit() {
      if (t) c.withdraw_line(*t);
    }
  } withdraw{c, ticket};
  const bool line_possible = c.can_queue();
  for (int attempt = 0;; ++attempt) {
    const auto seen = board.generation(name);  // read before trying: a release after this wakes us
    std::optional<lease> l;
    std::optional<lock_info> h;
    try {
      // Until it has a place in line, a waiter's try queues behind a waiter heading the
      // line instead of barging ahead of it (PostgreSQL): its first try, and those while
      // its line connection is being opened. Later tries are the head's own, or a
      // waiter's out of patience (or without a line connection).
      l = try_once(name, &h, line_possible && !line_tried, place != nullptr);
    } catch (const transaction_conflict&) {
      // Still a deadlock victim after lock_store's quick retries: contention; keep waiting.
    }
    if (l) {
      if (attempt > 0) record_wait();
      if (place) place->leave_later();
      return std::move(*l);
    }
    const auto now = clock_type::now();
    if (!h && (now >= deadline || attempt == 0)) {
      h = detail::lock_store::holder(*c.db, name);
    } else if (!h && c.db->kind() == dialect::sqlite) {
      // SQLite's refused try returns no row; the backoff wants the holder's fence, and
      // the lookup is a local read. Busy now and then: the backoff just goes without it.
      try {
        h = detail::lock_store::holder(*c.db, name);
      } catch (const lock_not_available&) {
      }
    }
    // On SQLite the holder came from the lookup, not the refused try: note it, so that the
    // next tries read instead of writing (try_once notes the others).
    if (h && c.db->kind() == dialect::sqlite) c.note_busy(name, *h, seen, now);
    if (now >= deadline && attempt > 0) record_wait();
    if (now >= deadline)
      throw timeout_error(describe_holder(name, h) + "; not acquired within " + std::to_string(wait.count()) + " ms");
    const auto opened_seen = c.line_opened.load();  // before looking: an open after this wakes the sleep below
    const auto before = clock_type::now();
    std::shared_ptr<detail::backend> line_conn;
    if (line_possible && !line_tried) {
      if (ticket) {
        if (c.collect_line(*ticket, line_conn)) {
          ticket.reset();
          if (!line_conn) line_tried = true;  // the open failed: wait without a place in line
        }
      } else if (!(line_conn = c.take_idle_line())) {
        if (c.db->kind() == dialect::postgresql) {
          ticket = c.request_line();  // opened while we keep trying, queued behind the head
        } else {
          // MariaDB's tries cannot stay behind the head: open it now, as before.
          try {
            line_conn = c.db->reopen();
          } catch (const std::exception&) {
            line_tried = true;  // no line: waiting falls back to polling
          }
        }
      }
    }
    if (line_conn) {
      line_tried = true;
      place = detail::enter_line(c, std::move(line_conn), name, deadline);
      if (place && c.opts.listen) place->listen();  // before the next try: no release after it is missed
      if (place || clock_type::now() - before > milliseconds(50)) {
        // At the head (or out of patience): try at once. What was learnt about the pace
        // of grants before the wait in line is stale now.
        step = 0;
        last_fence = 0;
        interval = us(0);
        last_change = clock_type::now();
        continue;
      }
    }
    if (h) {
      if (last_fence != 0 && last_fence != h->fence) {
        // Another grant since our last try (a fence identifies a grant; re-entry keeps it).
        const auto gap = std::chrono::duration_cast<us>(now - last_change);
        interval = interval.count() == 0 ? gap : (interval * 3 + gap) / 4;
        step = 0;
      }
      if (last_fence != h->fence) last_change = now;
      last_fence = h->fence;
    }
    us cap = std::min<us>(max_b, min_b * (std::int64_t{1} << std::min(step, 20)));
    ++step;
    // Still changing hands at the observed pace: stay near it. A grant outliving a few
    // intervals is a long hold, and the doubling above takes over.
    if (interval.count() > 0 && now - last_change < 4 * interval)
      cap = std::clamp(2 * interval, std::min(min_b, max_b), cap);
    // Equal jitter: spread waiters out without pointless sub-cap polls.
    auto sleep = us(std::uniform_int_distribution<long long>(std::max<long long>(1, cap.count() / 2),
                                                             std::max<long long>(1, cap.count()))(rng));
    if (h && h->expires_in.count() >= 0) sleep = std::min<us>(sleep, h->expires_in + milliseconds(1));
    const auto until = std::min(deadline, clock_type::now() + sleep);
    if (place && place->listening()) {
      try {
        // A release seen here is one seen by this process: other waiters of the name wake,
        // and the next try is the acquire itself, not lock_probe.sql.
        if (place->await_release(until)) board.bump(name);
        continue;
      } catch (const std::exception&) {
        place.reset();  // the line connection failed (and is dropped): wait without it
      }
    }
    if (ticket) {
      // About to take a place in line, where it will listen: no session listener (and no
      // second connection set-up) for the moments before. Wakes when its connection is ready.
      board.wait(name, seen, until, &c.line_opened, opened_seen);
    } else {
      c.ensure_listener();
      board.wait(name, seen, until);
    }
  }
}

std::vector<lock_info> list_locks(database& db) { return detail::lock_store::list(*detail::backend_of(db)); }

// ----------------------------------------------------------------------------- lease

lease::lease(std::shared_ptr<detail::session_core> core, std::shared_ptr<detail::held_lock> h)
    : core_(std::move(core)), h_(std::move(h)), name_(h_->name), fence_(h_->fence) {}

lease::lease(lease&& o) noexcept = default;

lease& lease::operator=(lease&& o) noexcept {
  if (this != &o) {
    try {
      if (h_) release();
    } catch (...) {
    }
    core_ = std::move(o.core_);
    h_ = std::move(o.h_);
    name_ = std::move(o.name_);
    fence_ = o.fence_;
  }
  return *this;
}

lease::~lease() {
  try {
    if (h_) release();
  } catch (...) {
    // Best effort: an unreleased row expires after its TTL.
  }
}

const std::string& lease::name() const noexcept { return name_; }
std::int64_t lease::fence() const noexcept { return fence_; }

bool lease::is_held() const noexcept { return clock_type::now() < trusted_until(); }

milliseconds lease::remaining() const noexcept {
  auto left = std::chrono::duration_cast<milliseconds>(trusted_until() - clock_type::now());
  return std::max(left, milliseconds(0));
}

clock_type::time_point lease::trusted_until() const noexcept {
  if (!h_) return clock_type::time_point{};  // the clock's epoch: long past, safe to subtract from
  std::lock_guard l(core_->mu);
  if (h_->lost) return clock_type::time_point{};
  return h_->deadline - core_->margin;
}

std::string lease::lost_reason() const {
  if (!h_) return {};
  std::lock_guard l(core_->mu);
  return h_->lost_reason;
}

void lease::release() {
  if (!h_) return;
  auto h = std::move(h_);
  auto core = std::move(core_);
  bool final_hold = false, was_lost = false;
  std::string reason;
  using detail::lock_store::release_outcome;
  // The local count and the row's holds change together, under the connection's mutex (see
  // session::try_once): with owner_scope::session another thread may re-enter through the
  // database, and a final release decided before that re-entry but sent after it would
  // delete the row the other thread then counts on.
  const auto outcome = core->db->exclusive([&]() -> std::optional<release_outcome> {
    {
      std::lock_guard l(core->mu);
      final_hold = --h->local_holds <= 0;
      was_lost = h->lost;
      reason = h->lost_reason;
      if (final_hold) {
        auto it = core->held.find(h->name);
        if (it != core->held.end() && it->second == h) {
          core->held.erase(it);  // the watchdog stops renewing it
        } else if (it != core->held.end() && !it->second->lost && it->second->fence == h->fence) {
          // This lease was marked lost (say a renewal failed while the server restarted)
          // and the name was re-entered since: the row is that hold's now. Leave it; its
          // final release deletes it, holds and all.
          return std::nullopt;
        }
      }
    }
    // Even a lost lease's row is deleted if it is somehow still ours: the WHERE owner and
    // fence make that safe (a newer grant of the name to this session has another fence and
    // is left alone), and it frees the name sooner. A hold the session never learnt of (an
    // acquire whose answer was lost) goes with the row.
    return detail::lock_store::release(*core->db, h->name, core->owner, h->fence, final_hold,
                                       core->opts.async_release);
  });
  const bool ours = !outcome || *outcome != release_outcome::not_ours;
  if (final_hold && outcome && *outcome != release_outcome::decremented) detail::release_board::get().bump(h->name);
  if (final_hold && outcome && *outcome == release_outcome::deleted) core->note_freed(h->name);
  if (was_lost) throw lock_lost("lock '" + h->name + "' had been lost before release: " + reason);
  if (ours) detail::count(counter::lock_released);
  if (!ours) {
    std::vector<lost_lease> lost;
    {
      std::lock_guard l(core->mu);
      if (detail::session_core::mark_lost(*h, "the lock row was gone or belonged to another owner at release"))
        lost.push_back({h->name, h->fence, h->lost_reason});
    }
    core->fire(lost);
    throw lock_lost("lock '" + h->name + "' (fence " + std::to_string(h->fence) +
                    ") was no longer held by this session when released");
  }
}

void lease::verify_in(transaction_ref tx) const {
  if (!h_) throw lock_lost("verify_in on a released lease");
  // A lease already reported lost (or past its trusted end) fails here, even while its row
  // is still in its lock delay on the server.
  if (!is_held())
    throw lock_lost("lock '" + h_->name + "' (fence " + std::to_string(h_->fence) + ") is no longer held: " +
                    (lost_reason().empty() ? std::string("its lease ran out") : lost_reason()));
  if (tx.kind() != core_->db->kind()) throw invalid_argument("verify_in: the transaction is on another kind of database");
  if (!detail::lock_store::verify(*detail::backend_of(tx), h_->name, core_->owner, h_->fence)) {
    std::vector<lost_lease> lost;
    {
      std::lock_guard l(core_->mu);
      if (detail::session_core::mark_lost(*h_, "verify_in found the lock row gone, expired or re-granted"))
        lost.push_back({h_->name, h_->fence, h_->lost_reason});
    }
    core_->fire(lost);
    throw lock_lost("lock '" + h_->name + "' (fence " + std::to_string(h_->fence) + ") is no longer held");
  }
}

}  // namespace dblock
