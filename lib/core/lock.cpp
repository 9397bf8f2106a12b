// lib/core/lock.cpp — lease locks (dblock/lock.hpp): sessions, leases and the waiting
// acquire. The parts:
//   session_core  one session's holds, its renewal job (run by a link, lib/core/link.hpp:
//                 the process's background connection, shared by its sessions) and its
//                 deadline thread, which declares a hold lost when its time runs out locally
//                 whatever the renewal is stuck in;
//   acquire       a short loop: try, take a ticket in the wait line (in the database), sleep
//                 as lib/core/wait_pacer.hpp says or until a release is seen
//                 (lib/core/release_board.hpp), try again.
// Statements go through the dialect's lease_table_ops / wait_line_ops (lib/core/ops/).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/backend.hpp"
#include "core/backoff.hpp"
#include "core/crypto.hpp"
#include "core/dialect.hpp"
#include "core/link.hpp"
#include "core/lock_family.hpp"
#include "core/ops/lease_table.hpp"
#include "core/ops/replication.hpp"
#include "core/release_board.hpp"
#include "core/text.hpp"
#include "core/wait_pacer.hpp"
#include "dblock/errors.hpp"
#include "dblock/lock.hpp"
#include "dblock/metrics.hpp"

namespace dblock {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;
using detail::backend;
using detail::link;

void validate_lock_name(std::string_view name) {
  if (name.empty()) throw invalid_argument("lock name is empty");
  if (name.size() > 255)
    throw invalid_argument("lock name is " + std::to_string(name.size()) + " bytes long (at most 255)");
  if (auto nul = name.find('\0'); nul != std::string_view::npos)
    throw invalid_argument("lock name contains a NUL byte at offset " + std::to_string(nul));
  std::size_t bad = 0;
  if (!detail::valid_utf8(name, &bad))
    throw invalid_argument("lock name is not valid UTF-8 (bad byte at offset " + std::to_string(bad) + ")");
}

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

struct session_core final : link::job {
  std::shared_ptr<backend> db;  // acquire / release / verify
  const detail::lease_table_ops* table = nullptr;
  const detail::wait_line_ops* line = nullptr;
  session_options opts;
  std::string owner;
  std::string holder;
  clock_type::duration margin{0};  // ttl * max_clock_drift: a hold is lost this long before its deadline
  clock_type::duration period{0};  // between renewals
  std::int64_t row_ttl_ms = 0;     // what the server keeps a row for: the lease plus the lock delay

  std::shared_ptr<link> renewals;  // runs renew() below
  bool renewals_cuttable = false;  // its connection is dblock's own: the deadline thread may cut it
  std::shared_ptr<link> notices;   // LISTEN for releases, when possible (may be `renewals`)
  bool release_notices = false;    // releases of other processes wake waiters (NOTIFY)

  std::mutex mu;
  // Guarded by mu:
  std::unordered_map<std::string, std::shared_ptr<held_lock>> held;
  int tickets = 0;          // this session's live tickets in wait lines (renewed with its leases)
  bool stopping = false;
  bool renewing = false;    // a renewal of this session is in flight on renewals->conn()
  // When the deadline thread cuts that renewal: half a period (at least 1 s) after it was
  // sent, so that a renewal stuck on a silent network is retried on a new connection before
  // the lease runs out. A lease's trusted end cuts it in any case.
  clock_type::time_point renew_cut_at = clock_type::time_point::max();
  clock_type::time_point keeper_next = clock_type::time_point::max();
  // After a failed renewal (the link's thread only): a lost connection is retried sooner
  // than the period, with equal jitter from 100 ms doubling up to the period; a busy
  // single-writer database within 5 ms (full jitter).
  detail::backoff after_failure{{}};
  detail::backoff after_busy{{std::chrono::milliseconds(5), std::chrono::milliseconds(5), 1.0,
                              detail::backoff_policy::jitter::full}};

  // Names last seen held live by another owner: until that holder's expiry, and while no
  // release of the name is seen, a try sends the read-only probe first (a refusal then costs
  // a primary-key read, no write lock).
  struct busy_hint {
    clock_type::time_point until;
    std::uint64_t generation = 0;
  };
  std::unordered_map<std::string, busy_hint> busy;
  // Names this session released itself last: a try sends the dialect's cheaper grant first.
  std::unordered_set<std::string> freed;

