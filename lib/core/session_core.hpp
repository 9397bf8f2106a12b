// lib/core/session_core.hpp — the inside of a dblock::session (dblock/lock.hpp), shared by
// lib/core/lock.cpp (lease locks) and lib/core/holders.cpp (read-write locks and semaphores):
//   held_lock     one hold of the session (a lease lock, a read-write lock's row or a
//                 semaphore permit), keyed in session_core::held by its name or holder_key();
//   session_core  the session's holds, its renewal job (run by a link, lib/core/link.hpp:
//                 the process's background connection, shared by its sessions) and its
//                 deadline thread, which declares a hold lost when its time runs out locally
//                 whatever the renewal is stuck in;
//   wait_for      the waiting acquire: try, take a ticket in the wait line (in the database),
//                 sleep as lib/core/wait_pacer.hpp says or until a release is seen
//                 (lib/core/release_board.hpp), try again.
// Crash detection's waiter side (docs/locks.md, "Crash detection") is here too: a lease lock's
// try probes its holder's marker itself (try_once, take_over_gone); the tries of read-write
// locks, semaphores (lib/core/holders.cpp) and multi-lock members (lib/core/multi_lock.cpp)
// go through take_over_blockers / take_over_member before they try again.
// Internal.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/backend.hpp"
#include "core/backoff.hpp"
#include "core/dialect.hpp"
#include "core/link.hpp"
#include "core/liveness.hpp"
#include "core/ops/holders.hpp"
#include "core/ops/lease_table.hpp"
#include "core/ops/liveness.hpp"
#include "core/release_board.hpp"
#include "core/wake_file.hpp"
#include "core/wait_pacer.hpp"
#include "dblock/errors.hpp"
#include "dblock/lock.hpp"
#include "dblock/metrics.hpp"

namespace dblock {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;
using detail::backend;
using detail::link;

struct held_lock {
  std::string name;
  std::int64_t fence = 0;  // guarded by session_core::mu for read-write holds (an upgrade draws a new one)
  lock_mode mode = lock_mode::exclusive;  // exclusive (a lease lock), read (a read-write row) or permit
  std::int64_t slot = 0;                  // a permit's slot
  int write_holds = 0;                    // a read-write row's local write holds (guarded by mu)
  // Everything below is guarded by session_core::mu.
  int local_holds = 0;
  std::thread::id thread;
  clock_type::time_point granted_at;
  clock_type::time_point deadline;
  std::uint64_t marker_epoch = 0;  // the session's liveness marker when the grant was sent
  // Granted through the wait line: the name has waiters, so the final release hands it to
  // the head of the line (lease_table_ops::release, to_line).
  bool via_line = false;
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
  // SQLite: the wake file of the database file (every release posts there; with opts.listen
  // waiters sleep on it, woken by releases of other processes too).
  std::shared_ptr<detail::wake_file> wake;

  // Crash detection (lib/core/liveness.hpp). Holder side: this session's marker, when it
  // holds one (its owner token then starts with 'm'), bounds how long each hold is trusted.
  std::shared_ptr<link> live_link;  // the link holding the marker (keeps it open)
  std::shared_ptr<detail::liveness> live;
  std::shared_ptr<detail::liveness::marker> mark;
  // Waiter side: set when this session takes over locks whose holder's marker is gone.
  const detail::liveness_ops* live_ops = nullptr;

  std::mutex mu;
  // Guarded by mu:
  std::unordered_map<std::string, std::shared_ptr<held_lock>> held;
  int tickets = 0;          // this session's live tickets in wait lines (renewed with its leases)
  // With owner_scope::thread: each lease lock's waiting threads, by name, with their tickets.
  // The session's threads share one owner, so a row a release handed one of them (not yet
  // read by it) looks like the session's own row to the others: try_once keeps them out as
  // the line would.
  std::unordered_multimap<std::string, std::pair<std::int64_t, std::thread::id>> thread_tickets;
  // This session's lease-lock tickets: when each was sent and the marker epoch then. A grant a
  // release made for the ticket came later, so a hand-off notice's grant is trusted from that
  // time (adopt_handed).
  struct ticket_join {
    clock_type::time_point at;
    std::uint64_t epoch = 0;
  };
  std::unordered_map<std::int64_t, ticket_join> ticket_joins;
  // Tickets whose delete failed (a deadlock victim past its retries, a lost connection). The
  // renewal keeps every live ticket of the owner while the session waits for any name, so
  // such a ticket would not expire while the session keeps waiting, and a later wait for its
  // name would queue behind it: each wait deletes them first (drop_stale_tickets).
  std::vector<std::int64_t> stale_tickets;
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
  // Names whose live holder's marker was seen free: the grant and when it was first seen.
  // The holder's lease is ended (lock_reclaim.sql) once the marker stayed free for the grace.
  struct gone_holder {
    std::int64_t fence = 0;
    clock_type::time_point seen;
  };
  // Keyed by the lock's name, or for a hold of dblock_lock_holders by gone_key() (a NUL first:
  // never a name).
  std::unordered_map<std::string, gone_holder> gone_holders;
  // Read-write locks and semaphores: the live holds of other owners that refused this
  // session's last try of a name, kept only while one of them keeps a marker, with the
  // release generation read before that try (note_blockers, take_over_blockers).
  struct blocking_hold {
    std::string owner;
    std::int64_t slot = 0;
    std::int64_t fence = 0;
    int write_holds = 0;
  };
  struct blocked_try {
    std::vector<blocking_hold> holds;
    std::string request;  // what the try asked for (mode, permit counts): another request may fit
    std::uint64_t generation = 0;
    std::thread::id by;    // the thread whose try was refused: only it stamps
    bool stamped = false;  // request and generation set (by take_over_then, after the try)
  };
  std::unordered_map<std::string, blocked_try> blockers;
  // Multi-lock members last seen held by an owner without a marker: the name and that grant's
  // fence (take_over_member does not probe it again).
  std::unordered_map<std::string, std::int64_t> plain_holders;

