// lib/core/link.cpp — see link.hpp.
#include "core/link.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "core/dialect.hpp"
#include "core/release_board.hpp"

namespace dblock::detail {

using std::chrono::milliseconds;

release_board& release_board::get() {
  static release_board b;
  return b;
}

std::uint64_t release_board::generation(const std::string& name) {
  std::lock_guard l(mu_);
  return gen_[name];
}

void release_board::bump(const std::string& name) {
  {
    std::lock_guard l(mu_);
    if (gen_.size() >= 4096) gen_.clear();  // many names: a waiter that misses a bump polls
    ++gen_[name];
  }
  cv_.notify_all();
}

void release_board::record(const release_notice& n) {
  if (n.owner.empty()) return;
  if (handed_.size() >= 4096) handed_.clear();
  auto [it, fresh] = handed_.try_emplace(n.name, n);
  if (!fresh && it->second.fence <= n.fence) it->second = n;
}

void release_board::notice(const release_notice& n) {
  {
    std::lock_guard l(mu_);
    record(n);
  }
  bump(n.name);  // after the record: the woken waiter finds it
}

void release_board::releasing(const std::string& name) {
  std::lock_guard l(mu_);
  auto& f = in_flight_[name];
  const long pid = static_cast<long>(::getpid());
  if (f.count == 0 || f.pid != pid) f = {0, clock::now(), pid};
  ++f.count;
}

void release_board::finish(const std::string& name, const release_notice* handed) {
  {
    std::lock_guard l(mu_);
    auto it = in_flight_.find(name);
    if (it != in_flight_.end() && --it->second.count <= 0) in_flight_.erase(it);
    if (handed) record(*handed);
    if (gen_.size() >= 4096) gen_.clear();
    ++gen_[name];
  }
  cv_.notify_all();
}

bool release_board::release_in_flight(const std::string& name, clock::duration max_age) {
  std::lock_guard l(mu_);
  auto it = in_flight_.find(name);
  return it != in_flight_.end() && it->second.pid == static_cast<long>(::getpid()) &&
         clock::now() - it->second.since < max_age;
}

bool release_board::has_handed(const std::string& name, const std::string& owner, std::int64_t ticket) {
  std::lock_guard l(mu_);
  auto it = handed_.find(name);
  return it != handed_.end() && it->second.ticket == ticket && it->second.owner == owner;
}

std::optional<std::int64_t> release_board::take_handed(const std::string& name, const std::string& owner,
                                                       std::int64_t ticket) {
  std::lock_guard l(mu_);
  auto it = handed_.find(name);
  if (it == handed_.end() || it->second.ticket != ticket || it->second.owner != owner) return std::nullopt;
  const auto fence = it->second.fence;
  handed_.erase(it);
  return fence;
}

namespace {
// A non-negative decimal integer that fits int64, or nothing.
std::optional<std::int64_t> parse_count(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  std::int64_t v = 0;
  for (const char ch : s) {
    if (ch < '0' || ch > '9') return std::nullopt;
    v = v * 10 + (ch - '0');
  }
  return v;
}
}  // namespace

release_notice parse_release_notice(std::string_view payload) {
  release_notice n;
  constexpr char us = '\x1f';
  const auto f = payload.rfind(us);
  const auto t = f == std::string_view::npos || f == 0 ? std::string_view::npos : payload.rfind(us, f - 1);
  const auto o = t == std::string_view::npos || t == 0 ? std::string_view::npos : payload.rfind(us, t - 1);
  if (o != std::string_view::npos && o > 0 && t > o + 1) {
    const auto ticket = parse_count(payload.substr(t + 1, f - t - 1));
    const auto fence = parse_count(payload.substr(f + 1));
    if (ticket && fence) {
      n.name = std::string(payload.substr(0, o));
      n.owner = std::string(payload.substr(o + 1, t - o - 1));
      n.ticket = *ticket;
      n.fence = *fence;
      return n;
    }
  }
  n.name = std::string(payload);
  return n;
}

void release_board::wait(const std::string& name, std::uint64_t seen, clock::time_point until,
                         std::uint64_t releases) {
  std::unique_lock l(mu_);
  // A generation below `seen` was cleared meanwhile (see bump): wake, and let the caller look.
  cv_.wait_until(l, until, [&] {
    const auto g = gen_[name];
    return g < seen || g - seen >= releases;
  });
}

namespace {

// The channel sql/postgresql/lock_release*.sql notify on, with the name as payload.
constexpr const char* release_channel = "dblock_release";
// While listening, the thread waits for notifications in slices at most this long (a change
// of jobs or wants ends a slice at once through the eventfd; this bounds a missed poke).
constexpr milliseconds listen_slice{20};

// The process id is part of the key: a child forked while a link existed has a copy of its
// object but not its thread, and must open its own.
std::string key_of(const backend& main, const open_options& o) {
  return std::to_string(::getpid()) + '\x1f' + main.describe() + '\x1f' + std::to_string(static_cast<int>(main.client())) + '\x1f' +
         std::to_string(main.pooled()) + '\x1f' + std::to_string(o.network_timeout.count()) + '\x1f' +
         std::to_string(o.connect_timeout.count()) + '\x1f' + o.application_name;
}

std::mutex registry_mu;
std::map<std::string, std::weak_ptr<link>>& registry() {
  static std::map<std::string, std::weak_ptr<link>> r;  // guarded by registry_mu
  return r;
}

}  // namespace

std::shared_ptr<link> link::shared(const backend& main, const open_options& opts, role r) {
  const auto key = key_of(main, opts) + (r == role::liveness ? "\x1fliveness" : "");
  std::lock_guard l(registry_mu);
  auto& slot = registry()[key];
  if (auto existing = slot.lock()) return existing;
  auto conn = main.reopen(opts);
  // A single-writer database's busy handler sleeps up to 100 ms between retries and is
  // unfair to a long waiter: renewals fail fast instead and are retried within milliseconds.
  if (traits_of(conn->kind()).single_writer) conn->set_busy_timeout(milliseconds(20));
  const bool can_listen =
      r == role::renewals && traits_of(conn->kind()).notify && !conn->pooled() && conn->raw().can_listen();
  auto made = std::make_shared<link>(std::move(conn), can_listen);
  slot = made;
  return made;
}

std::shared_ptr<link> link::on(std::shared_ptr<backend> conn) { return std::make_shared<link>(std::move(conn), false); }

link::link(std::shared_ptr<backend> conn, bool can_listen) : conn_(std::move(conn)), can_listen_(can_listen) {
  if (can_listen_) wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);  // -1: slices only
  thread_ = std::thread([this] { loop(); });
}