  std::thread keeper;  // the deadline thread
  std::condition_variable keeper_cv;

  // ---------------------------------------------------------------- deadline thread

  // Caller holds mu. Wakes the deadline thread when `end` comes before its next wake-up.
  void schedule(clock_type::time_point end) {
    if (end < keeper_next) {
      keeper_next = end;
      keeper_cv.notify_one();
    }
  }

  // Marks h lost once; returns true when this call did it (the caller fires the callback).
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
        // A callback must not take the session's threads down.
      }
    }
  }

  // At each hold's trusted end (deadline - margin) marks it lost and fires on_lost, on a
  // thread that never touches the network; cuts a renewal in flight at its deadline.
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
      bool cut = false;
      if (renewing && renewals_cuttable) {
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
        if (cut) renewals->interrupt();
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

  // ---------------------------------------------------------------- renewal (link job)

  clock_type::time_point renew(backend& conn) noexcept override {
    std::vector<std::string> names;
    // The holds this renewal speaks for: a hold granted after this snapshot is judged next time.
    std::unordered_set<const held_lock*> asked;
    bool waiting = false;
    {
      std::lock_guard l(mu);
      if (stopping) return clock_type::time_point::max();
      for (auto& [n, h] : held)
        if (!h->lost) {
          names.push_back(n);
          asked.insert(h.get());
        }
      waiting = tickets > 0;
      if (names.empty() && !waiting) return clock_type::now() + period;
      renewing = true;
      // Never sooner than 1 s: a renewal of many rows on a busy server is slow, not stuck,
      // and cutting it would lose them all.
      renew_cut_at = clock_type::now() + std::max<clock_type::duration>(period / 2, std::chrono::seconds(1));
      schedule(renew_cut_at);
    }
    const auto t0 = clock_type::now();  // before sending: the local deadline errs early
    std::vector<lost_lease> lost;
    auto next = t0 + period;
    try {
      auto still = table->renew(conn, owner, row_ttl_ms, names, waiting);
      std::sort(still.begin(), still.end());
      detail::count(counter::lock_renewals);
      after_failure.reset();
      std::lock_guard l(mu);
      for (auto& [n, h] : held) {
        if (h->lost || h->granted_at >= t0 || !asked.count(h.get())) continue;
        if (std::binary_search(still.begin(), still.end(), n)) {
          h->deadline = std::max(h->deadline, t0 + opts.ttl);
        } else if (mark_lost(*h, "the lock row is gone or belongs to another owner (expired, taken over or deleted)")) {
          lost.push_back({n, h->fence, h->lost_reason});
        }
      }
    } catch (const std::exception& e) {
      // Keep trying within the lease; each hold is given up at its own trusted end.
      detail::count(counter::lock_renewal_failures);
      const auto now = clock_type::now();
      std::lock_guard l(mu);
      for (auto& [n, h] : held)
        if (!h->lost && now >= h->deadline - margin &&
            mark_lost(*h, std::string("renewal failed until the lease ran out: ") + e.what()))
          lost.push_back({n, h->fence, h->lost_reason});
      next = now + (dynamic_cast<const lock_not_available*>(&e) ? after_busy.next() : after_failure.next());
    }
    {
      std::lock_guard l(mu);
      renewing = false;
      renew_cut_at = clock_type::time_point::max();
    }
    fire(lost);
    return next;
  }

  // ---------------------------------------------------------------- hints

  void note_busy(const std::string& name, const lock_info& h, std::uint64_t generation, clock_type::time_point sent) {
    std::lock_guard l(mu);
    freed.erase(name);
    if (h.expires_in.count() <= 0) return;
    if (busy.size() >= 1024) busy.clear();  // many names tried once: keep it small
    busy[name] = {sent + h.expires_in, generation};
  }

  void note_freed(const std::string& name) {
    std::lock_guard l(mu);
    if (freed.size() >= 1024) freed.clear();
    freed.insert(name);
  }

  // ---------------------------------------------------------------- one try

  // One try of `name` with line bound `bound` (lease_table.hpp); the refusing holder's row
  // in *refused when known.
  std::optional<lease> try_once(const std::shared_ptr<session_core>& self, const std::string& name,
                                std::int64_t bound, std::optional<lock_info>* refused) {
    const auto generation = detail::release_board::get().generation(name);  // before sending
    bool probe_first = false;
    detail::grant_request req{name, owner, row_ttl_ms, opts.lock_delay.count(), holder, bound, false};
    {
      std::lock_guard l(mu);
      if (auto it = held.find(name); it != held.end() && !it->second->lost) {
        if (opts.scope == owner_scope::thread && it->second->thread != std::this_thread::get_id()) {
          detail::count(counter::lock_not_acquired);
          return std::nullopt;  // another thread of this session owns it
        }
        req.line_bound = detail::ahead_of_every_waiter;  // a re-entry never queues
      }
      req.likely_free = freed.count(name) > 0;
      if (auto it = busy.find(name); it != busy.end()) {
        probe_first = clock_type::now() < it->second.until && it->second.generation == generation;
        if (!probe_first) busy.erase(it);
      }
    }
    // From here to the record in `held`, under the connection's mutex: no other thread of
    // this session changes the row's holds in between (a final release deciding on its
    // local count and then deleting could otherwise delete a hold re-entered meanwhile).
    return db->exclusive([&]() -> std::optional<lease> {
      const auto t0 = clock_type::now();  // before sending: the local deadline errs early
      detail::grant_outcome r;
      if (probe_first) {
        r.state = table->probe(*db, name, owner);
        if (!r.state) req.likely_free = true;  // no live holder: free (or expired, or ours)
      }
      if (!r.state) r = detail::retry_conflicts(*db, [&] { return table->acquire(*db, req); });
      if (r.granted && r.state && req.line_bound == detail::ahead_of_every_waiter) {
        // A re-entry answered with another fence than the hold's: the hold's own grant is
        // gone (a failover lost it and brought back an older grant of this owner, with a
        // smaller fence). The hold is lost; where the dialect grants such a row afresh, ask
        // again as a try that does not hold the name, for a new, larger fence.
        std::vector<lost_lease> gone;
        {
          std::lock_guard l(mu);
          auto it = held.find(name);
          if (it != held.end() && it->second->fence != r.state->fence &&
              mark_lost(*it->second, "the lock row carries fence " + std::to_string(r.state->fence) +
                                         ", not this lease's: its grant was lost (a failover)"))
            gone.push_back({name, it->second->fence, it->second->lost_reason});
        }
        fire(gone);
        if (!gone.empty() && r.state->fence < gone.front().fence &&
            detail::traits_of(db->kind()).fresh_grant_on_unheld_own_row) {
          req.line_bound = detail::behind_every_waiter;
          r = detail::retry_conflicts(*db, [&] { return table->acquire(*db, req); });
        }
      }
      if (!r.granted) {
        detail::count(counter::lock_not_acquired);
        if (r.state) {
          note_busy(name, *r.state, generation, t0);
        } else if (req.likely_free) {
          std::lock_guard l(mu);
          freed.erase(name);  // not free after all: no second guess
        }
        if (refused) *refused = std::move(r.state);
        return std::nullopt;
      }
      return adopt(self, name, r.state->fence, t0);
    });
  }

  // Records a grant of `name` with `fence`, sent at t0, as a hold of this session (renewed,
  // watched by the deadline thread). The caller holds db's mutex (see try_once).
  lease adopt(const std::shared_ptr<session_core>& self, const std::string& name, std::int64_t fence,
              clock_type::time_point t0) {
    detail::count(counter::lock_acquired);
    std::shared_ptr<held_lock> h;
    {
      std::lock_guard l(mu);
      busy.erase(name);
      freed.erase(name);
      auto& slot = held[name];
      if (!slot || slot->lost || slot->fence != fence) {
        slot = std::make_shared<held_lock>();
        slot->name = name;
        slot->fence = fence;
      }
      h = slot;
      ++h->local_holds;
      h->thread = std::this_thread::get_id();
      h->granted_at = t0;
      h->deadline = t0 + opts.ttl;
      schedule(h->deadline - margin);
    }
    return lease(self, h);
  }

  // The grant request a try of `name` sends outside the wait line: a re-entry when this
  // session holds it. Empty when another thread of the session owns it (owner_scope::thread).
  std::optional<detail::grant_request> request_for(const std::string& name) {
    detail::grant_request req{name, owner, row_ttl_ms, opts.lock_delay.count(), holder, detail::behind_every_waiter,
                              false};
    std::lock_guard l(mu);
    if (auto it = held.find(name); it != held.end() && !it->second->lost) {
      if (opts.scope == owner_scope::thread && it->second->thread != std::this_thread::get_id()) return std::nullopt;
      req.line_bound = detail::ahead_of_every_waiter;
    }
    return req;
  }

  static std::shared_ptr<session_core> of(session& s) { return s.core_; }

  void stop() {
    bool cut = false;
    {
      std::lock_guard l(mu);
      stopping = true;
      cut = renewing && renewals_cuttable;
    }
    if (cut) renewals->interrupt();  // do not wait out a renewal stuck on a silent network
    if (renewals) renewals->remove(this);
    keeper_cv.notify_all();
    if (keeper.joinable()) keeper.join();
  }
};

