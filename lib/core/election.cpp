// lib/core/election.cpp — leader election (dblock/election.hpp) on the session's lease
// locks (lib/core/lock.cpp, lib/core/lock_family.hpp) and the dialect's election statements
// (lib/core/ops/election.hpp): campaign = acquire the lease NAME (wait line, renewal,
// on_lost as any lease), then store the value for that grant's fence; the observer re-reads
// the leader when the release board (lib/core/release_board.hpp) says the name changed, or
// every observe_options::poll.
#include <condition_variable>
#include <mutex>

#include "core/backend.hpp"
#include "core/internal.hpp"
#include "core/lock_family.hpp"
#include "core/ops/election.hpp"
#include "core/release_board.hpp"
#include "core/text.hpp"
#include "dblock/election.hpp"
#include "dblock/errors.hpp"

namespace dblock {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

void validate_value(std::string_view value) {
  if (value.size() > 4096)
    throw invalid_argument("election value is " + std::to_string(value.size()) + " bytes long (at most 4096)");
  std::size_t bad = 0;
  if (!detail::valid_utf8(value, &bad))
    throw invalid_argument("election value is not valid UTF-8 (bad byte at offset " + std::to_string(bad) + ")");
}

std::optional<leader_info> read_leader(detail::backend& b, const std::string& name) {
  return detail::elections_for(b.kind()).leader(b, name);
}

}  // namespace

// ----------------------------------------------------------------------------- election

election::election(session& s, std::string name) : s_(&s), core_(detail::core_of(s)), name_(std::move(name)) {
  validate_lock_name(name_);
}

leadership election::won(lease l, std::string_view value) {
  auto& db = detail::db_of(*core_);
  const auto& ops = detail::elections_for(db.kind());
  if (!ops.set(db, name_, detail::owner_of(*core_), l.fence(), std::string(value))) {
    const auto fence = l.fence();
    try {
      l.release();
    } catch (...) {
      // It was lost: that is what the caller hears.
    }
    throw lock_lost("election '" + name_ + "': the lease (fence " + std::to_string(fence) +
                    ") was lost before the leader's value was stored");
  }
  detail::release_board::get().bump(name_);  // observers in this process look at once
  return leadership(core_, std::move(l), std::string(value));
}

leadership election::campaign(std::string_view value, milliseconds wait) {
  validate_value(value);
  try {
    return won(s_->acquire(name_, wait), value);
  } catch (const timeout_error& e) {
    std::optional<leader_info> now;
    try {
      now = leader();
    } catch (...) {
    }
    if (!now) throw;
    throw timeout_error("election '" + name_ + "' is led by '" + now->value + "' (holder '" + now->holder +
                        "', fence " + std::to_string(now->fence) + "): not leader within " +
                        std::to_string(wait.count()) + " ms");
  }
}

std::optional<leadership> election::try_campaign(std::string_view value) {
  validate_value(value);
  auto l = s_->try_acquire(name_);
  if (!l) return std::nullopt;
  return won(std::move(*l), value);
}

std::optional<leader_info> election::leader() { return read_leader(detail::db_of(*core_), name_); }

std::optional<leader_info> current_leader(database& db, std::string_view name) {
  validate_lock_name(name);
  return read_leader(*detail::backend_of(db), std::string(name));
}

std::vector<leader_info> list_leaders(database& db) {
  auto b = detail::backend_of(db);
  return detail::elections_for(b->kind()).list(*b);
}

// ----------------------------------------------------------------------------- leadership

leadership::leadership(std::shared_ptr<session_core> core, lease l, std::string value)
    : core_(std::move(core)), lease_(std::move(l)), value_(std::move(value)) {}

leadership::leadership(leadership&& o) noexcept = default;

leadership& leadership::operator=(leadership&& o) noexcept {
  if (this != &o) {
    try {
      resign();
    } catch (...) {
    }
    core_ = std::move(o.core_);
    lease_ = std::move(o.lease_);
    value_ = std::move(o.value_);
  }
  return *this;
}

leadership::~leadership() {
  try {
    resign();
  } catch (...) {
    // Best effort: the lease expires after its TTL, and its value no longer counts then.
  }
}

void leadership::resign() {
  if (!core_) return;
  auto core = std::move(core_);
  core_.reset();
  if (lease_.is_held()) {
    try {
      auto& db = detail::db_of(*core);
      detail::elections_for(db.kind()).clear(db, lease_.name(), detail::owner_of(*core), lease_.fence());
    } catch (...) {
      // The value counts only with its grant's row: releasing the lease is what matters.
    }
  }
  lease_.release();  // lock_lost when leadership had been lost; the release bumps the board
}

// ----------------------------------------------------------------------------- observer

struct election_observer::state {
  std::shared_ptr<session_core> core;
  std::string name;
  std::function<void(const std::optional<leader_info>&)> on_change;
  milliseconds poll{250};
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  std::thread worker;

  void run() {
    auto& board = detail::release_board::get();
    auto& db = detail::db_of(*core);
    std::optional<leader_info> last;
    bool first = true;
    detail::notice_want ears(detail::release_link(*core));
    for (;;) {
      const auto seen = board.generation(name);  // before reading: a change after this wakes us
      const auto heard_from = ears.mark();
      auto next = clock_type::now() + poll;
      try {
        auto now = read_leader(db, name);
        const bool changed = first || now.has_value() != last.has_value() ||
                             (now && (now->fence != last->fence || now->value != last->value));
        if (now) next = std::min(next, clock_type::now() + std::max(now->expires_in, milliseconds(1)));
        if (changed) {
          first = false;
          last = now;
          std::lock_guard l(mu);
          if (stopping) return;
          on_change(now);
        } else {
          last = now;  // the same leader; its expiry moved on
        }
      } catch (...) {
        // The database did not answer: look again after the poll period.
      }
      {
        std::lock_guard l(mu);
        if (stopping) return;
      }
      if (!ears.ready(heard_from, next)) continue;  // listening began after this read: read again
      board.wait(name, seen, next);
      std::lock_guard l(mu);
      if (stopping) return;
    }
  }
};

election_observer election::observe(std::function<void(const std::optional<leader_info>&)> on_change,
                                    observe_options opts) {
  if (!on_change) throw invalid_argument("observe: no callback");
  if (opts.poll < milliseconds(10))
    throw invalid_argument("observe: poll " + std::to_string(opts.poll.count()) + " ms is too short (at least 10 ms)");
  auto st = std::make_shared<election_observer::state>();
  st->core = core_;
  st->name = name_;
  st->on_change = std::move(on_change);
  st->poll = opts.poll;
  st->worker = std::thread([raw = st.get()] { raw->run(); });
  return election_observer(std::move(st));
}

election_observer::election_observer(std::shared_ptr<state> st) : st_(std::move(st)) {}

election_observer::~election_observer() { stop(); }

election_observer& election_observer::operator=(election_observer&& o) noexcept {
  if (this != &o) {
    stop();
    st_ = std::move(o.st_);
  }
  return *this;
}

void election_observer::stop() {
  if (!st_) return;
  {
    std::lock_guard l(st_->mu);
    st_->stopping = true;
  }
  detail::release_board::get().bump(st_->name);  // wakes the worker out of its wait
  if (st_->worker.joinable() && st_->worker.get_id() != std::this_thread::get_id()) st_->worker.join();
  else if (st_->worker.joinable()) st_->worker.detach();
  st_.reset();
}

}  // namespace dblock