link::~link() {
  {
    std::lock_guard l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  poke();
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void link::poke() noexcept {
  if (wake_fd_ < 0) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);  // full (EAGAIN): already poked
}

void link::add(job* j, clock::time_point due) {
  {
    std::lock_guard l(mu_);
    jobs_[j] = due;
    changed_ = true;
  }
  cv_.notify_all();
  poke();
}

void link::remove(job* j) {
  std::unique_lock l(mu_);
  jobs_.erase(j);
  changed_ = true;
  cv_.notify_all();
  cv_.wait(l, [&] { return running_ != j; });
}

void link::want_notices() {
  if (!can_listen_) return;
  {
    std::lock_guard l(mu_);
    if (wants_++ > 0) return;
    changed_ = true;
  }
  cv_.notify_all();
  poke();
}

void link::unwant_notices() noexcept {
  if (!can_listen_) return;
  {
    std::lock_guard l(mu_);
    if (wants_ <= 0 || --wants_ > 0) return;
    changed_ = true;
  }
  // Stop listening at once: every release would wake this process's server connection.
  cv_.notify_all();
  poke();
}

std::uint64_t link::subscription() const {
  std::lock_guard l(mu_);
  return subscription_;
}

std::uint64_t link::await_subscription(clock::time_point until) {
  std::unique_lock l(mu_);
  if (!can_listen_) return 0;
  cv_.wait_until(l, until, [&] { return subscription_ != 0 || stopping_; });
  return subscription_;
}

// LISTEN (on) or UNLISTEN (off) on the link's connection; runs on the link's thread without mu_.
void link::subscribe(bool on) {
  bool ok = true;
  try {
    conn_->with_driver([&](driver& d) {
      if (on) {
        d.listen(release_channel);
        subscribed_on_ = conn_->connection_number();
      } else {
        d.unlisten_all();
      }
    });
  } catch (const std::exception&) {
    ok = false;  // lost the connection: it is replaced on next use; meanwhile waiters poll
  }
  std::unique_lock l(mu_);
  if (ok) {
    subscription_ = on ? ++subscriptions_ : 0;
    cv_.notify_all();  // await_subscription()
  } else {
    subscription_ = 0;
    cv_.wait_for(l, milliseconds(100), [&] { return stopping_; });
  }
}

void link::await_releases(clock::duration slice) {
  auto& board = release_board::get();
  try {
    conn_->with_driver([&](driver& d) {
      if (subscribed_on_ != conn_->connection_number()) throw std::runtime_error("the connection was replaced");
      for (const auto& payload : d.await_notifications(std::chrono::ceil<milliseconds>(slice), wake_fd_))
        board.notice(parse_release_notice(payload));
    });
    if (wake_fd_ >= 0) {
      std::uint64_t drained = 0;
      [[maybe_unused]] const auto n = ::read(wake_fd_, &drained, sizeof drained);
    }
  } catch (const std::exception&) {
    // Lost the connection (or it was replaced after a renewal lost it): listen again on
    // the new one, a new subscription (releases in between were not heard).
    std::lock_guard l(mu_);
    subscription_ = 0;
  }
}

void link::loop() {
  std::unique_lock l(mu_);
  while (!stopping_) {
    changed_ = false;
    job* next = nullptr;
    auto due = clock::time_point::max();
    for (const auto& [j, d] : jobs_)
      if (d < due) {
        due = d;
        next = j;
      }
    const auto now = clock::now();
    if (next && due <= now) {
      running_ = next;
      l.unlock();
      const auto again = next->renew(*conn_);
      l.lock();
      running_ = nullptr;
      if (auto it = jobs_.find(next); it != jobs_.end()) it->second = again;
      cv_.notify_all();  // remove() may wait for this renewal
      continue;
    }
    const bool want = wants_ > 0;
    if (want != (subscription_ != 0)) {
      l.unlock();
      subscribe(want);
      l.lock();
      continue;
    }
    if (subscription_ != 0) {
      const auto slice = std::clamp<clock::duration>(due - now, milliseconds(1), listen_slice);
      l.unlock();
      await_releases(slice);
      l.lock();
      continue;
    }
    if (due == clock::time_point::max()) {
      cv_.wait(l, [&] { return stopping_ || changed_; });
    } else {
      cv_.wait_until(l, due, [&] { return stopping_ || changed_; });
    }
  }
}

}  // namespace dblock::detail