namespace {

std::string default_holder() {
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host) + ":" + std::to_string(::getpid());
}

std::string describe_holder(const std::string& name, const std::optional<lock_info>& h) {
  if (!h) return "lock '" + name + "' is held by another owner or promised to an earlier waiter";
  return "lock '" + name + "' is held by '" + h->holder + "' (fence " + std::to_string(h->fence) + ") until " +
         h->expires_at + " server time (" + std::to_string(h->expires_in.count()) + " ms from now)";
}

// A waiter's ticket in the wait line of one name; given up when the acquire returns without
// a grant that consumed it.
class ticket {
 public:
  explicit ticket(session_core& c) : c_(c) {}
  ticket(const ticket&) = delete;
  ticket& operator=(const ticket&) = delete;
  ~ticket() {
    if (!held_) return;
    try {
      c_.line->leave(*c_.db, number_, c_.owner);
    } catch (...) {
      // The ticket expires when the session stops renewing it.
    }
    forget();
  }

  // Takes a ticket; false (and polling without one) when that failed.
  bool join(const std::string& name) {
    try {
      number_ = c_.line->join(*c_.db, name, c_.owner, c_.row_ttl_ms);
    } catch (const std::exception&) {
      return false;
    }
    held_ = true;
    std::lock_guard l(c_.mu);
    ++c_.tickets;
    return true;
  }
  [[nodiscard]] bool held() const noexcept { return held_; }
  [[nodiscard]] std::int64_t number() const noexcept { return number_; }
  [[nodiscard]] std::int64_t bound() const noexcept { return held_ ? number_ : detail::behind_every_waiter; }
  // Granted: the grant deleted the ticket, or it is deleted now, before the hold starts, so
  // that it never blocks the next waiter.
  void granted() {
    if (!held_) return;
    if (!c_.table->grant_consumes_ticket()) {
      try {
        c_.line->leave(*c_.db, number_, c_.owner);
      } catch (...) {
        // Left to expire: the next waiter waits at most one TTL for it.
      }
    }
    forget();
  }

