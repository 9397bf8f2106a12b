// dblock/lock.hpp — lease locks (the heart of dblock): a unique-index lock table with
// fencing tokens, re-entrant holds, a wait line kept in the database (first come, first
// served), one renewal statement per session for every lock it holds, and fast hand-off
// (in-process wake-up; LISTEN/NOTIFY on PostgreSQL). The exact SQL per dialect is in
// sql/<dialect>/lock_*.sql and in docs/locks.md.
//
// Who is the owner: a dblock::session. Every thread using the same session is the SAME
// owner (like an etcd lease): a second acquire of a name the session holds re-enters it
// (holds + 1, same fence), whichever thread asks. For mutual exclusion between threads
// of one process, give each thread its own session, or set
// session_options::scope = owner_scope::thread, which makes the holding thread the
// owner: other threads of the session then wait or are refused like any other owner.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dblock/database.hpp"
#include "dblock/transaction.hpp"

namespace dblock {

// Implementation types (lib/core/session_core.hpp).
struct session_core;
struct held_lock;

// What a lease holds: a lease lock (mutual exclusion), a read or a write hold of a read-write
// lock, or one permit of a counting semaphore.
enum class lock_mode { exclusive, read, write, permit };
[[nodiscard]] const char* to_string(lock_mode m) noexcept;  // "exclusive", "read", "write", "permit"

// Why a lease was lost, for the callback and for lease::lost_reason().
struct lost_lease {
  std::string name;
  std::int64_t fence = 0;
  std::string reason;  // e.g. "the lock row is gone or belongs to another owner", "renewal failed until ..."
};

enum class owner_scope {
  session,  // default: all threads of the session are one owner (re-entrant across threads)
  thread,   // the acquiring thread is the owner; other threads of the session are refused/wait
};

enum class renewal_connection {
  shared,    // the process's background connection (one per database and process)
  database,  // the session's own database connection
};

struct session_options {
  // Lease length of every lock of this session, on the server's clock; at least 100 ms.
  // The timing model is in docs/locks.md, "Timing". Default: 30 s.
  std::chrono::milliseconds ttl{30'000};
  // Bound on the rate difference between this client's monotonic clock and the server's,
  // as a fraction: a lease counts as lost ttl * max_clock_drift before its local
  // deadline. 0 to 0.5. Default: 0.01.
  double max_clock_drift = 0.01;
  // How long after its expiry a lease that ran out unreleased may be taken over, on the
  // server's clock (a released lock is free at once); 0 disables it. Default: 1 s.
  std::chrono::milliseconds lock_delay{1'000};
  // Free text shown by `dblock locks`. Default: "<hostname>:<pid>".
  std::string holder;
  // Called once per lost lock, possibly from several threads at once (keep it short,
  // never throw); docs/locks.md says from where. Default: none.
  std::function<void(const lost_lease&)> on_lost;
  // Who owns a hold: the whole session, or the acquiring thread. Default: session.
  owner_scope scope = owner_scope::session;
  // Renew every ttl / renew_divisor; a failed renewal is retried sooner, with backoff.
  // Default: 3.
  int renew_divisor = 3;
  // Wake waiters on release by NOTIFY (PostgreSQL with libpqxx, not through a transaction
  // pooler), received by the process's background connection; on a SQLite database file,
  // through the shared-memory file `<database>-dblock-wake` beside it, where every session
  // posts its releases (docs/locks.md, "Waiting"); waiters poll otherwise. Default: true.
  bool listen = true;
  // Backoff bounds of a waiting acquire() (jittered, change-aware; docs/locks.md,
  // "Waiting"). Default: 2 ms, 250 ms.
  std::chrono::milliseconds min_backoff{2};
  std::chrono::milliseconds max_backoff{250};
  // PostgreSQL: the final release does not wait for its WAL flush; the next grant's
  // durable commit flushes it (docs/locks.md, "Release durability"). Default: true.
  bool async_release = true;
  // A blocking acquire() refused once takes a ticket in the name's wait line (a row, renewed
  // with the session's leases); a free name goes to the lowest live ticket, and tries
  // without one are refused while anyone waits (docs/locks.md, "Waiting"). Default: true.
  bool fair = true;
  // Where renewals run: the process's background connection, shared by its sessions on
  // the same database, or the session's own connection (no extra connection; a renewal then
  // waits for the application's statements on it). Default: renewal_connection::shared.
  renewal_connection renew_on = renewal_connection::shared;
  // The first session on a database handle checks whether the server's replication can lose
  // a committed grant on failover (replication.hpp; docs/operations.md, "Deployment
  // topologies"). Default: replication_policy::warn.
  replication_policy replication = replication_policy::warn;
  // Crash detection (docs/locks.md, "Crash detection"): on PostgreSQL and MariaDB/MySQL
  // opened from a URL (not through a transaction pooler, not on a Galera node) the session
  // holds a liveness marker on the process's background connection, so a waiter takes a
  // lock over within milliseconds of the holder's connection ending (its process killed)
  // instead of at its TTL; in exchange a hold is trusted only while that connection is
  // confirmed every few milliseconds, and counts as lost when it is not. Waiting sessions
  // with this on take such locks over; with it off a session neither holds a marker nor
  // takes over early. Elsewhere it changes nothing. Default: true.
  bool detect_crashes = true;
  // Crash detection's trade: a hold is trusted at most this long after its marker
  // connection last answered (it is confirmed every quarter of it), and a crashed holder's
  // lock goes to a waiter about this long + 5% + 5 ms after its connection ended. Rounded
  // up to 50 ms x 2^k (50 ms to 25.6 s). Larger values survive longer stalls of the process
  // or of the marker connection. 50 ms gives takeovers under 100 ms on a quiet host; a
  // window under the default puts the process's markers on a connection of their own (one
  // more per process and database) whose thread runs only heartbeats. Default: 800 ms.
  std::chrono::milliseconds liveness_window{800};
};

// A row of the lock table, for `dblock locks` and for error messages.
struct lock_info {
  std::string name;
  std::string holder;
  int holds = 0;
  std::int64_t fence = 0;
  // When another owner may take the lock over: the lease's end plus its lock delay.
  std::string expires_at;             // UTC, ISO 8601, from the server
  std::chrono::milliseconds expires_in{0};  // negative = expired (by the server's clock)
  // The holder's lock delay (session_options::lock_delay). The lease itself ended at
  // expires_at - lock_delay: while 0 <= expires_in < lock_delay the lock is in its delay
  // (the holder must have stopped; nobody may take it yet).
  std::chrono::milliseconds lock_delay{0};
  [[nodiscard]] bool in_lock_delay() const noexcept {
    return expires_in.count() >= 0 && expires_in < lock_delay;
  }
};

class session;

// One hold of a lease lock. RAII: the destructor releases (best effort, never throws).
// Move-only. While is_held(), the lock is ours until at least now + remaining().
class lease {
 public:
  lease(lease&&) noexcept;
  lease& operator=(lease&&) noexcept;
  lease(const lease&) = delete;
  lease& operator=(const lease&) = delete;
  ~lease();

  // The lock's name and the fencing token of this grant (strictly larger than every earlier
  // grant of the name). Both stay readable after release(), for logging.
  [[nodiscard]] const std::string& name() const noexcept;
  [[nodiscard]] std::int64_t fence() const noexcept;
  // False once released, once the lease was reported lost, or once the local safety
  // deadline has passed: the monotonic clock read before the last successful
  // acquire/renew was sent, plus the TTL, minus the margin (ttl * max_clock_drift). With
  // crash detection (session_options::detect_crashes) also as soon as the session's liveness
  // marker connection has not been confirmed for liveness_window: check it before acting.
  [[nodiscard]] bool is_held() const noexcept;
  // Time left before the local safety deadline (zero when not held).
  [[nodiscard]] std::chrono::milliseconds remaining() const noexcept;
  // The local safety deadline itself (steady_clock; it moves later with each renewal).
  // Once not held: steady_clock's epoch (long past). With crash detection the lease can end
  // sooner, when its marker connection is lost (is_held() and on_lost say so).
  [[nodiscard]] std::chrono::steady_clock::time_point trusted_until() const noexcept;
  // Why the lease was lost (empty while held or after a normal release).
  [[nodiscard]] std::string lost_reason() const;
  // What this lease holds (lock_mode::exclusive for session::try_acquire(name)).
  [[nodiscard]] lock_mode mode() const noexcept { return mode_; }

  // Releases this hold (one round trip). Throws lock_lost when the lock was no longer
  // ours (stolen after expiry, reaped, or reported lost); the hold is gone either way.
  void release();
  // Inside the caller's transaction on the same database: throws lock_lost at once when
  // the lease is no longer trusted locally (is_held() false); else locks the lock row for
  // share and throws lock_lost unless it is still ours with this fence and unexpired
  // (server clock), so a business write in tx commits only while the lock provably holds.
  void verify_in(transaction_ref tx) const;

 private:
  friend class session;
  friend struct session_core;
  lease(std::shared_ptr<session_core> core, std::shared_ptr<held_lock> h, lock_mode mode = lock_mode::exclusive);
  void release_hold();  // read, write and permit holds (lib/core/holders.cpp)
  std::shared_ptr<session_core> core_;
  std::shared_ptr<held_lock> h_;  // empty once released
  std::string name_;
  std::int64_t fence_ = 0;
  lock_mode mode_ = lock_mode::exclusive;
};

// The permits of one semaphore acquire: each its own lease (own fence, renewed with the
// session's leases, lost on its own). Move-only; the destructor releases what is still held.
class permit_set {
 public:
  permit_set() = default;
  explicit permit_set(std::vector<lease> permits) : permits_(std::move(permits)) {}
  [[nodiscard]] std::size_t size() const noexcept { return permits_.size(); }
  [[nodiscard]] const std::vector<lease>& permits() const noexcept { return permits_; }
  [[nodiscard]] std::vector<lease>& permits() noexcept { return permits_; }
  [[nodiscard]] std::vector<std::int64_t> fences() const;
  // True while every permit is held.
  [[nodiscard]] bool is_held() const noexcept;
  // Releases every permit (one round trip each); throws lock_lost after releasing the rest
  // when one of them was no longer ours.
  void release();

 private:
  std::vector<lease> permits_;
};

// A live hold of a read-write lock or a semaphore permit, for `dblock locks`.
struct holder_info {
  std::string name;
  lock_mode mode = lock_mode::read;  // read, write (a read-write lock's writer) or permit
  int slot = 0;                      // permit number 1..permits; 0 for a read-write lock
  std::string holder;
  int holds = 0;        // a read-write owner's holds (re-entrant), 1 for a permit
  int write_holds = 0;  // how many of them are write holds
  int permits = 0;      // the semaphore's permit count N; 0 for a read-write lock
  std::int64_t fence = 0;
  std::string expires_at;                   // when another owner may take it over, UTC
  std::chrono::milliseconds expires_in{0};  // by the server's clock
  std::chrono::milliseconds lock_delay{0};
};

class session {
 public:
  // Uses db for acquire/release. When db was opened from a URL, renewals and release
  // notifications use the process's background connection to the same database (see
  // renew_on); on an attached connection they share db (calls are serialized).
  explicit session(database db, session_options opts = {});
  ~session();  // stops the watchdog; leases still alive keep working until released
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  // One round trip. Empty when another owner holds it live.
  [[nodiscard]] std::optional<lease> try_acquire(std::string_view name);
  // Waits up to `wait` (zero = one try). Throws timeout_error naming the current holder
  // and its expiry when the wait runs out.
  [[nodiscard]] lease acquire(std::string_view name, std::chrono::milliseconds wait);

  [[nodiscard]] const std::string& owner() const noexcept;  // random 128-bit token, hex
  [[nodiscard]] std::chrono::milliseconds ttl() const noexcept;
  // ttl * max_clock_drift: how long before its local deadline a lease counts as lost.
  [[nodiscard]] std::chrono::milliseconds margin() const noexcept;
  // The renewal period (ttl / renew_divisor).
  [[nodiscard]] std::chrono::milliseconds renew_period() const noexcept;
  // The current holder of a name, if any row exists.
  [[nodiscard]] std::optional<lock_info> holder_of(std::string_view name);

  // --- read-write lease locks (docs/locks.md, "Read-write locks") ---------------------
  // Many readers or one writer per name. mode read or write (exclusive: the lease lock above,
  // a separate table: do not use one name for both). A try is refused while another owner
  // writes (read) or holds it at all (write), and while anyone waits in the name's line (a
  // waiting writer keeps new readers out). Re-entrant per session: a writer may take read
  // holds; the only reader may take a write hold (an upgrade, with a new, larger fence); an
  // upgrade while other readers hold it throws invalid_argument naming the lock and the
  // reader count. A write grant's fence is larger than every earlier grant's of the name.
  // A name used as a semaphore throws invalid_argument.
  [[nodiscard]] std::optional<lease> try_acquire(std::string_view name, lock_mode mode);
  [[nodiscard]] lease acquire(std::string_view name, lock_mode mode, std::chrono::milliseconds wait);

  // --- counting semaphores (docs/locks.md, "Semaphores") -------------------------------
  // `count` of the name's `permits` permits (1 <= count <= permits <= 10000), each a lease
  // with its own fence; refused (empty) unless `count` are free and nobody waits in the
  // name's line. `permits` is stored with the holds: while any permit is held, a different
  // count throws invalid_argument naming both; once all are released the next acquirer
  // chooses again. Not re-entrant: each acquire takes more permits.
  [[nodiscard]] std::optional<permit_set> try_acquire_permits(std::string_view name, int permits, int count = 1);
  [[nodiscard]] permit_set acquire_permits(std::string_view name, int permits, int count,
                                           std::chrono::milliseconds wait);

 private:
  friend struct session_core;  // the lock family (multi-locks, elections) builds on a session's holds
  std::shared_ptr<session_core> core_;
};

// Every row of the lock table (the `dblock locks` view).
[[nodiscard]] std::vector<lock_info> list_locks(database& db);
// Every live hold of a read-write lock or semaphore, by name and slot.
[[nodiscard]] std::vector<holder_info> list_holders(database& db);

// Throws invalid_argument naming the problem: empty, over 255 bytes, or invalid UTF-8.
void validate_lock_name(std::string_view name);

}  // namespace dblock
