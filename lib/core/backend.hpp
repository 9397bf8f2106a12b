// lib/core/backend.hpp — the internal seam between dblock's dialect-free logic and
// the client libraries. Two layers:
//   driver  — implemented once per client library in lib/backends/<lib>/driver.cpp:
//             run one embedded statement with bound values, transactions, error
//             classification, round-trip counting. Knows no dblock semantics.
//   backend — the *operations* the primitives use (migration lock, history, ...),
//             written once in lib/core over a driver and the dialect's sql/ files.
// Primitives call backend operations only; they never see SQL.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "core/backoff.hpp"
#include "core/catalog.hpp"
#include "core/internal.hpp"
#include "dblock/database.hpp"
#include "dblock/errors.hpp"
#include "dblock/open.hpp"
#include "dblock/url.hpp"

namespace dblock::detail {

// A bound value. Strings are bound as text.
using value = std::variant<std::nullptr_t, std::int64_t, std::string>;
using cell = std::optional<std::string>;  // nullopt = SQL NULL; numbers as decimal text

struct result {
  std::vector<std::vector<cell>> rows;
  std::int64_t affected = 0;  // rows matched by DML (CLIENT_FOUND_ROWS on MySQL)
};

class driver {
 public:
  virtual ~driver() = default;
  [[nodiscard]] virtual dialect kind() const noexcept = 0;
  [[nodiscard]] virtual client_library client() const noexcept = 0;
  [[nodiscard]] virtual placeholder_style style() const noexcept = 0;
  [[nodiscard]] virtual std::string describe() const = 0;

  // One round trip. Failures are classified into dblock::error subclasses.
  virtual result run(const statement& st, std::span<const value> params) = 0;
  // One parameterless statement from a migration script (one round trip).
  virtual void run_script(std::string_view sql) = 0;

  virtual void begin() = 0;  // BEGIN (BEGIN IMMEDIATE on SQLite)
  // COMMIT. A connection lost during commit throws commit_unknown, never returns.
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
  [[nodiscard]] virtual bool in_transaction() const noexcept = 0;

  [[nodiscard]] std::uint64_t round_trips() const noexcept { return round_trips_; }

  // Reached through a pooler in transaction pooling mode (?pooler=transaction): the
  // server session is shared, so nothing may outlive one transaction on it (no named
  // prepared statement, LISTEN, session advisory lock or session setting).
  [[nodiscard]] bool pooled() const noexcept { return pooled_; }
  void set_pooled(bool on) noexcept { pooled_ = on; }
  // A node of a multi-primary cluster (Galera), where server locks such as GET_LOCK are
  // local to the node. Empty until read (at connect, or on the first need).
  [[nodiscard]] std::optional<bool> multi_primary() const noexcept { return multi_primary_; }
  void set_multi_primary(bool on) noexcept { multi_primary_ = on; }

  // LISTEN/NOTIFY, where the client library offers it (libpqxx). listen() subscribes
  // this connection to a channel; await_notifications() blocks up to `timeout`, or until
  // `wake_fd` (when not -1) is readable, and returns the payloads that arrived. Drivers
  // without it return false / nothing.
  [[nodiscard]] virtual bool can_listen() const noexcept { return false; }
  virtual void listen(const std::string& /*channel*/) {}
  virtual std::vector<std::string> await_notifications(std::chrono::milliseconds /*timeout*/, int /*wake_fd*/) {
    return {};
  }
  // Ends every listen() of this connection (UNLISTEN; one round trip if any).
  virtual void unlisten_all() {}

  // SQLite only: the absolute path of the main database file; empty for an in-memory or
  // temporary database, and on other drivers.
  [[nodiscard]] virtual std::string database_file() const { return {}; }
  // SQLite only: the main database is in WAL mode (connect.sql asks for it; a file system
  // without shared memory keeps the rollback journal). False on other drivers.
  [[nodiscard]] virtual bool write_ahead_log() { return false; }

  // SQLite only: how long a statement waits for the database's write lock before
  // failing with SQLITE_BUSY (lock_not_available). Others ignore it.
  virtual void set_busy_timeout(std::chrono::milliseconds /*wait*/) {}

  // Called from ANOTHER thread while this one may be blocked in a statement: shuts the
  // connection's socket down so that the statement returns at once with a connection
  // error (the connection is then reopened on its next use). Where the client library
  // gives no access to its socket (Connector/C++) it does nothing and the connection's
  // read/write timeouts bound the wait instead.
  virtual void interrupt() noexcept {}