  std::thread keeper;  // the deadline thread
  std::condition_variable keeper_cv;

  ~session_core() override {
    if (live) live->forget(mark);  // the last lease of the session is gone
  }

  // The marker epoch to record with a grant about to be sent (read before sending, like t0).
  [[nodiscard]] std::uint64_t marker_epoch_now() const { return mark ? live->epoch(*mark) : 0; }
  // Caller holds mu. With a marker, until when hold h may be trusted as far as its marker
  // connection is concerned: its last confirmation + the window (the clock's epoch once
  // that connection ended); without one, never ends.
  [[nodiscard]] clock_type::time_point marker_end(const held_lock& h) const {
    return mark ? live->trusted_until(*mark, h.marker_epoch) : clock_type::time_point::max();
  }
  // Caller holds mu. When the deadline thread declares hold h lost: at its lease's local
  // deadline minus the margin, or at its marker's end if that comes first.
  [[nodiscard]] clock_type::time_point trusted_end(const held_lock& h) const {
    return std::min(h.deadline - margin, marker_end(h));
  }

  // ---------------------------------------------------------------- deadline thread

  // Caller holds mu. Wakes the deadline thread when `end` comes before its next wake-up.
  void schedule(clock_type::time_point end) {
    if (end < keeper_next) {
      keeper_next = end;
      keeper_cv.notify_one();
    }
  }

