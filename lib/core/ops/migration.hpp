// lib/core/ops/migration.hpp — the migration runner's statement family: how migrators are
// serialized (session lock, transaction-scoped lock behind a pooler, or one transaction)
// and the history table (sql/<dialect>/history_*.sql, migration_lock_xact.sql).
// Implemented per dialect in lib/dialects/<dialect>/migration.cpp. Internal.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "dblock/database.hpp"

namespace dblock::detail {

// The lock every migrator of a database takes, whichever way it takes it.
inline constexpr std::string_view migration_lock_name = "dblock:migrate";

class migration_ops {
 public:
  virtual ~migration_ops() = default;
  // The whole run is one BEGIN IMMEDIATE transaction, which also keeps other migrators
  // out (SQLite): no migration lock.
  [[nodiscard]] virtual bool one_transaction() const noexcept = 0;
  // DDL is transactional: each file commits together with its history row (PostgreSQL).
  [[nodiscard]] virtual bool transactional_ddl() const noexcept = 0;
  // The run's session-scoped lock, polled for up to `wait`; unlock never throws.
  [[nodiscard]] virtual bool lock(backend& b, std::chrono::milliseconds wait) const = 0;
  virtual void unlock(backend& b) const noexcept = 0;
  // Pooler mode: a transaction-scoped lock taken inside the current transaction, polled
  // until `deadline` (PostgreSQL; others refuse).
  [[nodiscard]] virtual bool lock_in_transaction(backend& b, std::chrono::steady_clock::time_point deadline) const = 0;
  // A multi-primary cluster (Galera), where a session lock holds on one node only: the
  // migration lock is a lease row (sql/<dialect>/migration_lease_*.sql, MySQL family only).
  // prepare_lease creates its table (idempotent);
  // take_lease takes it for `owner` when free or expired, or renews it when owner's, and
  // says whether owner holds it now; release_lease frees it if still owner's.
  virtual void prepare_lease(backend& b) const = 0;
  [[nodiscard]] virtual bool take_lease(backend& b, std::string_view owner, std::chrono::milliseconds ttl) const = 0;
  virtual void release_lease(backend& b, std::string_view owner) const = 0;
  [[nodiscard]] virtual bool history_present(backend& b) const = 0;
  [[nodiscard]] virtual std::vector<migration_info> applied(backend& b, const std::string& scope) const = 0;
  // Whether the lock tables can be unlogged (PostgreSQL). database::migrate refuses
  // lock_table_mode::unlogged where not, before anything is sent.
  [[nodiscard]] virtual bool unlogged_lock_tables() const noexcept { return false; }
  // Switches the lock tables to `mode` (never keep), under the migration lock. Where the
  // tables cannot be unlogged they are always logged and this does nothing.
  virtual void set_lock_tables(backend& /*b*/, lock_table_mode /*mode*/) const {}
};

[[nodiscard]] const migration_ops& migrations_for(dialect d) noexcept;

}  // namespace dblock::detail