 protected:
  std::uint64_t round_trips_ = 0;
  bool pooled_ = false;
  std::optional<bool> multi_primary_;
};

// open_options::network_timeout as connection parameters, one place for every driver.
// Both throw invalid_argument for a timeout under 1 s.
// libpq (libpqxx and SOCI): keepalives, keepalives_idle/_interval/_count, tcp_user_timeout
// and connect_timeout, as key/value pairs for a conninfo string or URL.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> libpq_timeouts(const open_options& opts);
// MySQL/MariaDB read and write timeout in whole seconds (rounded up).
[[nodiscard]] int mysql_io_timeout_seconds(const open_options& opts);
// The name a connection gives the server (application_name / program_name):
// open_options::application_name, else "dblock <host>:<pid>"; at most 63 bytes
// (PostgreSQL's limit), cut at a character boundary.
[[nodiscard]] std::string connection_name(const open_options& opts);
// `url` without its ?key=... option(s) (the rest unchanged): dblock's own options must
// not reach libpq, which refuses unknown ones.
[[nodiscard]] std::string url_without_option(std::string_view url, std::string_view key);
// `s` percent-encoded for a URL query value (everything but unreserved characters).
[[nodiscard]] std::string percent_encode(std::string_view s);

// A factory for more connections to the same place (used by sessions that need a
// watchdog or LISTEN connection), with the given timeouts. Empty for attached connections.
using driver_factory = std::function<std::unique_ptr<driver>(const open_options&)>;

class backend {
 public:
  backend(std::unique_ptr<driver> d, driver_factory reopen = {}, open_options opts = {});
  ~backend();

  [[nodiscard]] dialect kind() const noexcept { return kind_; }
  [[nodiscard]] client_library client() const noexcept { return client_; }
  // Through a transaction-pooling pooler (driver::pooled()): sessions do not LISTEN or
  // queue, session locks and the migration lock use no session advisory lock.
  [[nodiscard]] bool pooled() const noexcept { return pooled_; }
  // A node of a Galera cluster (wsrep_on): GET_LOCK is local to the node there, so session
  // locks, the migration lock and the single-active reaper use replicated rows instead.
  // Read with sql/mysql/server_info.sql at connect or on the first call; false off MySQL.
  [[nodiscard]] bool multi_primary();
  [[nodiscard]] std::string describe() const;
  [[nodiscard]] std::uint64_t round_trips() const noexcept;
  [[nodiscard]] bool can_reopen() const noexcept { return static_cast<bool>(reopen_); }
  // A connection this backend opened is left in a state dblock cannot trust (a connection
  // setting it could not set back): the next statement replaces it (no effect on an attached
  // connection, which is never replaced).
  void discard_connection() noexcept {
    std::lock_guard lock(mu_);
    broken_ = true;
  }
  // A new backend on a fresh connection to the same database (throws if attached).
  [[nodiscard]] std::shared_ptr<backend> reopen() const;
  // The same with other timeouts (the watchdog's connection: a renewal must not wait
  // longer than the lease it keeps).
  [[nodiscard]] std::shared_ptr<backend> reopen(const open_options& opts) const;
  [[nodiscard]] const open_options& options() const noexcept { return opts_; }
  // Thread-safe, never blocks on the statement in flight: see driver::interrupt().
  void interrupt() noexcept;

  // --- generic execution (used by the operations below and by tests) ----------
  // Runs sql/<dialect>/<name>.sql with `params`, serialized with other callers.
  result exec(std::string_view name, std::span<const value> params = {});
  result exec(std::string_view name, std::initializer_list<value> params);
  // Runs sql/<dialect>/<outside>.sql when this connection is not inside a transaction,
  // else <inside>.sql; chosen under the mutex, so no transaction opens in between.
  result exec_unless_in_transaction(std::string_view outside, std::string_view inside,
                                    std::span<const value> params);
  // Runs a statement built by render_statement() (identifier slots filled).
  result exec_statement(const statement& st, std::span<const value> params = {});
  // Runs fn inside BEGIN ... COMMIT on this connection, holding the mutex; rolls
  // back on exception. fn gets the same backend (calls are re-entrant inside).
  void in_transaction(const std::function<void()>& fn);
  // Runs fn holding this connection's mutex: no other caller's statement runs on it in
  // between fn's statements (calls are re-entrant inside).
  template <typename F>
  auto exclusive(F&& fn) -> decltype(fn()) {
    std::lock_guard lock(mu_);
    return fn();
  }