  // A lease on hold h (lease's constructor is for the session's own code only).
  static lease make_lease(std::shared_ptr<session_core> self, std::shared_ptr<held_lock> h, lock_mode mode) {
    return lease(std::move(self), std::move(h), mode);
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
        const auto end = trusted_end(*h);
        if (now < end) {
          next = std::min(next, end);
        } else if (mark_lost(*h, end < h->deadline - margin
                                     ? "the connection holding this session's liveness marker ended or was not confirmed "
                                       "within " + std::to_string(mark->window.count()) +
                                           " ms (crash detection: a waiter may take the lock over)"
                                     : "the lease ran out before a renewal was confirmed (local deadline minus the " +
                                           std::to_string(std::chrono::duration_cast<milliseconds>(margin).count()) +
                                           " ms clock-drift margin)")) {
          lost.push_back({h->name, h->fence, h->lost_reason});
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
          lost.push_back({h->name, h->fence, h->lost_reason});
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
          lost.push_back({h->name, h->fence, h->lost_reason});
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

  // owner_scope::thread (caller holds mu): another thread of this session holds `name`, or
  // waits for it ahead of a try with line bound `bound`. Its threads share one owner token,
  // so the server would take such a try for a re-entry of the session's row (or of a row a
  // release handed the other thread).
  bool other_thread_first(const std::string& name, std::int64_t bound) const {
    if (opts.scope != owner_scope::thread) return false;
    const auto me = std::this_thread::get_id();
    if (auto it = held.find(name); it != held.end() && !it->second->lost) return it->second->thread != me;
    auto [from, to] = thread_tickets.equal_range(name);
    for (; from != to; ++from)
      if (from->second.second != me && from->second.first < bound) return true;
    return false;
  }

  // One try of `name` with line bound `bound` (lease_table.hpp); the refusing holder's row
  // in *refused when known; *handed set when a release handed the grant to the ticket
  // `bound` (and deleted that ticket).
  std::optional<lease> try_once(const std::shared_ptr<session_core>& self, const std::string& name,
                                std::int64_t bound, std::optional<lock_info>* refused, bool* handed = nullptr) {
    const auto generation = detail::release_board::get().generation(name);  // before sending
    bool probe_first = false;
    std::int64_t line_bound = bound;
    bool likely_free = false;
    {
      std::lock_guard l(mu);
      if (other_thread_first(name, bound)) {
        detail::count(counter::lock_not_acquired);
        return std::nullopt;
      }
      if (auto it = held.find(name); it != held.end() && !it->second->lost)
        line_bound = detail::ahead_of_every_waiter;  // a re-entry never queues
      likely_free = freed.count(name) > 0;
      if (auto it = busy.find(name); it != busy.end()) {
        probe_first = clock_type::now() < it->second.until && it->second.generation == generation;
        if (!probe_first) busy.erase(it);
      }
    }
    bool backed = false;  // the refusing holder keeps a marker: look again soon
    clock_type::duration look_again = detail::liveness::look_again_for(detail::liveness::window_of(0));
    // The grant statement's request, built when it runs: a try the probe answers (a refused
    // try of a name seen busy) copies no strings.
    std::optional<detail::grant_request> req;
    auto acquire = [&] {
      if (!req) req.emplace(detail::grant_request{name, owner, row_ttl_ms, opts.lock_delay.count(), holder});
      req->line_bound = line_bound;
      req->likely_free = likely_free;
      return detail::retry_conflicts(*db, [&] { return table->acquire(*db, *req); });
    };
    // From here to the record in `held`, under the connection's mutex: no other thread of
    // this session changes the row's holds in between (a final release deciding on its
    // local count and then deleting could otherwise delete a hold re-entered meanwhile).
    return db->exclusive([&]() -> std::optional<lease> {
      if (opts.scope == owner_scope::thread && line_bound != detail::ahead_of_every_waiter) {
        // Again under the connection's mutex: another thread's grant may have been recorded
        // since the look above, and this try would re-enter the session's row.
        std::lock_guard l(mu);
        if (other_thread_first(name, line_bound)) {
          detail::count(counter::lock_not_acquired);
          return std::nullopt;
        }
      }
      const auto epoch = marker_epoch_now();  // before sending, like t0
      const auto t0 = clock_type::now();  // before sending: the local deadline errs early
      detail::grant_outcome r;
      if (probe_first && live_ops) {
        // try_acquire reports no holder: fence, time left and marker state are all it uses.
        auto m = refused ? live_ops->probe(*db, name, owner) : live_ops->probe_expiry(*db, name, owner);
        if (m) {
          backed = m->backed;
          if (backed) look_again = detail::liveness::look_again_for(detail::liveness::window_of(m->window_code));
          if (m->gone && take_over_gone(name, *m, look_again)) {
            m.reset();  // the holder's lease is ended: the grant below takes the row over
          } else {
            if (!m->gone) {
              std::lock_guard l(mu);
              gone_holders.erase(name);  // held again: a later free marker starts a new grace
            }
            r.state = std::move(m->row);
          }
        }
        if (!r.state && !m && !backed) likely_free = true;
      } else if (probe_first) {
        if (refused) {
          r.state = table->probe(*db, name, owner);
        } else if (const auto left = table->probe_expiry(*db, name, owner)) {
          r.state.emplace();  // nobody reads the holder: its time left is all note_busy needs
          r.state->expires_in = *left;
        }
        if (!r.state) likely_free = true;  // no live holder: free (or expired, or ours)
      }
      if (!r.state) r = acquire();
      if (r.granted && r.state && line_bound == detail::ahead_of_every_waiter) {
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
          line_bound = detail::behind_every_waiter;
          r = acquire();
        }
      }
      if (!r.granted) {
        detail::count(counter::lock_not_acquired);
        if (r.state) {
          note_busy(name, *r.state, generation, t0);
        } else if (likely_free) {
          std::lock_guard l(mu);
          freed.erase(name);  // not free after all: no second guess
        }
        if (refused) {
          *refused = std::move(r.state);
          // A holder with a marker may be gone any moment: look again within the grace,
          // whatever its expiry (the pacer never sleeps past expires_in).
          if (backed && *refused)
            (*refused)->expires_in = std::min((*refused)->expires_in, std::chrono::ceil<milliseconds>(look_again));
        }
        return std::nullopt;
      }
      if (detail::is_line_ticket(line_bound)) {
        if (handed) *handed = r.handed;
        // A waiter's grant may have been made by the previous holder's release, before t0:
        // the lease is trusted no longer than the row's time left as the server answered
        // (less the lock delay, which the row's TTL includes).
        const auto left = std::max(milliseconds(0), r.state->expires_in - opts.lock_delay);
        return adopt(self, name, r.state->fence, t0, epoch, left);
      }
      return adopt(self, name, r.state->fence, t0, epoch);
    });
  }

  // Records a grant of `name` with `fence`, sent at t0, as a hold of this session (renewed,
  // watched by the deadline thread). `line_left`: granted through the wait line, with this
  // much of the lease left when the server answered (the deadline is t0 plus the lesser of
  // that and the TTL). The caller holds db's mutex (see try_once).
  lease adopt(const std::shared_ptr<session_core>& self, const std::string& name, std::int64_t fence,
              clock_type::time_point t0, std::uint64_t epoch, std::optional<milliseconds> line_left = std::nullopt) {
    detail::count(counter::lock_acquired);
    std::shared_ptr<held_lock> h;
    {
      std::lock_guard l(mu);
      busy.erase(name);
      freed.erase(name);
      auto& slot = held[name];
      if (!slot || slot->lost || slot->fence != fence) {
        // A re-entry of a grant lost with its marker connection keeps that grant's epoch:
        // a waiter may already be ending that grant, so it is never trusted again.
        const auto grant_epoch = slot && slot->fence == fence ? slot->marker_epoch : epoch;
        slot = std::make_shared<held_lock>();
        slot->name = name;
        slot->fence = fence;
        slot->marker_epoch = grant_epoch;
      }
      h = slot;
      ++h->local_holds;
      h->thread = std::this_thread::get_id();
      h->granted_at = t0;
      h->deadline = t0 + (line_left ? std::min(*line_left, opts.ttl) : opts.ttl);
      if (line_left) h->via_line = true;
      schedule(trusted_end(*h));
    }
    return lease(self, h);
  }

  // A hand-off notice (release_board) named ticket `bound` of this session for `name`: holds
  // the lock from it, without reading the grant. The release's transaction began after the
  // ticket was inserted, so the lease is trusted for the TTL from the ticket's send time. When
  // a quarter of the TTL has passed since, nothing: the try reads the grant and its time left.
  std::optional<lease> adopt_handed(const std::shared_ptr<session_core>& self, const std::string& name,
                                    std::int64_t bound) {
    ticket_join j;
    {
      std::lock_guard l(mu);
      auto it = ticket_joins.find(bound);
      if (it == ticket_joins.end()) return std::nullopt;
      j = it->second;
    }
    if (clock_type::now() - j.at >= opts.ttl / 4) return std::nullopt;
    const auto fence = detail::release_board::get().take_handed(name, owner, bound);
    if (!fence) return std::nullopt;
    detail::count(counter::lock_handoff_notices);
    return db->exclusive([&] { return std::optional<lease>(adopt(self, name, *fence, j.at, j.epoch, opts.ttl)); });
  }

  // A holder's marker was just seen free for grant `fence` (key: the lock's name or a hold's
  // gone_key()). The first sighting of that grant starts the grace: true once the marker has
  // been free that long, else `look_again` is how long until the grace ends.
  bool grace_over(const std::string& key, std::int64_t fence, int window_code, clock_type::duration& look_again) {
    const auto now = clock_type::now();  // after the answer: the grace errs long
    const auto grace = detail::liveness::grace_for(detail::liveness::window_of(window_code));
    std::lock_guard l(mu);
    auto it = gone_holders.find(key);
    if (it == gone_holders.end() || it->second.fence != fence) {
      if (gone_holders.size() >= 1024) gone_holders.clear();
      gone_holders[key] = {fence, now};
      look_again = grace;
      return false;
    }
    if (now - it->second.seen < grace) {
      look_again = it->second.seen + grace - now;
      return false;
    }
    return true;
  }

  // The holder of `name` refused us and its marker is free (m.gone). Once the marker has
  // stayed free for the grace (grace_over), the grant is ended on the server
  // (lock_reclaim.sql re-checks the marker) and true is returned. The caller holds db's mutex.
  bool take_over_gone(const std::string& name, const detail::marked_holder& m, clock_type::duration& look_again) {
    if (!grace_over(name, m.row.fence, m.window_code, look_again)) return false;
    const bool ended = live_ops->reclaim(*db, name, owner, m.row.fence);
    std::lock_guard l(mu);
    gone_holders.erase(name);
    if (ended) {
      busy.erase(name);
      detail::count(counter::lock_crash_takeovers);
    }
    return ended;
  }

  // ---------------------------------------------------------------- early takeover (holds, multi-locks)

  // Where a hold of dblock_lock_holders (name, owner, slot) keeps its grace in gone_holders.
  static std::string gone_key(const std::string& name, const std::string& hold_owner, std::int64_t slot) {
    auto k = detail::holder_key(name, slot);
    k += '\0';
    k += hold_owner;
    return k;
  }

  // Called by a refused try of read-write lock or semaphore `name` (lib/core/holders.cpp)
  // with the live holds of other owners in its way. When one of them keeps a marker, they
  // are kept for take_over_blockers and a refusal reported in *refused says to look again
  // within that holder's look interval (the pacer never sleeps past expires_in).
  void note_blockers(const std::string& name, const std::vector<detail::holder_row>& in_way,
                     std::optional<lock_info>* refused) {
    if (!live_ops) return;
    int code = -1;  // the smallest window code among marker-backed holders
    for (const auto& r : in_way)
      if (const auto c = detail::marker_window_code(r.owner)) code = code < 0 ? *c : std::min(code, *c);
    std::lock_guard l(mu);
    if (code < 0) {
      blockers.erase(name);
      return;
    }
    if (blockers.size() >= 1024) blockers.clear();
    auto& b = blockers[name];
    b = {};
    b.by = std::this_thread::get_id();
    for (const auto& r : in_way) b.holds.push_back({r.owner, r.slot, r.info.fence, r.write_holds});
    if (refused && *refused) {
      const auto look = detail::liveness::look_again_for(detail::liveness::window_of(code));
      (*refused)->expires_in = std::min((*refused)->expires_in, look);
    }
  }

  // Before a try of read-write lock or semaphore `name` for `request` that was refused last
  // time, for the same request, by holds of which one keeps a marker (note_blockers): reads
  // those holds with their markers (holders_probe_marker.sql, one read-only round trip) and
  // ends each hold whose marker has stayed free for the grace (take_over_hold). Returns true
  // when the try would be refused again and is not sent: every hold that refused it is still
  // live with the same grant and write holds, none was ended, and no release of the name was
  // seen since (`generation`, read before this call); *refused then says whom to wait for and
  // to look again soon.
  bool take_over_blockers(const std::string& name, const std::string& request, std::uint64_t generation,
                          std::optional<lock_info>* refused) {
    blocked_try last;
    {
      std::lock_guard l(mu);
      auto it = blockers.find(name);
      if (!live_ops || it == blockers.end() || !it->second.stamped || it->second.request != request) return false;
      last = it->second;
    }
    std::vector<detail::marked_hold> now_held;
    try {
      now_held = live_ops->probe_holds(*db, name, owner);
    } catch (const std::exception&) {
      return false;  // the try says what is wrong
    }
    bool unchanged = generation == last.generation, ended = false;
    clock_type::duration look = clock_type::duration::max();
    const lock_info* soonest = nullptr;
    for (const auto& want : last.holds) {
      const auto m = std::find_if(now_held.begin(), now_held.end(), [&](const detail::marked_hold& h) {
        return h.owner == want.owner && h.slot == want.slot;
      });
      if (m == now_held.end() || m->row.fence != want.fence || m->write_holds != want.write_holds) {
        unchanged = false;  // released, expired, ended or changed: try
        continue;
      }
      if (!soonest || m->row.expires_in < soonest->expires_in) soonest = &m->row;
      if (!m->backed) continue;
      auto wait = clock_type::duration(detail::liveness::look_again_for(detail::liveness::window_of(m->window_code)));
      const auto key = gone_key(name, m->owner, m->slot);
      if (!m->gone) {
        std::lock_guard l(mu);
        gone_holders.erase(key);  // held: a later free marker starts a new grace
      } else if (grace_over(key, m->row.fence, m->window_code, wait) && take_over_hold(name, *m)) {
        ended = true;
      }
      look = std::min(look, wait);
    }
    if (ended || !unchanged || !soonest) return false;
    detail::count(counter::lock_not_acquired);
    if (refused) {
      *refused = *soonest;
      if (look != clock_type::duration::max())
        (*refused)->expires_in = std::min((*refused)->expires_in, std::chrono::ceil<milliseconds>(look));
    }
    return true;
  }

  // Ends hold m of `name` whose marker stayed free for the grace: holders_reclaim.sql, in a
  // transaction holding the name's grant gate, so that a grant deciding from the live holds
  // never sees one end under it; the statement re-checks the grant and that the marker is
  // free now. True when ended.
  bool take_over_hold(const std::string& name, const detail::marked_hold& m) {
    const auto& hops = detail::holders_for(db->kind());
    bool reclaimed = false;
    try {
      detail::retry_conflicts(*db, [&] {
        db->in_transaction([&] {
          hops.gate(*db, name);
          reclaimed = live_ops->reclaim_hold(*db, name, m.owner, m.slot, m.row.fence);
        });
      });
    } catch (const std::exception&) {
      return false;  // tried again at the next look
    }
    std::lock_guard l(mu);
    gone_holders.erase(gone_key(name, m.owner, m.slot));
    if (reclaimed) {
      detail::count(counter::lock_crash_takeovers);
      blockers.erase(name);
    }
    return reclaimed;
  }

  // Multi-lock member `name` refused the last try of a set (lib/core/multi_lock.cpp),
  // held with `fence`: reads its holder's marker (lock_probe_marker.sql) unless that grant
  // was seen without a marker, and ends the holder's lease once its marker has stayed free
  // for the grace (take_over_gone). Returns true when the set's try would be refused again
  // by this member and is not sent: the same grant still holds it, no release of the name
  // was seen since (`released`), and it was not ended; *holder then says whom to wait for
  // and to look again soon.
  bool take_over_member(const std::string& name, std::int64_t fence, bool released, std::optional<lock_info>* holder) {
    if (!live_ops) return false;
    {
      std::lock_guard l(mu);
      if (auto it = plain_holders.find(name); it != plain_holders.end() && it->second == fence) return false;
    }
    return db->exclusive([&]() -> bool {
      std::optional<detail::marked_holder> m;
      try {
        m = live_ops->probe(*db, name, owner);
      } catch (const std::exception&) {
        return false;  // the try says what is wrong
      }
      if (!m) return false;  // free, expired or ours: try
      if (!m->backed) {
        std::lock_guard l(mu);
        if (plain_holders.size() >= 1024) plain_holders.clear();
        plain_holders[name] = m->row.fence;
        return false;
      }
      clock_type::duration look = detail::liveness::look_again_for(detail::liveness::window_of(m->window_code));
      if (m->gone) {
        if (take_over_gone(name, *m, look)) return false;  // ended: the set's try takes it
      } else {
        std::lock_guard l(mu);
        gone_holders.erase(name);
      }
      if (released || m->row.fence != fence) return false;
      detail::count(counter::lock_not_acquired);
      m->row.expires_in = std::min(m->row.expires_in, std::chrono::ceil<milliseconds>(look));
      if (holder) *holder = std::move(m->row);
      return true;
    });
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

  // Deletes the tickets whose earlier delete failed; those that fail again stay listed.
  void drop_stale_tickets() {
    std::vector<std::int64_t> stale;
    {
      std::lock_guard l(mu);
      if (stale_tickets.empty()) return;
      stale.swap(stale_tickets);
    }
    std::vector<std::int64_t> kept;
    for (auto t : stale) {
      try {
        detail::retry_conflicts(*db, [&] { line->leave(*db, t, owner); }, detail::conflict_retries::give_back);
      } catch (const std::exception&) {
        kept.push_back(t);
      }
    }
    if (kept.empty()) return;
    std::lock_guard l(mu);
    stale_tickets.insert(stale_tickets.end(), kept.begin(), kept.end());
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

namespace detail {

// One try of read-write lock or semaphore `name` for `request` (the mode or the permit
// counts, as text; try_fn() sends the try) with crash detection's early takeover: when the
// last try of the same request was refused by holds of which one keeps a marker, those are
// looked at first (session_core::take_over_blockers), and the try is not sent while it would
// be refused again. The refusal's holds are stamped with the request and the release
// generation read before the try.
template <typename T, typename Try>
std::optional<T> take_over_then(session_core& c, const std::string& name, const std::string& request,
                                std::optional<lock_info>* refused, Try&& try_fn) {
  if (!c.live_ops) return try_fn();
  const auto generation = release_board::get().generation(name);  // before looking
  if (c.take_over_blockers(name, request, generation, refused)) return std::nullopt;
  auto got = try_fn();
  std::lock_guard l(c.mu);
  auto it = c.blockers.find(name);
  if (it == c.blockers.end()) return got;
  if (got) {
    c.blockers.erase(it);
  } else if (!it->second.stamped && it->second.by == std::this_thread::get_id()) {
    it->second.request = request;
    it->second.generation = generation;
    it->second.stamped = true;
  }
  return got;
}

inline std::string describe_holder(const std::string& name, const std::optional<lock_info>& h) {
  if (!h) return "lock '" + name + "' is held by another owner or promised to an earlier waiter";
  return "lock '" + name + "' is held by '" + h->holder + "' (fence " + std::to_string(h->fence) + ") until " +
         h->expires_at + " server time (" + std::to_string(h->expires_in.count()) + " ms from now)";
}

// A waiter's ticket in the wait line of one name; given up when the acquire returns without
// a grant that consumed it.
// `grant`: the lease lock's grant a release may hand the ticket (wait_line_ops::join); a
// wait that ends without a grant then gives back one handed to it meanwhile.
class ticket {
 public:
  ticket(session_core& c, bool grant_consumes, const line_grant* grant)
      : c_(c), grant_consumes_(grant_consumes), grant_(grant) {}
  ticket(const ticket&) = delete;
  ticket& operator=(const ticket&) = delete;
  ~ticket() {
    if (!held_) return;
    if (leave()) {
      if (c_.wake) c_.wake->post(name_, {}, 0, 0);  // waiters behind move up (SQLite)
    } else if (grant_) {
      give_back();
    }
    forget();
  }

  // Takes a ticket; false (and polling without one) when that failed.
  bool join(const std::string& name) {
    const auto epoch = c_.marker_epoch_now();  // before sending, like the time below
    const session_core::ticket_join sent{clock_type::now(), epoch};
    try {
      number_ = c_.line->join(*c_.db, name, c_.owner, c_.row_ttl_ms, grant_);
      name_ = name;
    } catch (const std::exception&) {
      return false;
    }
    held_ = true;
    std::lock_guard l(c_.mu);
    ++c_.tickets;
    if (grant_ && c_.opts.scope == owner_scope::thread)
      c_.thread_tickets.emplace(name_, std::make_pair(number_, std::this_thread::get_id()));
    if (grant_) c_.ticket_joins[number_] = sent;
    return true;
  }
  [[nodiscard]] bool held() const noexcept { return held_; }
  [[nodiscard]] std::int64_t number() const noexcept { return number_; }
  [[nodiscard]] std::int64_t bound() const noexcept { return held_ ? number_ : detail::behind_every_waiter; }
  // Granted: the grant deleted the ticket (or the release that handed it the grant did,
  // `gone`), or it is deleted now, before the hold starts, so that it never blocks the next
  // waiter.
  void granted(bool gone = false) {
    if (!held_) return;
    if (!grant_consumes_ && !gone) (void)leave();
    forget();
  }

 private:
  // Deletes the ticket, again when chosen as a deadlock victim; when that still fails, the
  // session deletes it before its next wait (session_core::drop_stale_tickets). False when
  // the ticket was already gone: expired, or handed a grant by a release.
  bool leave() noexcept {
    try {
      return detail::retry_conflicts(
          *c_.db, [&] { return c_.line->leave(*c_.db, number_, c_.owner); }, detail::conflict_retries::give_back);
    } catch (...) {
      try {
        std::lock_guard l(c_.mu);
        c_.stale_tickets.push_back(number_);
      } catch (...) {
        // Out of memory: the ticket expires once the session stops waiting.
      }
      return true;  // not known to be gone: nothing to give back
    }
  }
  // The wait ended without a grant, but a release may have handed the ticket one: the row
  // is this session's then, and its renewals would keep it. Deletes that row; when that
  // fails, the row expires once the session's renewals stop.
  void give_back() noexcept {
    try {
      if (detail::retry_conflicts(*c_.db, [&] { return c_.line->drop_handed(*c_.db, name_, c_.owner, number_); },
                                  detail::conflict_retries::give_back)) {
        detail::release_board::get().bump(name_);  // a waiter of this process may take it now
        if (c_.wake) c_.wake->post(name_, {}, 0, 0);  // or of another (SQLite)
      }
    } catch (...) {
    }
  }
  void forget() {
    held_ = false;
    std::lock_guard l(c_.mu);
    --c_.tickets;
    c_.ticket_joins.erase(number_);
    auto [from, to] = c_.thread_tickets.equal_range(name_);
    for (; from != to; ++from) {
      if (from->second.first == number_) {
        c_.thread_tickets.erase(from);
        break;
      }
    }
  }
  session_core& c_;
  bool grant_consumes_;
  const line_grant* grant_;
  bool held_ = false;
  std::int64_t number_ = 0;
  std::string name_;
};

// A waiter of `name` on a database with a wake file (SQLite) sleeps until a release of the
// name's slot wakes it (wake_file::wait: a hand-off to its ticket, or a plain release), or
// `until`. True when the release's record handed the name to `ticket` of this session (0: no
// ticket): that grant goes on the release board, where the next try takes it without a
// statement (session_core::adopt_handed).
inline bool wake_released(session_core& c, wake_file& wake, const std::string& name, std::uint32_t seen,
                          clock_type::time_point until, std::int64_t ticket) {
  if (!wake.wait(name, seen, until, ticket) || ticket == 0) return false;
  const auto fence = wake.handed(name, c.owner, ticket);
  if (!fence) return false;
  release_board::get().notice({name, c.owner, ticket, *fence});
  return true;
}

// The waiting acquire of `name` for up to `wait`: try_fn(bound, &refused) tries once with the
// line bound (lease_table.hpp) and returns the grant, or nothing with the refusing holder's
// row in *refused when known; holder_fn() reads the holder when the refusal did not say
// (names_holder: refusals always say). consumes_ticket: a granted try deleted the waiter's
// ticket itself. grant: a lease lock's grant a release may hand the waiter's ticket (nullptr
// for other waiters). ticket_gone: set by a granted try whose grant a release handed the
// ticket, which it deleted (nullptr: never). Throws timeout_error naming the holder when the
// wait runs out.
template <typename T, typename Try, typename Holder>
T wait_for(session_core& c, const std::string& name, milliseconds wait, Try&& try_fn, Holder&& holder_fn,
           bool names_holder, bool consumes_ticket, const line_grant* grant = nullptr,
           const bool* ticket_gone = nullptr) {
  const auto started = clock_type::now();
  const auto deadline = started + wait;
  detail::wake_file* const wake = c.opts.listen ? c.wake.get() : nullptr;  // sleep on it (SQLite)
  detail::wait_pacer pacer(c.opts.min_backoff, c.opts.max_backoff, started, detail::jitter_seed(),
                           c.release_notices || wake);
  auto& board = detail::release_board::get();
  c.drop_stale_tickets();  // never queue behind a ticket of our own
  ticket place(c, consumes_ticket, grant);
  // Release notices while this waiter tries (first in line, or without a ticket); a waiter
  // further back reads its place on the pacer's schedule instead.
  notice_want ears(c.release_notices ? c.notices.get() : nullptr);
  std::int64_t ahead = 0;  // live tickets before ours, when we have one
  bool first_known = false;  // a read of our place said first: it stays so (later tickets come after ours)
  auto record_wait = [&] {
    detail::count(counter::lock_waits);
    detail::observe_wait(std::chrono::duration<double>(clock_type::now() - started).count());
  };
  for (int attempt = 0;; ++attempt) {
    const auto seen = board.generation(name);  // read before looking: a release after this wakes us
    const auto wake_seen = wake ? wake->generation(name) : 0;  // likewise, releases of other processes
    const auto heard_from = ears.mark();
    std::optional<lock_info> h;
    const bool tries = ahead == 0;
    if (tries && attempt > 0 && clock_type::now() < deadline &&
        !(place.held() && board.has_handed(name, c.owner, place.number())) &&
        board.release_in_flight(name, std::max<clock_type::duration>(c.opts.max_backoff, std::chrono::seconds(1)))) {
      // A release of this name that may hand it to us is on its way in this process: its
      // answer wakes us (and may say the grant is ours), where a try now could find the grant
      // before it is durable. Bounded: a release that fails wakes us too, and one that has
      // run longer than a second (or max_backoff, if longer) holds nobody back.
      board.wait(name, seen, std::min(deadline, clock_type::now() + c.opts.max_backoff));
      continue;
    }
    if (tries) {  // no ticket, or first in line: try
      std::optional<T> l;
      try {
        l = try_fn(place.bound(), &h);
      } catch (const transaction_conflict&) {
        // Still a deadlock victim after the quick retries: contention; keep waiting.
      }
      if (l) {
        place.granted(ticket_gone && *ticket_gone);
        if (attempt > 0) record_wait();
        return std::move(*l);
      }
    }
    auto now = clock_type::now();
    if (!h && ((tries && (!names_holder || attempt == 0)) || now >= deadline)) {
      // The refusal did not say who holds it: the pacer wants the holder's fence, the
      // timeout message its name. Busy now and then on a single-writer database: go without.
      try {
        h = holder_fn();
      } catch (const lock_not_available&) {
      }
      if (h && !names_holder) c.note_busy(name, *h, seen, now);
    }
    if (now >= deadline) {
      if (attempt > 0) record_wait();
      throw timeout_error(describe_holder(name, h) + "; not acquired within " + std::to_string(wait.count()) + " ms");
    }
    const bool joined = c.opts.fair && !place.held() && place.join(name);
    if (joined) pacer.reset(now);
    if (place.held() && !(first_known && tries && !joined)) {
      // Only the first in line tries; the others read where they stand (a read, no try).
      // The first in line does not read it again: a ticket only gains places, so its try's
      // refusal says all a read would.
      const auto was_ahead = ahead;
      try {
        const auto pos = c.line->position(*c.db, name, place.number());
        ahead = pos.ahead;
        first_known = ahead == 0;
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
      const auto until = std::min(deadline, clock_type::now() + sleep);
      if (!ears.ready(heard_from, until)) continue;  // listening began after this look: look again
      if (!wake) {
        board.wait(name, seen, until);
      } else if (wake_released(c, *wake, name, wake_seen, until, place.held() ? place.number() : 0)) {
        first_known = true;
      }
    } else if (wake && (ahead == 1 || grant)) {
      // Behind the first, on a database with a wake file: a release that hands the name to
      // our ticket wakes us (and its record makes us the holder), one that hands nothing
      // wakes every waiter; a hand-off to another ticket does not. So sleep until then, or
      // four times what the pacer says for this place (at most max_backoff, if longer), to
      // read our place should a release not post (a process without the wake file).
      ears.drop();
      const auto sleep = pacer.behind(ahead, now);
      const auto bound =
          std::max<clock_type::duration>(sleep, std::min<clock_type::duration>(4 * sleep, c.opts.max_backoff));
      if (wake_released(c, *wake, name, wake_seen, std::min(deadline, clock_type::now() + bound), place.number())) {
        ahead = 0;
        first_known = true;
      }
    } else {
      // `ahead` grants must come before ours: sleep as the pacer says for that place, or
      // until as many releases are seen here (releases heard for other waiters).
      ears.drop();
      const auto sleep = pacer.behind(ahead, now);
      board.wait(name, seen, std::min(deadline, clock_type::now() + sleep), static_cast<std::uint64_t>(ahead));
    }
  }
}

}  // namespace detail

}  // namespace dblock