 private:
  void forget() {
    held_ = false;
    std::lock_guard l(c_.mu);
    --c_.tickets;
  }
  session_core& c_;
  bool held_ = false;
  std::int64_t number_ = 0;
};

}  // namespace

// ----------------------------------------------------------------------------- session

session::session(database db, session_options opts) : core_(std::make_shared<session_core>()) {
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
  detail::check_replication_once(*c.db, opts.replication, "session start");
  c.table = &detail::lease_table_for(c.db->kind());
  c.line = &detail::wait_line_for(c.db->kind());
  c.opts = std::move(opts);
  c.margin = std::chrono::duration_cast<clock_type::duration>(
      std::chrono::duration<double, std::milli>(static_cast<double>(c.opts.ttl.count()) * c.opts.max_clock_drift));
  c.period = std::max<clock_type::duration>(milliseconds(10), c.opts.ttl / c.opts.renew_divisor);
  const auto period_us = std::chrono::duration_cast<std::chrono::microseconds>(c.period);
  c.after_failure = detail::backoff({std::min<std::chrono::microseconds>(period_us, milliseconds(100)), period_us, 2.0,
                                     detail::backoff_policy::jitter::equal});
  c.row_ttl_ms = c.opts.ttl.count() + c.opts.lock_delay.count();
  c.owner = detail::random_hex(16);
  c.holder = c.opts.holder.empty() ? default_holder() : c.opts.holder;
  if (c.holder.size() > 255) c.holder.resize(255);
  if (c.db->can_reopen()) {
    // The background connection's timeouts are half the renewal period (at least 1 s): a
    // renewal stuck on a silent network fails and is retried well before its lease runs out.
    auto o = c.db->options();
    const auto bound = c.opts.ttl / c.opts.renew_divisor / 2;
    o.network_timeout = std::clamp<milliseconds>(bound, std::chrono::seconds(1),
                                                 std::max<milliseconds>(o.network_timeout, std::chrono::seconds(1)));
    o.connect_timeout = std::clamp(std::chrono::ceil<std::chrono::seconds>(bound), std::chrono::seconds(1),
                                   std::max(o.connect_timeout, std::chrono::seconds(1)));
    const bool wants_notices = c.opts.listen && detail::traits_of(c.db->kind()).notify && !c.db->pooled();
    if (c.opts.renew_on == renewal_connection::shared || wants_notices) c.notices = link::shared(*c.db, o);
    c.release_notices = wants_notices;
    c.renewals = c.opts.renew_on == renewal_connection::shared ? c.notices : link::on(c.db);
    c.renewals_cuttable = true;
  } else {
    c.renewals = link::on(c.db);  // an attached connection: never cut the application's connection
  }
  try {
    c.keeper = std::thread([core = core_.get()] { core->keeper_loop(); });
  } catch (...) {
    c.stop();
    throw;
  }
  c.renewals->add(core_.get(), clock_type::now() + c.period);
}