  // --- operations ----------------------------------------------------------------
  void ping();
  [[nodiscard]] bool schema_present();
  // Session-scoped migration lock: advisory lock / GET_LOCK. On SQLite the whole run
  // is one BEGIN IMMEDIATE transaction instead (see migrate.cpp).
  [[nodiscard]] bool migration_lock(std::chrono::milliseconds wait);
  void migration_unlock() noexcept;
  // Pooler mode (PostgreSQL): the migration lock as a transaction-scoped advisory lock,
  // taken inside the current transaction and freed by its end; the same key as the
  // session lock, so pooled and direct migrators exclude each other. Polls until `deadline`.
  [[nodiscard]] bool migration_lock_in_transaction(std::chrono::steady_clock::time_point deadline);
  void ensure_history_table();
  [[nodiscard]] std::vector<migration_info> applied(const std::string& scope);
  void record_migration(const migration_info& m);
  void run_script(std::string_view sql);
  void set_busy_timeout(std::chrono::milliseconds wait);

  [[nodiscard]] driver& raw() noexcept { return *driver_; }
  // Runs fn on the driver holding the mutex, with a statement's reconnect rules: a
  // connection lost before is replaced first, and one lost in fn is replaced before the
  // next use (LISTEN, whose state a statement cannot carry).
  void with_driver(const std::function<void(driver&)>& fn);
  // Counts the connections this backend has had: it changes when a lost one is replaced
  // (whatever was set on the old connection, a LISTEN, is gone).
  [[nodiscard]] std::uint64_t connection_number() const noexcept;
  // True for the first caller only: the replication check runs once per handle.
  [[nodiscard]] bool first_replication_check() noexcept { return !replication_checked_.exchange(true); }

 private:
  result exec_locked(std::string_view name, std::span<const value> params);
  void revive();
  template <typename F>
  auto guarded(F&& f) -> decltype(f());

  std::unique_ptr<driver> driver_;
  driver_factory reopen_;
  open_options opts_;
  // Guards driver_ against replacement while interrupt() uses it from another thread
  // (mu_ is held by the thread that may be blocked). Order: mu_, then swap_mu_.
  mutable std::mutex swap_mu_;
  dialect kind_;
  client_library client_;
  bool pooled_;
  mutable std::recursive_mutex mu_;
  bool broken_ = false;                      // the last statement lost the connection
  std::uint64_t retired_round_trips_ = 0;   // round trips of replaced connections
  std::uint64_t connection_number_ = 1;
  std::atomic<bool> replication_checked_{false};
  std::optional<bool> multi_primary_;  // guarded by mu_
};

// Runs f, one autocommit statement on b, again when it was chosen as a deadlock victim
// (InnoDB can pick an INSERT ... ON DUPLICATE KEY UPDATE, or a DELETE racing on one row):
// such a statement was rolled back whole, so running it again is safe. Up to 5 tries with
// jitter, then the transaction_conflict propagates. Never inside a transaction: there the
// whole transaction was rolled back, and its owner decides. (lock_store, reaper)
// A give-back (a release, a ticket's delete) passes the longer schedule below: it is the
// cheaper victim of a concurrent renewal of the same owner's rows (one row against many),
// and one that fails leaves the name blocked until its TTL. A read-write or permit grant
// (holds) passes it too: its locking reads of the name's hold rows lock the gap before the
// next name's rows, so grants of neighbouring names - and under the MySQL 8.0 dialect any
// grant, all of which update the one fence-counter row - make it the victim again and again
// under load.
enum class conflict_retries { grant, give_back, holds };
template <typename F>
auto retry_conflicts(backend& b, F&& f, conflict_retries schedule = conflict_retries::grant) -> decltype(f()) {
  std::optional<backoff> bo;  // made on the first conflict only: this wraps hot statements
  const bool longer = schedule != conflict_retries::grant;
  // Full jitter, 2 ms doubling: capped at 8 ms for 5 tries (at most 22 ms of sleep), at
  // 32 ms for the longer schedule's 10 tries (at most 190 ms).
  const int tries = longer ? 10 : 5;
  for (int attempt = 1;; ++attempt) {
    try {
      return f();
    } catch (const transaction_conflict&) {
      if (attempt >= tries || b.raw().in_transaction()) throw;
      if (!bo)
        bo.emplace(backoff_policy{.initial = std::chrono::milliseconds(2),
                                  .max = std::chrono::milliseconds(longer ? 32 : 8)});
      std::this_thread::sleep_for(bo->next());
    }
  }
}

}  // namespace dblock::detail
