// dblock/multi_lock.hpp — all-or-nothing acquisition of a set of locks (Redisson's
// MultiLock, Curator's InterProcessMultiLock): lease locks and read or write holds of
// read-write locks, every member granted in ONE transaction, in a canonical order (names
// sorted byte-wise), so that two overlapping sets never wait on each other in a cycle; a
// refused member rolls the whole transaction back and nothing is held. Each member is an
// ordinary lease of the session (its own fence, renewed by the session's one renewal
// statement, reported lost through session_options::on_lost), in the member's mode. The SQL
// and the failure table are in docs/locks.md, "Multi-locks".
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dblock/lock.hpp"

namespace dblock {

// One member of a set: a lock name and its mode (lock.hpp's lock_mode). Implicit from a
// name, so that {"a", "b"} is a set of two exclusive members. lock_mode::exclusive is the
// lease lock `name` (session::try_acquire(name)); lock_mode::read and lock_mode::write are a
// read or the write hold of the read-write lock `name` (session::try_acquire(name, mode)),
// granted by the same rules (writers exclude, re-entry, upgrade of the only reader). A set may
// mix them; lock_mode::permit is refused with invalid_argument (semaphores are not members).
// As outside a set, the lease lock `name` and the read-write lock `name` do not exclude each
// other.
struct lock_member {
  lock_member(std::string n, lock_mode m = lock_mode::exclusive) : name(std::move(n)), mode(m) {}  // NOLINT
  lock_member(const char* n, lock_mode m = lock_mode::exclusive) : name(n), mode(m) {}              // NOLINT
  std::string name;
  lock_mode mode = lock_mode::exclusive;
};

// The holds of one granted set. RAII: the destructor releases every member (best effort,
// never throws). Move-only.
class multi_lease {
 public:
  multi_lease(multi_lease&&) noexcept = default;
  multi_lease& operator=(multi_lease&&) noexcept;
  multi_lease(const multi_lease&) = delete;
  multi_lease& operator=(const multi_lease&) = delete;
  ~multi_lease();

  // The members' leases, sorted by name (byte-wise), each in its member's mode (lease::mode).
  // Empty once released.
  [[nodiscard]] const std::vector<lease>& members() const noexcept { return members_; }
  // The fence of member `name`; throws invalid_argument when it is not a member.
  [[nodiscard]] std::int64_t fence(std::string_view name) const;
  // True while every member is held (lease::is_held).
  [[nodiscard]] bool is_held() const noexcept;
  // The smallest lease::remaining() of the members.
  [[nodiscard]] std::chrono::milliseconds remaining() const noexcept;
  // Releases every member, in reverse canonical order, one round trip each. Every member is
  // released even when one fails; then the first failure is thrown (lock_lost when a member
  // was no longer ours).
  void release();
  // lease::verify_in for every member, inside the caller's transaction.
  void verify_in(transaction_ref tx) const;

 private:
  friend struct multi_lock_access;
  explicit multi_lease(std::vector<lease> members) : members_(std::move(members)) {}
  std::vector<lease> members_;
};

// One try (one transaction: BEGIN, each member's grant statements, COMMIT). Empty when any
// member is refused (held by another owner, a writer in the way of a read member, or
// promised to an earlier waiter of its wait line): then nothing was granted. A member this
// session already holds is re-entered (holds + 1, same fence; a write member of the only
// reader upgrades it, with a new fence). Throws invalid_argument for an empty set, a
// duplicate, an invalid name, a permit member, a read or write member whose name is a
// semaphore, or an upgrade while other owners read (nothing is then held).
[[nodiscard]] std::optional<multi_lease> try_acquire_all(session& s, const std::vector<lock_member>& members);

// Tries until the whole set is granted, up to `wait` (zero = one try). Between tries it
// sleeps with the session's backoff (min_backoff to max_backoff), woken early by a release of
// the member that refused it (in this process, or by NOTIFY on PostgreSQL). It takes no
// ticket in the members' wait lines (tickets in several lines could each put another set
// first): a set waits without queueing, and a waiter of one member may pass it. Throws
// timeout_error naming a refusing member and its holder when the wait runs out.
[[nodiscard]] multi_lease acquire_all(session& s, const std::vector<lock_member>& members,
                                      std::chrono::milliseconds wait);

}  // namespace dblock
