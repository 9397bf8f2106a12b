// lib/core/multi_lock.cpp — all-or-nothing multi-locks (dblock/multi_lock.hpp), built on
// the session's lease statements (lib/core/ops/lease_table.hpp), the read-write lock's
// decision (detail::decide_rw, lib/core/holders.cpp) and holds (lib/core/lock_family.hpp):
// one transaction grants every member in byte-wise name order, or rolls back at the first
// refusal; the granted members become ordinary leases (exclusive, read or write). A waiting
// set takes a crashed holder's member over early (crash detection, take_over_member).
#include <algorithm>
#include <thread>

#include "core/backend.hpp"
#include "core/lock_family.hpp"
#include "core/release_board.hpp"
#include "core/wait_pacer.hpp"
#include "dblock/errors.hpp"
#include "dblock/metrics.hpp"
#include "dblock/multi_lock.hpp"

namespace dblock {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct multi_lock_access {
  static multi_lease make(std::vector<lease> members) { return multi_lease(std::move(members)); }
};

namespace {

// A refused member: the transaction is rolled back through this exception.
struct member_refused {};
// A member that cannot be granted as asked (a semaphore's name as a read member, an upgrade
// beside other readers): rolled back, then thrown as invalid_argument.
struct member_misuse {
  std::string what;
};

// The set in canonical order: sorted byte-wise (std::string compares unsigned chars as
// char_traits<char>::lt, which compares as unsigned char), checked.
std::vector<lock_member> canonical(const std::vector<lock_member>& members) {
  if (members.empty()) throw invalid_argument("a multi-lock needs at least one name");
  std::vector<lock_member> out = members;
  for (const auto& m : out) {
    validate_lock_name(m.name);
    if (m.mode == lock_mode::permit)
      throw invalid_argument("multi-lock member '" + m.name +
                             "' asks for mode permit; a multi-lock's members are exclusive, read or write "
                             "(take semaphore permits with session::acquire_permits)");
    if (m.mode != lock_mode::exclusive && m.mode != lock_mode::read && m.mode != lock_mode::write)
      throw invalid_argument("multi-lock member '" + m.name + "' asks for an unknown mode");
  }
  std::sort(out.begin(), out.end(), [](const lock_member& a, const lock_member& b) { return a.name < b.name; });
  for (std::size_t i = 1; i < out.size(); ++i)
    if (out[i].name == out[i - 1].name) throw invalid_argument("lock name '" + out[i].name + "' appears twice in the set");
  return out;
}

struct refusal {
  std::string name;
  std::optional<lock_info> holder;
};

// One try of the whole set; the refusing member in *refused.
std::optional<multi_lease> try_set(session& s, const std::vector<lock_member>& set, refusal* refused) {
  auto core = detail::core_of(s);
  auto& db = detail::db_of(*core);
  const auto& table = detail::table_of(*core);
  // One request per member: a lease lock's grant request, or (read and write members) nothing
  // here: their decision is taken inside the transaction.
  std::vector<std::optional<detail::grant_request>> reqs;
  reqs.reserve(set.size());
  for (const auto& m : set) {
    if (m.mode != lock_mode::exclusive) {
      reqs.emplace_back();
      continue;
    }
    auto r = detail::request_for(*core, m.name);
    if (!r) {  // another thread of this session owns it (owner_scope::thread)
      detail::count(counter::lock_not_acquired);
      if (refused) *refused = {m.name, std::nullopt};
      return std::nullopt;
    }
    reqs.push_back(std::move(*r));
  }
  // Under the connection's mutex from BEGIN to the holds' record, as a single try (lock.cpp).
  return db.exclusive([&]() -> std::optional<multi_lease> {
    // The session's own read-write holds (re-entry, upgrade), read under the mutex as try_rw does.
    std::vector<std::optional<std::int64_t>> mine(set.size());
    for (std::size_t i = 0; i < set.size(); ++i)
      if (set[i].mode != lock_mode::exclusive) mine[i] = detail::rw_held_fence(*core, set[i].name);
    std::vector<std::int64_t> fences;
    std::vector<detail::rw_decision> rw(set.size());
    clock_type::time_point t0;
    std::uint64_t epoch = 0;
    for (int attempt = 1;; ++attempt) {
      epoch = detail::marker_epoch_of(*core);
      t0 = clock_type::now();  // before sending: the local deadlines err early
      fences.assign(set.size(), 0);
      try {
        db.in_transaction([&] {
          for (std::size_t i = 0; i < set.size(); ++i) {
            if (!reqs[i]) {  // a read or write member: decided as try_rw decides, behind every waiter
              rw[i] = detail::decide_rw(*core, set[i].name, set[i].mode == lock_mode::write,
                                        detail::behind_every_waiter, mine[i]);
              if (!rw[i].misuse.empty()) throw member_misuse{rw[i].misuse};
              if (!rw[i].granted) {
                if (refused) {
                  *refused = {set[i].name, std::move(rw[i].blocker)};
                  detail::note_rw_member_refusal(*core, set[i].name, rw[i].in_way, &refused->holder);
                }
                throw member_refused{};
              }
              fences[i] = rw[i].fence;
              continue;
            }
            auto g = table.acquire(db, *reqs[i]);
            if (!g.granted || !g.state) {
              if (refused) *refused = {set[i].name, std::move(g.state)};
              throw member_refused{};
            }
            fences[i] = g.state->fence;
          }
        });
        break;
      } catch (const member_refused&) {
        detail::count(counter::lock_not_acquired);
        return std::nullopt;
      } catch (const member_misuse& e) {
        throw invalid_argument("multi-lock member: " + e.what);
      } catch (const transaction_conflict&) {
        // A deadlock victim (InnoDB's gap locks can still cross): the whole set was rolled
        // back; again, a few times, then as a refusal.
        if (attempt >= 3) {
          detail::count(counter::lock_not_acquired);
          if (refused) *refused = {set.front().name, std::nullopt};
          return std::nullopt;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(500 * attempt));
      }
    }
    std::vector<lease> leases;
    leases.reserve(set.size());
    for (std::size_t i = 0; i < set.size(); ++i) {
      if (reqs[i])
        leases.push_back(detail::adopt_grant(core, set[i].name, fences[i], t0, epoch));
      else
        leases.push_back(detail::adopt_rw(core, set[i].name, set[i].mode == lock_mode::write, rw[i], t0, epoch));
    }
    return multi_lock_access::make(std::move(leases));
  });
}

std::string describe(const refusal& r) {
  if (!r.holder) return "lock '" + r.name + "' is held by another owner or promised to an earlier waiter";
  return "lock '" + r.name + "' is held by '" + r.holder->holder + "' (fence " + std::to_string(r.holder->fence) +
         ") until " + r.holder->expires_at + " server time (" + std::to_string(r.holder->expires_in.count()) +
         " ms from now)";
}

}  // namespace

std::optional<multi_lease> try_acquire_all(session& s, const std::vector<lock_member>& members) {
  return try_set(s, canonical(members), nullptr);
}

multi_lease acquire_all(session& s, const std::vector<lock_member>& members, milliseconds wait) {
  if (wait < milliseconds(0)) throw invalid_argument("negative wait " + std::to_string(wait.count()) + " ms");
  const auto set = canonical(members);
  auto core = detail::core_of(s);
  const auto& opts = detail::options_of(*core);
  auto& board = detail::release_board::get();
  const auto started = clock_type::now();
  const auto deadline = started + wait;
  detail::wait_pacer pacer(opts.min_backoff, opts.max_backoff, started, detail::jitter_seed(),
                           detail::hears_releases(*core));
  std::vector<std::uint64_t> seen(set.size());
  refusal last;                 // the last try's refusal
  std::uint64_t last_seen = 0;  // its member's release generation before that try
  detail::notice_want ears(detail::release_link(*core));
  for (int attempt = 0;; ++attempt) {
    for (std::size_t i = 0; i < set.size(); ++i) seen[i] = board.generation(set[i].name);  // before trying
    const auto heard_from = ears.mark();
    refusal r;
    std::optional<multi_lease> got;
    // Crash detection: the member that refused last time may be held by a crashed process;
    // its marker is looked at first, and the set is not tried while that holder still has it.
    bool skipped = false;
    if (attempt > 0 && last.holder) {
      std::size_t i = 0;
      while (i + 1 < set.size() && set[i].name != last.name) ++i;
      std::optional<lock_info> h;
      const bool again = set[i].mode == lock_mode::exclusive
                             ? detail::take_over_member(*core, last.name, last.holder->fence, seen[i] != last_seen, &h)
                             : detail::take_over_rw_member(*core, last.name, seen[i], &h);
      if (again) {
        r = {last.name, std::move(h)};
        skipped = true;
      }
    }
    if (!skipped) {
      try {
        got = try_set(s, set, &r);
      } catch (const lock_not_available&) {
        r = {set.front().name, std::nullopt};  // SQLite busy: another writer; try again
      }
    }
    if (got) {
      if (attempt > 0) detail::count(counter::lock_waits);
      return std::move(*got);
    }
    const auto now = clock_type::now();
    if (now >= deadline) {
      if (attempt > 0) detail::count(counter::lock_waits);
      throw timeout_error(describe(r) + "; the set of " + std::to_string(set.size()) +
                          " locks was not acquired within " + std::to_string(wait.count()) + " ms");
    }
    std::size_t idx = 0;
    while (idx + 1 < set.size() && set[idx].name != r.name) ++idx;
    if (!skipped) {
      last_seen = seen[idx];  // a skipped try keeps the generation of the last one sent
      if (set[idx].mode != lock_mode::exclusive) detail::stamp_rw_member_refusal(*core, r.name, seen[idx]);
    }
    last = r;
    pacer.refused(r.holder ? std::optional<std::int64_t>(r.holder->fence) : std::nullopt, now);
    const auto sleep = pacer.next(r.holder ? std::optional<milliseconds>(r.holder->expires_in) : std::nullopt, now);
    const auto until = std::min(deadline, clock_type::now() + sleep);
    if (!ears.ready(heard_from, until)) continue;  // listening began after this try: try again
    board.wait(set[idx].name, seen[idx], until);
  }
}

// ----------------------------------------------------------------------------- multi_lease

multi_lease& multi_lease::operator=(multi_lease&& o) noexcept {
  if (this != &o) {
    try {
      release();
    } catch (...) {
    }
    members_ = std::move(o.members_);
  }
  return *this;
}

multi_lease::~multi_lease() {
  try {
    release();
  } catch (...) {
    // Best effort: an unreleased row expires after its TTL.
  }
}

std::int64_t multi_lease::fence(std::string_view name) const {
  for (const auto& l : members_)
    if (l.name() == name) return l.fence();
  throw invalid_argument("lock '" + std::string(name) + "' is not a member of this set");
}

bool multi_lease::is_held() const noexcept {
  if (members_.empty()) return false;
  return std::all_of(members_.begin(), members_.end(), [](const lease& l) { return l.is_held(); });
}

milliseconds multi_lease::remaining() const noexcept {
  if (members_.empty()) return milliseconds(0);
  auto left = milliseconds::max();
  for (const auto& l : members_) left = std::min(left, l.remaining());
  return left;
}

void multi_lease::release() {
  auto members = std::move(members_);
  members_.clear();
  std::exception_ptr first;
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    try {
      it->release();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

void multi_lease::verify_in(transaction_ref tx) const {
  if (members_.empty()) throw lock_lost("verify_in on a released multi-lock");
  for (const auto& l : members_) l.verify_in(tx);
}

}  // namespace dblock