session::~session() { core_->stop(); }

const std::string& session::owner() const noexcept { return core_->owner; }
milliseconds session::ttl() const noexcept { return core_->opts.ttl; }
milliseconds session::margin() const noexcept { return std::chrono::duration_cast<milliseconds>(core_->margin); }
milliseconds session::renew_period() const noexcept { return core_->opts.ttl / core_->opts.renew_divisor; }

std::optional<lock_info> session::holder_of(std::string_view name) {
  validate_lock_name(name);
  return core_->table->holder(*core_->db, std::string(name));
}

std::optional<lease> session::try_acquire(std::string_view name_view) {
  validate_lock_name(name_view);
  return core_->try_once(core_, std::string(name_view), detail::behind_every_waiter, nullptr);
}

lease session::acquire(std::string_view name_view, milliseconds wait) {
  validate_lock_name(name_view);
  if (wait < milliseconds(0)) throw invalid_argument("negative wait " + std::to_string(wait.count()) + " ms");
  auto& c = *core_;
  const std::string name(name_view);
  auto& board = detail::release_board::get();
  const auto started = clock_type::now();
  const auto deadline = started + wait;
  detail::wait_pacer pacer(c.opts.min_backoff, c.opts.max_backoff, started, std::random_device{}(), c.release_notices);
  ticket place(c);
  std::int64_t ahead = 0;  // live tickets before ours, when we have one
  auto record_wait = [&] {
    detail::count(counter::lock_waits);
    detail::observe_wait(std::chrono::duration<double>(clock_type::now() - started).count());
  };
  for (int attempt = 0;; ++attempt) {
    const auto seen = board.generation(name);  // read before looking: a release after this wakes us
    std::optional<lock_info> h;
    const bool tries = ahead == 0;
    if (tries) {  // no ticket, or first in line: try
      std::optional<lease> l;
      try {
        l = c.try_once(core_, name, place.bound(), &h);
      } catch (const transaction_conflict&) {
        // Still a deadlock victim after the quick retries: contention; keep waiting.
      }
      if (l) {
        place.granted();
        if (attempt > 0) record_wait();
        return std::move(*l);
      }
    }
    auto now = clock_type::now();
    if (!h && ((tries && (!c.table->refusal_names_holder() || attempt == 0)) || now >= deadline)) {
      // The refusal did not say who holds it: the pacer wants the holder's fence, the
      // timeout message its name. Busy now and then on a single-writer database: go without.
      try {
        h = c.table->holder(*c.db, name);
      } catch (const lock_not_available&) {
      }
      if (h && !c.table->refusal_names_holder()) c.note_busy(name, *h, seen, now);
    }
    if (now >= deadline) {
      if (attempt > 0) record_wait();
      throw timeout_error(describe_holder(name, h) + "; not acquired within " + std::to_string(wait.count()) + " ms");
    }
    const bool joined = c.opts.fair && !place.held() && place.join(name);
    if (joined) pacer.reset(now);
    if (place.held()) {
      // Only the first in line tries; the others read where they stand (a read, no try).
      const auto was_ahead = ahead;
      try {
        const auto pos = c.line->position(*c.db, name, place.number());
        ahead = pos.ahead;
        if (pos.fence != 0) pacer.refused(pos.fence, now);
      } catch (const std::exception&) {
        ahead = 0;  // could not tell: try next time
      }
      if (ahead == 0 && (joined || was_ahead > 0)) {
        pacer.first_in_line();  // first in line now: try at once, backoff from the start
        continue;
      }
    }
    if (ahead == 0) {
      pacer.refused(h ? std::optional<std::int64_t>(h->fence) : std::nullopt, now);
      const auto sleep = pacer.next(h ? std::optional<milliseconds>(h->expires_in) : std::nullopt, now);
      if (c.notices && c.opts.listen) c.notices->listen();
      board.wait(name, seen, std::min(deadline, clock_type::now() + sleep));
    } else {
      // `ahead` grants must come before ours: sleep as the pacer says for that place, or
      // until as many releases are seen here.
      const auto sleep = pacer.behind(ahead, now);
      if (c.notices && c.opts.listen) c.notices->listen();
      board.wait(name, seen, std::min(deadline, clock_type::now() + sleep), static_cast<std::uint64_t>(ahead));
    }
  }
}

