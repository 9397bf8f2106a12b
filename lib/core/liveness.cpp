// lib/core/liveness.cpp — see liveness.hpp.
#include "core/liveness.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "core/dialect.hpp"
#include "core/ops/liveness.hpp"

namespace dblock::detail {

bool crash_fast_path_allowed(const backend& b, bool galera) noexcept {
  return liveness_for(b.kind()).supported() && !b.pooled() && !galera;
}

namespace {
// A marker epoch: the server connection's name as a nonzero number (0 = not held). The
// name, not the client's connection count: a client library that reconnects by itself
// (libpqxx) would keep the count while the markers are gone.
std::uint64_t epoch_of(const std::string& server_connection) {
  if (server_connection.empty()) return 0;
  const auto h = static_cast<std::uint64_t>(std::hash<std::string>{}(server_connection));
  return h == 0 ? 1 : h;
}

std::mutex registry_mu;
std::map<const link*, std::weak_ptr<liveness>>& registry() {
  static std::map<const link*, std::weak_ptr<liveness>> r;  // guarded by registry_mu
  return r;
}
}  // namespace

std::shared_ptr<liveness> liveness::of(const std::shared_ptr<link>& l) {
  std::lock_guard g(registry_mu);
  auto& slot = registry()[l.get()];
  if (auto existing = slot.lock()) return existing;
  auto made = std::make_shared<liveness>(l, liveness_for(l->conn().kind()));
  slot = made;
  return made;
}

liveness::liveness(std::shared_ptr<link> l, const liveness_ops& ops) : link_(std::move(l)), ops_(ops) {
  link_->add(this, clock::now() + window_of(0) / 4);
}

liveness::~liveness() {
  link_->remove(this);
  std::lock_guard g(registry_mu);
  auto it = registry().find(link_.get());
  if (it != registry().end() && it->second.expired()) registry().erase(it);
}

void liveness::confirm(std::uint64_t conn, clock::time_point sent) {
  if (conn != confirmed_conn_) {
    if (confirmed_conn_ != 0) {
      if (past_.size() >= 64) past_.erase(past_.begin());
      past_.emplace_back(confirmed_conn_, confirmed_sent_);
    }
    confirmed_conn_ = conn;
    confirmed_sent_ = sent;
  } else if (sent > confirmed_sent_) {
    confirmed_sent_ = sent;
  }
}

int liveness::window_code(std::chrono::milliseconds w) noexcept {
  int code = 0;
  while (code < 9 && window_of(code) < w) ++code;
  return code;
}

std::chrono::milliseconds liveness::window_of(int code) noexcept {
  return std::chrono::milliseconds(50) * (1 << std::clamp(code, 0, 9));
}

std::shared_ptr<liveness::marker> liveness::adopt(const std::function<std::string()>& make_owner,
                                                  std::chrono::milliseconds window) {
  auto& conn = link_->conn();
  // A PostgreSQL key is a 32-bit hash of the token: another process's live token may share
  // it (then the try is refused and another token is drawn).
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto m = std::make_shared<marker>();
    m->owner = make_owner();
    m->window = window;
    const auto sent = clock::now();
    std::string server_connection;
    const auto taken = conn.exclusive([&] { return ops_.take(conn, m->owner, &server_connection); });
    if (taken == marker_take::unsuited) return nullptr;
    const auto number = epoch_of(server_connection);
    if (taken == marker_take::busy || number == 0) continue;
    std::lock_guard g(mu_);
    m->epoch = number;
    confirm(number, sent);  // the answer proves the connection alive at the send
    markers_.push_back(m);
    return m;
  }
  return nullptr;
}

void liveness::forget(const std::shared_ptr<marker>& m) noexcept {
  if (!m) return;
  std::uint64_t held_on = 0;
  {
    std::lock_guard g(mu_);
    markers_.erase(std::remove(markers_.begin(), markers_.end(), m), markers_.end());
    held_on = m->epoch;
    m->epoch = 0;
  }
  if (held_on == 0) return;
  try {
    // lock_marker_drop.sql frees it only where this connection holds it.
    auto& conn = link_->conn();
    conn.exclusive([&] { ops_.drop(conn, m->owner); });
  } catch (...) {
    // The marker goes with the connection at the latest.
  }
}

std::uint64_t liveness::epoch(const marker& m) const {
  std::lock_guard g(mu_);
  return m.epoch;
}

liveness::clock::time_point liveness::trusted_until(const marker& m, std::uint64_t e) const {
  std::lock_guard g(mu_);
  if (e == 0) return clock::time_point{};
  if (m.epoch == e && confirmed_conn_ == e) return confirmed_sent_ + m.window;
  // The marker's connection was replaced: what its last confirmation promised, no more.
  for (auto it = past_.rbegin(); it != past_.rend(); ++it)
    if (it->first == e) return it->second + m.window;
  return clock::time_point{};
}

liveness::clock::time_point liveness::renew(backend& conn) noexcept {
  const auto sent = clock::now();
  auto period = std::chrono::duration_cast<clock::duration>(window_of(0)) / 4;
  {
    std::lock_guard g(mu_);
    if (!markers_.empty()) period = std::chrono::duration_cast<clock::duration>(markers_.front()->window) / 4;
    for (auto& m : markers_) period = std::min<clock::duration>(period, m->window / 4);
  }
  try {
    conn.exclusive([&] {
      // A lost connection throws here and is replaced on the next use; a standby answers
      // with no name (nothing is confirmed).
      const auto number = epoch_of(ops_.ping(conn));
      if (number == 0) return;
      std::vector<std::shared_ptr<marker>> retake;
      {
        std::lock_guard g(mu_);
        for (auto& m : markers_)
          if (m->epoch != number) retake.push_back(m);
      }
      // A new connection: take the markers again, for grants from now on; holds granted
      // under the old connection keep what their last confirmation there promised, no more
      // (trusted_until reads them in past_).
      std::vector<std::uint64_t> now_on;
      for (auto& m : retake) {
        std::string server_connection;
        const bool taken = ops_.take(conn, m->owner, &server_connection) == marker_take::taken &&
                           epoch_of(server_connection) == number;
        now_on.push_back(taken ? number : 0);
      }
      // The new epochs and the confirmation that moves the old connection to past_
      // change together: between the two, a hold of the old connection would read as
      // untrusted, earlier than it was promised.
      std::lock_guard g(mu_);
      for (std::size_t i = 0; i < retake.size(); ++i) retake[i]->epoch = now_on[i];
      confirm(number, sent);
    });
  } catch (...) {
    return clock::now() + std::chrono::milliseconds(5);  // reconnect soon
  }
  return sent + period;
}

}  // namespace dblock::detail
