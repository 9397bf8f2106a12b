// lib/core/lock.cpp — lease locks (dblock/lock.hpp): sessions, leases and the waiting
// acquire, over the session's inside in lib/core/session_core.hpp (holds, renewal, deadline
// thread, the wait loop); read-write locks and semaphores are in lib/core/holders.cpp.
// Statements go through the dialect's lease_table_ops / wait_line_ops (lib/core/ops/).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/backend.hpp"
#include "core/backoff.hpp"
#include "core/crypto.hpp"
#include "core/ops/holders.hpp"
#include "core/dialect.hpp"
#include "core/link.hpp"
#include "core/lock_family.hpp"
#include "core/ops/lease_table.hpp"
#include "core/ops/replication.hpp"
#include "core/release_board.hpp"
#include "core/session_core.hpp"
#include "core/text.hpp"
#include "core/wait_pacer.hpp"
#include "dblock/errors.hpp"
#include "dblock/lock.hpp"
#include "dblock/metrics.hpp"

namespace dblock {

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

namespace {
std::string default_holder() {
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host) + ":" + std::to_string(::getpid());
}

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
  if (opts.liveness_window < milliseconds(1) || opts.liveness_window > milliseconds(25'600))
    throw invalid_argument("liveness_window " + std::to_string(opts.liveness_window.count()) +
                           " ms is out of range (1 ms to 25.6 s)");
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
    if (c.opts.detect_crashes && detail::crash_fast_path_allowed(*c.db, c.db->multi_primary())) {
      try {
        const int code = detail::liveness::window_code(c.opts.liveness_window);
        // A window under the default gets the process's liveness connection, whose thread
        // runs heartbeats only: on the renewal connection a heartbeat can queue behind a
        // renewal of many rows for longer than a short window. The default window shares
        // the renewal connection, so a process keeps at most two connections per database.
        c.live_link = detail::liveness::window_of(code) < session_options{}.liveness_window
                          ? link::shared(*c.db, o, link::role::liveness)
                          : (c.notices ? c.notices : link::shared(*c.db, o));
        c.live = detail::liveness::of(c.live_link);
        c.mark = c.live->adopt(
            [code] {
              return std::string(1, detail::marker_owner_prefix) + static_cast<char>('0' + code) +
                     detail::random_hex(15);
            },
            detail::liveness::window_of(code));
      } catch (const std::exception&) {
        c.mark.reset();  // no marker: this session's holds keep the TTL rule
      }
      if (c.mark) {
        c.owner = c.mark->owner;
      } else {
        c.live.reset();
        c.live_link.reset();
      }
    }
  } else {
    c.renewals = link::on(c.db);  // an attached connection: never cut the application's connection
  }
  if (c.opts.detect_crashes && detail::crash_fast_path_allowed(*c.db, c.db->multi_primary()))
    c.live_ops = &detail::liveness_for(c.db->kind());
  // SQLite: the wake file beside the database file, when there is one (lib/core/wake_file.hpp).
  // Every session posts its releases there; with `listen` its waiters sleep on it.
  if (c.db->kind() == dialect::sqlite) c.wake = detail::wake_file::for_database(c.db->raw().database_file());
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
  const detail::line_grant grant{c.row_ttl_ms, c.holder, c.opts.lock_delay.count()};
  bool handed = false;  // the granted try's ticket went with the hand-off: no leave
  return detail::wait_for<lease>(
      c, name, wait,
      [&](std::int64_t bound, std::optional<lock_info>* refused) {
        if (detail::is_line_ticket(bound)) {
          if (auto l = c.adopt_handed(core_, name, bound)) {  // the release's notice said it is ours
            handed = true;
            return l;
          }
        }
        return c.try_once(core_, name, bound, refused, &handed);
      },
      [&] { return c.table->holder(*c.db, name); }, c.table->refusal_names_holder(),
      c.table->grant_consumes_ticket(), &grant, &handed);
}

std::vector<lock_info> list_locks(database& db) {
  auto b = detail::backend_of(db);
  return detail::lease_table_for(b->kind()).list(*b);
}

// ----------------------------------------------------------------------------- lease

lease::lease(std::shared_ptr<session_core> core, std::shared_ptr<held_lock> h, lock_mode mode)
    : core_(std::move(core)), h_(std::move(h)), name_(h_->name), fence_(h_->fence), mode_(mode) {}

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
    mode_ = o.mode_;
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
  // With crash detection no later than the marker's last confirmation + the window (a
  // waiter may take over a grace after the marker connection ended), and over at once when
  // that has passed.
  if (clock_type::now() >= core_->marker_end(*h_)) return clock_type::time_point{};
  return core_->trusted_end(*h_);
}

std::string lease::lost_reason() const {
  if (!h_) return {};
  std::lock_guard l(core_->mu);
  return h_->lost_reason;
}

