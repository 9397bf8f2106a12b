// lib/core/holders.cpp — read-write lease locks and counting semaphores (dblock/lock.hpp:
// session::try_acquire(name, mode), session::try_acquire_permits, permit_set). Their holds are
// rows of dblock_lock_holders (lib/core/ops/holders.hpp), kept in the session's table of holds
// beside its lease locks (lib/core/session_core.hpp) under holder_key(): renewed by the same
// renewal statement, lost at the same deadline, waiting in the same line (wait_for). A grant is
// decided inside one short transaction that holds the name's gate, from the live rows: on
// PostgreSQL, MariaDB and MySQL 8.0 by one statement (migration 0010's functions), on SQLite
// here, step by step. A refused try hands the holds in its way to crash detection's early
// takeover (session_core::note_blockers; the next try goes through detail::take_over_then).
#include <algorithm>
#include <set>

#include "core/lock_family.hpp"
#include "core/ops/holders.hpp"
#include "core/session_core.hpp"

namespace dblock {

const char* to_string(lock_mode m) noexcept {
  switch (m) {
    case lock_mode::exclusive: return "exclusive";
    case lock_mode::read: return "read";
    case lock_mode::write: return "write";
    case lock_mode::permit: return "permit";
  }
  return "unknown";
}

namespace {

constexpr int max_permits = 10'000;

const detail::holders_ops& ops_of(session_core& c) { return detail::holders_for(c.db->kind()); }

// A waiter's try passes its ticket as the bound: the grant deletes it in its transaction.
bool is_ticket(std::int64_t bound) {
  return bound != detail::behind_every_waiter && bound != detail::ahead_of_every_waiter;
}

// What a grant transaction decided; filled anew on each (retried) run.
struct decision {
  bool granted = false;
  std::string misuse;               // thrown as invalid_argument
  std::optional<lock_info> blocker;  // a live hold in the way
  std::vector<detail::holder_row> in_way;  // every such hold (crash detection's early takeover)
};

// The soonest-ending live hold of rows (for the waiting pacer and the timeout message).
std::optional<lock_info> soonest(const std::vector<detail::holder_row>& rows, const std::string& name) {
  const detail::holder_row* best = nullptr;
  for (auto& r : rows)
    if (!best || r.info.expires_in < best->info.expires_in) best = &r;
  if (!best) return std::nullopt;
  auto i = best->info;
  i.name = name;
  return i;
}

// ----------------------------------------------------------------------------- one statement
// Where the dialect has migration 0010's grant functions (PostgreSQL, MariaDB, MySQL 8.0), a
// grant is one statement (one round trip) that runs the steps of try_rw / try_permits below on
// the server, under the same gate, with the same decisions; here only its answer is turned into
// errors, refusals and the session's table of holds, exactly as the step path does.

// Records granted permits (slot, fence), sent at t0 under marker `epoch`, as holds of the
// session (holder_key(name, slot)); the caller holds db's mutex. Both grant paths end here.
permit_set adopt_permits(const std::shared_ptr<session_core>& self, const std::string& name,
                         const std::vector<std::pair<std::int64_t, std::int64_t>>& granted,
                         clock_type::time_point t0, std::uint64_t epoch) {
  auto& c = *self;
  detail::count(counter::lock_acquired, granted.size());
  std::vector<lease> out;
  std::vector<lost_lease> gone;
  std::vector<std::shared_ptr<held_lock>> hs;
  {
    std::lock_guard l(c.mu);
    for (auto& [s, fence] : granted) {
      auto& slot = c.held[detail::holder_key(name, s)];
      if (slot && !slot->lost && session_core::mark_lost(*slot, "the permit's row was gone at a new grant"))
        gone.push_back({slot->name, slot->fence, slot->lost_reason});
      slot = std::make_shared<held_lock>();
      slot->name = name;
      slot->mode = lock_mode::permit;
      slot->slot = s;
      slot->fence = fence;
      slot->marker_epoch = epoch;
      slot->local_holds = 1;
      slot->thread = std::this_thread::get_id();
      slot->granted_at = t0;
      slot->deadline = t0 + c.opts.ttl;
      c.schedule(c.trusted_end(*slot));
      hs.push_back(slot);
    }
  }
  c.fire(gone);
  for (auto& h : hs) out.push_back(session_core::make_lease(self, h, lock_mode::permit));
  return permit_set(std::move(out));
}

// The one-statement answer names one blocker; crash detection's early takeover needs every
// hold in its way with its owner. When the session keeps a marker and the answer is a refusal
// by holds, they are read (holders_probe_marker.sql: one read-only round trip) and noted for
// the next try (session_core::note_blockers), as the step path notes what it read in its
// transaction. A reader waits only for writers; a semaphore waiter that holds permits of the
// name itself notes nothing, so its tries are never skipped (its own permits are not read).
void note_one_statement_blockers(session_core& c, const std::string& name, bool read,
                                 std::optional<lock_info>* refused) {
  if (!c.live_ops) return;
  {
    std::lock_guard l(c.mu);
    for (const auto& [key, h] : c.held)
      if (detail::is_holder_key(key) && h->name == name && h->mode == lock_mode::permit && !h->lost) return;
  }
  std::vector<detail::marked_hold> held;
  try {
    held = c.live_ops->probe_holds(*c.db, name, c.owner);
  } catch (const std::exception&) {
    return;  // the next try says what is wrong
  }
  std::vector<detail::holder_row> in_way;
  for (const auto& m : held) {
    if (read && m.write_holds == 0) continue;
    detail::holder_row r;
    r.owner = m.owner;
    r.slot = m.slot;
    r.write_holds = m.write_holds;
    r.info = m.row;
    in_way.push_back(std::move(r));
  }
  c.note_blockers(name, in_way, refused);
}

detail::one_statement_request one_statement_request_of(const session_core& c, const std::string& name,
                                                         std::int64_t bound) {
  detail::one_statement_request r;
  r.name = name;
  r.owner = c.owner;
  r.ticket = is_ticket(bound) ? bound : 0;
  r.bound = bound;
  r.row_ttl_ms = c.row_ttl_ms;
  r.holder = c.holder;
  r.delay_ms = c.opts.lock_delay.count();
  return r;
}

std::optional<lease> try_rw_one_statement(const std::shared_ptr<session_core>& self, const std::string& name,
                                          bool write, std::int64_t bound, std::optional<lock_info>* refused) {
  auto& c = *self;
  const auto& ops = ops_of(c);
  using outcome = detail::one_statement_outcome::kind;
  return c.db->exclusive([&]() -> std::optional<lease> {
    const auto mine = detail::rw_held_fence(c, name);
    auto req = one_statement_request_of(c, name, bound);
    req.write = write;
    req.own_fence = mine.value_or(0);
    const auto epoch = c.marker_epoch_now();  // before sending, like t0
    const auto t0 = clock_type::now();  // before sending: the local deadline errs early
    const auto o = detail::retry_conflicts(*c.db, [&] { return ops.acquire_rw(*c.db, req); }, detail::conflict_retries::holds);
    switch (o.what) {
      case outcome::not_rw:
        throw invalid_argument("lock '" + name + "' is a semaphore of " + std::to_string(o.value) +
                               " permits, not a read-write lock");
      case outcome::upgrade_refused:
        throw invalid_argument("lock '" + name + "' cannot be upgraded to write: " + std::to_string(o.value + 1) +
                               " readers hold it (this session and " + std::to_string(o.value) + " other" +
                               (o.value == 1 ? "" : "s") + ")");
      case outcome::granted:
      case outcome::reentered:
        if (o.granted.size() == 1) break;
        [[fallthrough]];
      case outcome::not_semaphore:
      case outcome::permits_differ:
        throw internal_error("read-write lock '" + name + "': the one-statement grant answered a semaphore's outcome");
      case outcome::refused:
      case outcome::behind_line:
        detail::count(counter::lock_not_acquired);
        if (refused) *refused = o.blocker;
        if (o.what == outcome::refused) note_one_statement_blockers(c, name, !write, refused);
        return std::nullopt;
    }
    detail::rw_decision d;
    d.granted = true;
    d.fresh = o.what == outcome::granted;
    d.fence = o.granted.front().second;
    return detail::adopt_rw(self, name, write, d, t0, epoch);
  });
}

std::optional<permit_set> try_permits_one_statement(const std::shared_ptr<session_core>& self,
                                                    const std::string& name, int permits, int count,
                                                    std::int64_t bound, std::optional<lock_info>* refused) {
  auto& c = *self;
  const auto& ops = ops_of(c);
  using outcome = detail::one_statement_outcome::kind;
  return c.db->exclusive([&]() -> std::optional<permit_set> {
    auto req = one_statement_request_of(c, name, bound);
    req.permits = permits;
    req.count = count;
    const auto epoch = c.marker_epoch_now();  // before sending, like t0
    const auto t0 = clock_type::now();
    const auto o = detail::retry_conflicts(*c.db, [&] { return ops.acquire_permits(*c.db, req); }, detail::conflict_retries::holds);
    switch (o.what) {
      case outcome::not_semaphore: throw invalid_argument("lock '" + name + "' is a read-write lock, not a semaphore");
      case outcome::permits_differ:
        throw invalid_argument("semaphore '" + name + "' has " + std::to_string(o.value) +
                               " permits (set by its first holder), not " + std::to_string(permits));
      case outcome::granted:
        if (o.granted.size() == static_cast<std::size_t>(count)) break;
        [[fallthrough]];
      case outcome::reentered:
      case outcome::not_rw:
      case outcome::upgrade_refused:
        throw internal_error("semaphore '" + name + "': the one-statement grant answered another outcome than " +
                             std::to_string(count) + " permits");
      case outcome::refused:
      case outcome::behind_line:
        detail::count(counter::lock_not_acquired);
        if (refused) *refused = o.blocker;
        if (o.what == outcome::refused) note_one_statement_blockers(c, name, false, refused);
        return std::nullopt;
    }
    return adopt_permits(self, name, o.granted, t0, epoch);
  });
}

// ----------------------------------------------------------------------------- steps

std::optional<lease> try_rw(const std::shared_ptr<session_core>& self, const std::string& name, bool write,
                            std::int64_t bound, std::optional<lock_info>* refused) {
  if (ops_of(*self).one_statement_grants()) return try_rw_one_statement(self, name, write, bound, refused);
  auto& c = *self;
  // Under the connection's mutex from the decision to the local record (as session_core::try_once).
  return c.db->exclusive([&]() -> std::optional<lease> {
    const auto mine = detail::rw_held_fence(c, name);
    const auto epoch = c.marker_epoch_now();  // before sending, like t0
    const auto t0 = clock_type::now();  // before sending: the local deadline errs early
    detail::rw_decision d;
    detail::retry_conflicts(*c.db, [&] {
      c.db->in_transaction([&] { d = detail::decide_rw(c, name, write, bound, mine); });
    });
    if (!d.misuse.empty()) throw invalid_argument(d.misuse);
    if (!d.granted) {
      detail::count(counter::lock_not_acquired);
      if (refused) *refused = std::move(d.blocker);
      c.note_blockers(name, d.in_way, refused);
      return std::nullopt;
    }
    return detail::adopt_rw(self, name, write, d, t0, epoch);
  });
}

std::optional<permit_set> try_permits(const std::shared_ptr<session_core>& self, const std::string& name, int permits,
                                      int count, std::int64_t bound, std::optional<lock_info>* refused) {
  if (ops_of(*self).one_statement_grants())
    return try_permits_one_statement(self, name, permits, count, bound, refused);
  auto& c = *self;
  const auto& ops = ops_of(c);
  return c.db->exclusive([&]() -> std::optional<permit_set> {
    const auto epoch = c.marker_epoch_now();  // before sending, like t0
    const auto t0 = clock_type::now();
    decision d;
    std::vector<std::pair<std::int64_t, std::int64_t>> got;  // slot, fence
    detail::retry_conflicts(*c.db, [&] {
      c.db->in_transaction([&] {
        d = {};
        got.clear();
        ops.gate(*c.db, name);
        auto rows = ops.live(*c.db, name);
        std::set<std::int64_t> taken;
        for (auto& r : rows) {
          if (r.kind != 's') {
            d.misuse = "lock '" + name + "' is a read-write lock, not a semaphore";
            return;
          }
          if (r.permits != permits) {
            d.misuse = "semaphore '" + name + "' has " + std::to_string(r.permits) +
                       " permits (set by its first holder), not " + std::to_string(permits);
            return;
          }
          taken.insert(r.slot);
        }
        if (static_cast<int>(taken.size()) + count > permits) {
          d.blocker = soonest(rows, name);
          d.in_way = rows;  // this session's own permits too: a try is then never skipped
          return;
        }
        if (ops.line_ahead(*c.db, name, bound) > 0) return;
        if (is_ticket(bound)) c.line->leave(*c.db, bound, c.owner);
        for (std::int64_t s = 1; s <= permits && static_cast<int>(got.size()) < count; ++s) {
          if (taken.count(s)) continue;
          const auto fence = ops.draw_fence(*c.db);
          ops.insert(*c.db, {name, c.owner, s, 's', 0, permits, fence, c.row_ttl_ms, c.holder,
                             c.opts.lock_delay.count()});
          got.emplace_back(s, fence);
        }
        d.granted = true;
      });
    });
    if (!d.misuse.empty()) throw invalid_argument(d.misuse);
    if (!d.granted) {
      detail::count(counter::lock_not_acquired);
      if (refused) *refused = std::move(d.blocker);
      c.note_blockers(name, d.in_way, refused);
      return std::nullopt;
    }
    return adopt_permits(self, name, got, t0, epoch);
  });
}

// What a permit try asks for, for crash detection's early takeover (detail::take_over_then).
std::string permits_request(int permits, int count) {
  return std::to_string(count) + " of " + std::to_string(permits);
}

void check_mode(lock_mode mode) {
  if (mode != lock_mode::read && mode != lock_mode::write)
    throw invalid_argument(std::string("read-write lock mode must be read or write, not ") + to_string(mode));
}

void check_permits(int permits, int count) {
  if (permits < 1 || permits > max_permits)
    throw invalid_argument("semaphore permit count " + std::to_string(permits) + " is out of range (1 to " +
                           std::to_string(max_permits) + ")");
  if (count < 1 || count > permits)
    throw invalid_argument("cannot acquire " + std::to_string(count) + " of " + std::to_string(permits) +
                           " permits (1 to " + std::to_string(permits) + ")");
}

}  // namespace

// ----------------------------------------------------------------------------- read-write grants
// Shared by try_rw above and the read and write members of multi-locks (lib/core/multi_lock.cpp).

namespace detail {

std::optional<std::int64_t> rw_held_fence(session_core& c, const std::string& name) {
  std::lock_guard l(c.mu);
  if (auto it = c.held.find(holder_key(name, 0)); it != c.held.end() && !it->second->lost) return it->second->fence;
  return std::nullopt;
}

rw_decision decide_rw(session_core& c, const std::string& name, bool write, std::int64_t bound,
                      std::optional<std::int64_t> mine) {
  const auto& ops = ops_of(c);
  rw_decision d;
  ops.gate(*c.db, name);
  auto rows = ops.live(*c.db, name);
  const holder_row* own = nullptr;
  std::vector<holder_row> others, writers;
  for (auto& r : rows) {
    if (r.kind != 'r') {
      d.misuse = "lock '" + name + "' is a semaphore of " + std::to_string(r.permits) +
                 " permits, not a read-write lock";
      return d;
    }
    if (r.owner == c.owner) {
      own = &r;
    } else {
      others.push_back(r);
      if (r.write_holds > 0) writers.push_back(r);
    }
  }
  if (own && mine && own->info.fence == *mine) {
    if (!write || own->write_holds > 0) {  // re-entry: same fence
      d.fence = own->info.fence;
    } else if (!others.empty()) {
      d.misuse = "lock '" + name + "' cannot be upgraded to write: " + std::to_string(others.size() + 1) +
                 " readers hold it (this session and " + std::to_string(others.size()) + " other" +
                 (others.size() == 1 ? "" : "s") + ")";
      return d;
    } else {  // the only reader upgrades: a new fence, larger than every earlier grant's
      d.fence = ops.draw_fence(*c.db);
    }
    if (!ops.reenter(*c.db, name, c.owner, write, d.fence, c.row_ttl_ms))
      throw internal_error("read-write lock '" + name + "': the live row vanished inside its gate");
    d.granted = true;
    return d;
  }
  if (own)  // a row of an earlier hold this session no longer counts on (lost): replace it
    (void)ops.release(*c.db, name, c.owner, 0, own->info.fence);
  const auto& in_way = write ? others : writers;
  if (!in_way.empty()) {
    d.blocker = soonest(in_way, name);
    d.in_way = in_way;
    return d;
  }
  if (ops.line_ahead(*c.db, name, bound) > 0) return d;  // an earlier waiter goes first
  if (is_ticket(bound)) c.line->leave(*c.db, bound, c.owner);
  d.fence = ops.draw_fence(*c.db);
  ops.insert(*c.db, {name, c.owner, 0, 'r', write ? 1 : 0, 0, d.fence, c.row_ttl_ms, c.holder,
                     c.opts.lock_delay.count()});
  d.fresh = true;
  d.granted = true;
  return d;
}

lease adopt_rw(const std::shared_ptr<session_core>& self, const std::string& name, bool write, const rw_decision& d,
               clock_type::time_point t0, std::uint64_t epoch) {
  auto& c = *self;
  detail::count(counter::lock_acquired);
  std::shared_ptr<held_lock> h;
  std::vector<lost_lease> gone;
  {
    std::lock_guard l(c.mu);
    auto& slot = c.held[holder_key(name, 0)];
    if (d.fresh || !slot || slot->lost) {
      if (slot && !slot->lost && session_core::mark_lost(*slot, "the read-write hold's row was gone at a new grant"))
        gone.push_back({slot->name, slot->fence, slot->lost_reason});
      slot = std::make_shared<held_lock>();
      slot->name = name;
      slot->mode = lock_mode::read;
      slot->marker_epoch = epoch;
    }
    h = slot;
    h->fence = d.fence;
    ++h->local_holds;
    if (write) ++h->write_holds;
    h->thread = std::this_thread::get_id();
    h->granted_at = t0;
    h->deadline = t0 + c.opts.ttl;
    c.schedule(c.trusted_end(*h));
  }
  c.fire(gone);
  return session_core::make_lease(self, h, write ? lock_mode::write : lock_mode::read);
}

// The request a waiting multi-lock set's read or write member is noted under (take_over_then
// uses the mode or permit count of a single try): one per set member, whatever its mode.
constexpr const char* set_member_request = "set member";

void note_rw_member_refusal(session_core& c, const std::string& name, const std::vector<holder_row>& in_way,
                            std::optional<lock_info>* refused) {
  c.note_blockers(name, in_way, refused);
}

void stamp_rw_member_refusal(session_core& c, const std::string& name, std::uint64_t generation) {
  std::lock_guard l(c.mu);
  auto it = c.blockers.find(name);
  if (it == c.blockers.end() || it->second.stamped || it->second.by != std::this_thread::get_id()) return;
  it->second.request = set_member_request;
  it->second.generation = generation;
  it->second.stamped = true;
}

bool take_over_rw_member(session_core& c, const std::string& name, std::uint64_t generation,
                         std::optional<lock_info>* holder) {
  return c.take_over_blockers(name, set_member_request, generation, holder);
}

}  // namespace detail

// ----------------------------------------------------------------------------- session

std::optional<lease> session::try_acquire(std::string_view name, lock_mode mode) {
  if (mode == lock_mode::exclusive) return try_acquire(name);
  validate_lock_name(name);
  check_mode(mode);
  const std::string n(name);
  return detail::take_over_then<lease>(*core_, n, to_string(mode), nullptr, [&] {
    return try_rw(core_, n, mode == lock_mode::write, detail::behind_every_waiter, nullptr);
  });
}

lease session::acquire(std::string_view name_view, lock_mode mode, std::chrono::milliseconds wait) {
  if (mode == lock_mode::exclusive) return acquire(name_view, wait);
  validate_lock_name(name_view);
  check_mode(mode);
  if (wait < milliseconds(0)) throw invalid_argument("negative wait " + std::to_string(wait.count()) + " ms");
  const std::string name(name_view);
  const bool write = mode == lock_mode::write;
  return detail::wait_for<lease>(
      *core_, name, wait,
      [&](std::int64_t bound, std::optional<lock_info>* refused) {
        return detail::take_over_then<lease>(*core_, name, to_string(mode), refused,
                                             [&] { return try_rw(core_, name, write, bound, refused); });
      },
      [] { return std::optional<lock_info>(); }, true, true);
}

std::optional<permit_set> session::try_acquire_permits(std::string_view name, int permits, int count) {
  validate_lock_name(name);
  check_permits(permits, count);
  const std::string n(name);
  return detail::take_over_then<permit_set>(*core_, n, permits_request(permits, count), nullptr, [&] {
    return try_permits(core_, n, permits, count, detail::behind_every_waiter, nullptr);
  });
}

permit_set session::acquire_permits(std::string_view name_view, int permits, int count,
                                    std::chrono::milliseconds wait) {
  validate_lock_name(name_view);
  check_permits(permits, count);
  if (wait < milliseconds(0)) throw invalid_argument("negative wait " + std::to_string(wait.count()) + " ms");
  const std::string name(name_view);
  return detail::wait_for<permit_set>(
      *core_, name, wait,
      [&](std::int64_t bound, std::optional<lock_info>* refused) {
        return detail::take_over_then<permit_set>(*core_, name, permits_request(permits, count), refused, [&] {
          return try_permits(core_, name, permits, count, bound, refused);
        });
      },
      [] { return std::optional<lock_info>(); }, true, true);
}

std::vector<holder_info> list_holders(database& db) {
  auto b = detail::backend_of(db);
  return detail::holders_for(b->kind()).list(*b);
}

// ----------------------------------------------------------------------------- lease

void lease::release_hold() {
  auto h = std::move(h_);
  auto core = std::move(core_);
  const bool write = mode_ == lock_mode::write;
  const std::string key = detail::holder_key(h->name, h->slot);
  bool final_hold = false, was_lost = false;
  std::string reason;
  std::int64_t fence = 0;
  const auto& ops = ops_of(*core);
  // The local count and the row's holds change together, under the connection's mutex (see
  // lease::release).
  const auto ours = core->db->exclusive([&]() -> std::optional<bool> {
    {
      std::lock_guard l(core->mu);
      final_hold = --h->local_holds <= 0;
      if (write) --h->write_holds;
      was_lost = h->lost;
      reason = h->lost_reason;
      fence = h->fence;
      if (final_hold) {
        auto it = core->held.find(key);
        if (it != core->held.end() && it->second == h) {
          core->held.erase(it);  // no longer renewed
        } else if (it != core->held.end() && !it->second->lost && it->second->fence == h->fence) {
          return std::nullopt;  // the row is a newer hold's now: its release deletes it
        }
      }
    }
    return detail::retry_conflicts(*core->db, [&] {
      return final_hold ? ops.release(*core->db, h->name, core->owner, h->slot, fence)
                        : ops.decrement(*core->db, h->name, core->owner, fence, write);
    }, detail::conflict_retries::give_back);
  });
  // Waiters of this process look again: a final release frees room, a write hold given back
  // lets readers in.
  if (ours && *ours && (final_hold || write)) {
    detail::release_board::get().bump(h->name);
    if (core->wake) core->wake->post(h->name, {}, 0, 0);  // and those of other processes (SQLite)
  }
  if (was_lost)
    throw lock_lost(std::string(to_string(mode_)) + " hold of '" + h->name + "' had been lost before release: " + reason);
  if (ours && !*ours) {
    std::vector<lost_lease> lost;
    {
      std::lock_guard l(core->mu);
      if (session_core::mark_lost(*h, "the hold's row was gone or belonged to another grant at release"))
        lost.push_back({h->name, h->fence, h->lost_reason});
    }
    core->fire(lost);
    throw lock_lost(std::string(to_string(mode_)) + " hold of '" + h->name + "' (fence " + std::to_string(fence) +
                    ") was no longer held by this session when released");
  }
  detail::count(counter::lock_released);
}

// ----------------------------------------------------------------------------- permit_set

std::vector<std::int64_t> permit_set::fences() const {
  std::vector<std::int64_t> out;
  for (auto& p : permits_) out.push_back(p.fence());
  return out;
}

bool permit_set::is_held() const noexcept {
  if (permits_.empty()) return false;
  return std::all_of(permits_.begin(), permits_.end(), [](const lease& p) { return p.is_held(); });
}

void permit_set::release() {
  std::optional<lock_lost> first;
  for (auto& p : permits_) {
    try {
      p.release();
    } catch (const lock_lost& e) {
      if (!first) first = e;
    }
  }
  permits_.clear();
  if (first) throw *first;
}

}  // namespace dblock