std::vector<lock_info> list_locks(database& db) {
  auto b = detail::backend_of(db);
  return detail::lease_table_for(b->kind()).list(*b);
}

// ----------------------------------------------------------------------------- lease

lease::lease(std::shared_ptr<session_core> core, std::shared_ptr<held_lock> h)
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
  using detail::release_outcome;
  // The local count and the row's holds change together, under the connection's mutex (see
  // session_core::try_once): with owner_scope::session another thread may re-enter through
  // the database, and a final release decided before that re-entry but sent after it would
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
          core->held.erase(it);  // no longer renewed
        } else if (it != core->held.end() && !it->second->lost && it->second->fence == h->fence) {
          // This lease was marked lost and the name was re-entered since: the row is that
          // hold's now. Leave it; its final release deletes it, holds and all.
          return std::nullopt;
        }
      }
    }
    // Even a lost lease's row is deleted if it is somehow still ours: the WHERE owner and
    // fence make that safe, and it frees the name sooner.
    const bool no_flush = core->opts.async_release && core->table->async_release();
    return detail::retry_conflicts(*core->db, [&] {
      return core->table->release(*core->db, h->name, core->owner, h->fence, final_hold, no_flush);
    });
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
      if (session_core::mark_lost(*h, "the lock row was gone or belonged to another owner at release"))
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
  if (!core_->table->verify(*detail::backend_of(tx), h_->name, core_->owner, h_->fence)) {
    std::vector<lost_lease> lost;
    {
      std::lock_guard l(core_->mu);
      if (session_core::mark_lost(*h_, "verify_in found the lock row gone, expired or re-granted"))
        lost.push_back({h_->name, h_->fence, h_->lost_reason});
    }
    core_->fire(lost);
    throw lock_lost("lock '" + h_->name + "' (fence " + std::to_string(h_->fence) + ") is no longer held");
  }
}

// ----------------------------------------------------------------------------- lock family access

namespace detail {
std::shared_ptr<session_core> core_of(session& s) { return session_core::of(s); }
backend& db_of(session_core& c) { return *c.db; }
const lease_table_ops& table_of(session_core& c) { return *c.table; }
const session_options& options_of(const session_core& c) { return c.opts; }
const std::string& owner_of(const session_core& c) { return c.owner; }
std::optional<grant_request> request_for(session_core& c, const std::string& name) { return c.request_for(name); }
lease adopt_grant(const std::shared_ptr<session_core>& c, const std::string& name, std::int64_t fence,
                  std::chrono::steady_clock::time_point t0) {
  return c->adopt(c, name, fence, t0);
}
bool hears_releases(const session_core& c) noexcept { return c.release_notices; }
void listen_for_releases(session_core& c) {
  if (c.notices && c.opts.listen) c.notices->listen();
}
}  // namespace detail

}  // namespace dblock