namespace {
// A final release that may hand its name to the head of the line, marked in flight on the
// release board while it runs, so that a waiter of this process waits for its answer instead
// of trying (release_board::releasing). done() ends the mark, records the grant the release
// handed (if known) and wakes the waiters in one step; a release that throws ends it when
// destroyed, waking the waiters it held back.
class hand_off_in_flight {
 public:
  explicit hand_off_in_flight(std::string name) : name_(std::move(name)) {
    detail::release_board::get().releasing(name_);
  }
  hand_off_in_flight(const hand_off_in_flight&) = delete;
  hand_off_in_flight& operator=(const hand_off_in_flight&) = delete;
  ~hand_off_in_flight() { done(nullptr); }
  void done(const detail::release_notice* handed) {
    if (done_) return;
    done_ = true;
    detail::release_board::get().finish(name_, handed);
  }

 private:
  std::string name_;
  bool done_ = false;
};
}  // namespace

void lease::release() {
  if (!h_) return;
  if (mode_ != lock_mode::exclusive) return release_hold();
  auto h = std::move(h_);
  auto core = std::move(core_);
  bool final_hold = false, was_lost = false, to_line = false;
  std::string reason;
  using detail::release_outcome;
  detail::handed_grant handed;  // a hand-off's grant, when the release says it
  std::optional<hand_off_in_flight> in_flight;
  // The local count and the row's holds change together, under the connection's mutex (see
  // session_core::try_once): with owner_scope::session another thread may re-enter through
  // the database, and a final release decided before that re-entry but sent after it would
  // delete the row the other thread then counts on.
  const auto outcome = core->db->exclusive([&]() -> std::optional<release_outcome> {
    {
      std::lock_guard l(core->mu);
      final_hold = --h->local_holds <= 0;
      was_lost = h->lost;
      to_line = h->via_line;
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
    // A lease granted through the wait line hands the name to the next waiter in its final
    // release (a name with waiters then). That writes a grant: it always waits for the flush.
    // Not on a multi-primary cluster (Galera): there contended hand-offs across nodes lost
    // their connection in the cluster test, for a cause not established; the plain delete is
    // what the cluster's tests prove.
    if (to_line && core->db->multi_primary()) to_line = false;
    const bool no_flush = core->opts.async_release && core->table->async_release() && !to_line;
    if (final_hold && to_line) in_flight.emplace(h->name);
    return detail::retry_conflicts(*core->db, [&] {
      handed = {};
      return core->table->release(*core->db, h->name, core->owner, h->fence, final_hold, no_flush, to_line, &handed);
    }, detail::conflict_retries::give_back);
  });
  const bool ours = !outcome || *outcome != release_outcome::not_ours;
  if (in_flight) {
    // A waiter of this process whose ticket was handed the lock holds it from here, without
    // reading it (session_core::adopt_handed): the release's commit has returned.
    const bool passed_on = outcome && *outcome == release_outcome::handed && !handed.owner.empty();
    const detail::release_notice n{h->name, handed.owner, handed.ticket, handed.fence};
    in_flight->done(passed_on ? &n : nullptr);
    if (handed.unlock) core->db->exclusive([&] { core->table->end_hand_off(*core->db, h->name); });
    // Waiters in other processes on the same SQLite file: the record lets the one handed the
    // name hold it from here too.
    if (core->wake && outcome)
      core->wake->post(h->name, passed_on ? std::string_view(handed.owner) : std::string_view(), handed.ticket,
                       handed.fence);
  } else if (final_hold && outcome && *outcome != release_outcome::decremented) {
    detail::release_board::get().bump(h->name);
    if (core->wake) core->wake->post(h->name, {}, 0, 0);
  }
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
  std::int64_t current_fence = 0;  // an upgrade gives a read-write hold a new fence
  {
    std::lock_guard l(core_->mu);
    current_fence = h_->fence;
  }
  const bool ours = mode_ == lock_mode::exclusive
                        ? core_->table->verify(*detail::backend_of(tx), h_->name, core_->owner, h_->fence)
                        : detail::holders_for(core_->db->kind())
                              .verify(*detail::backend_of(tx), h_->name, core_->owner, h_->slot, current_fence);
  if (!ours) {
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
                  std::chrono::steady_clock::time_point t0, std::uint64_t epoch) {
  return c->adopt(c, name, fence, t0, epoch);
}
std::uint64_t marker_epoch_of(const session_core& c) { return c.marker_epoch_now(); }
bool hears_releases(const session_core& c) noexcept { return c.release_notices; }
bool take_over_member(session_core& c, const std::string& name, std::int64_t fence, bool released,
                      std::optional<lock_info>* holder) {
  return c.take_over_member(name, fence, released, holder);
}
link* release_link(session_core& c) noexcept { return c.release_notices ? c.notices.get() : nullptr; }
}  // namespace detail

}  // namespace dblock
