// lib/core/link.cpp — see link.hpp.
#include "core/link.hpp"

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
// While listening, the thread waits for notifications in slices this long, so that a job
// added meanwhile is due at most this late.
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
  thread_ = std::thread([this] { loop(); });
}

link::~link() {
  {
    std::lock_guard l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void link::add(job* j, clock::time_point due) {
  {
    std::lock_guard l(mu_);
    jobs_[j] = due;
    changed_ = true;
  }
  cv_.notify_all();
}

void link::remove(job* j) {
  std::unique_lock l(mu_);
  jobs_.erase(j);
  changed_ = true;
  cv_.notify_all();
  cv_.wait(l, [&] { return running_ != j; });
}

void link::listen() {
  if (!can_listen_) return;
  {
    std::lock_guard l(mu_);
    if (listen_) return;
    listen_ = changed_ = true;
  }
  cv_.notify_all();
}

bool link::listening() const {
  std::lock_guard l(mu_);
  return listen_;
}

void link::await_releases(clock::duration slice) {
  auto& board = release_board::get();
  try {
    conn_->with_driver([&](driver& d) {
      const auto n = conn_->connection_number();
      if (subscribed_on_ != n) {  // first time, or a new connection: LISTEN again
        d.listen(release_channel);
        subscribed_on_ = n;
      }
      for (const auto& name : d.await_notifications(std::chrono::ceil<milliseconds>(slice))) board.bump(name);
    });
  } catch (const std::exception&) {
    // Lost the connection: it is replaced on next use; meanwhile waiters poll.
    subscribed_on_ = 0;
    std::unique_lock l(mu_);
    cv_.wait_for(l, milliseconds(100), [&] { return stopping_ || changed_; });
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
    if (listen_) {
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
