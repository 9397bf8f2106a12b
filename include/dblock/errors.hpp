// dblock/errors.hpp — the one exception hierarchy every dblock call throws.
// Expected outcomes (busy lock, replay, version conflict) are values, never these.
// Each error carries the server's SQLSTATE (PostgreSQL, MySQL/MariaDB, or "" for SQLite),
// the vendor code (MySQL error number, SQLite result code, 0 otherwise) and whether
// retrying the whole operation can succeed.
#pragma once

#include <stdexcept>
#include <string>

namespace dblock {

enum class error_kind {
  invalid_argument,    // bad input from the caller (URL, name, TTL, identifier...)
  connection,          // unreachable server or connection lost: retryable
  commit_unknown,      // connection lost during COMMIT: the outcome is unknown, never retry blindly
  unique_violation,    // a unique index refused a row
  lock_not_available,  // NOWAIT / lock wait timeout / SQLite busy: retryable
  deadlock,            // chosen as deadlock victim: retryable (the whole transaction)
  serialization,       // serialization failure: retryable (the whole transaction)
  schema_missing,      // dblock's tables are absent: run `dblock migrate`
  migration,           // a migration failed or an applied one was edited
  timeout,             // a bounded wait ran out (acquire with a deadline)
  lock_lost,           // a lease we held is no longer ours
  database,            // anything else the server refused
  internal,            // a dblock bug or a misused object
};

// The name of the class an error of this kind is thrown as ("lock_lost", "timeout_error").
[[nodiscard]] const char* to_string(error_kind k) noexcept;

class error : public std::runtime_error {
 public:
  error(error_kind kind, const std::string& what, std::string sqlstate = {}, int vendor_code = 0);
  [[nodiscard]] error_kind kind() const noexcept { return kind_; }
  [[nodiscard]] const std::string& sqlstate() const noexcept { return sqlstate_; }
  [[nodiscard]] int vendor_code() const noexcept { return vendor_code_; }
  // True when running the same operation (or whole transaction) again may succeed.
  [[nodiscard]] bool retryable() const noexcept;

 private:
  error_kind kind_;
  std::string sqlstate_;
  int vendor_code_;
};

// One subclass per kind, so callers can catch what they handle.
#define DBLOCK_ERROR_CLASS(name, base, k)                                             \
  class name : public base {                                                          \
   public:                                                                            \
    explicit name(const std::string& what, std::string sqlstate = {}, int vendor = 0) \
        : base(k, what, std::move(sqlstate), vendor) {}                               \
  };

DBLOCK_ERROR_CLASS(invalid_argument, error, error_kind::invalid_argument)
DBLOCK_ERROR_CLASS(connection_error, error, error_kind::connection)
DBLOCK_ERROR_CLASS(commit_unknown, error, error_kind::commit_unknown)
DBLOCK_ERROR_CLASS(unique_violation, error, error_kind::unique_violation)
DBLOCK_ERROR_CLASS(lock_not_available, error, error_kind::lock_not_available)
DBLOCK_ERROR_CLASS(schema_missing, error, error_kind::schema_missing)
DBLOCK_ERROR_CLASS(migration_error, error, error_kind::migration)
DBLOCK_ERROR_CLASS(timeout_error, error, error_kind::timeout)
DBLOCK_ERROR_CLASS(lock_lost, error, error_kind::lock_lost)
DBLOCK_ERROR_CLASS(database_error, error, error_kind::database)
DBLOCK_ERROR_CLASS(internal_error, error, error_kind::internal)

// A replication setup that can lose a committed grant on failover, refused because the
// caller asked for replication_policy::refuse (replication.hpp). Not retryable.
class unsafe_replication : public database_error {
 public:
  explicit unsafe_replication(const std::string& what) : database_error(what) {}
};

// Deadlock and serialization failure: the transaction was rolled back; run it again.
class transaction_conflict : public error {
 protected:
  using error::error;
};
DBLOCK_ERROR_CLASS(deadlock, transaction_conflict, error_kind::deadlock)
DBLOCK_ERROR_CLASS(serialization_failure, transaction_conflict, error_kind::serialization)

#undef DBLOCK_ERROR_CLASS

// Throws the subclass matching `kind` (used by each client library's error classifier).
[[noreturn]] void throw_error(error_kind kind, const std::string& what, std::string sqlstate = {},
                              int vendor_code = 0);

}  // namespace dblock
