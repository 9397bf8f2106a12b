// lib/dialects/postgresql/migration.cpp — migrations on PostgreSQL: transactional DDL, and
// behind a transaction pooler the migration lock as a transaction-scoped advisory lock
// on the same key as the session lock, so pooled and direct migrators exclude each other.
#include "core/backoff.hpp"
#include "core/catalog.hpp"
#include "core/crypto.hpp"
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

namespace {
class pg_migrations_impl final : public session_locked_migrations {
  bool transactional_ddl() const noexcept override { return true; }
  bool lock_in_transaction(backend& b, std::chrono::steady_clock::time_point deadline) const override {
    const value key = sha256_int64(migration_lock_name);
    // Full jitter, 5 ms doubling to 200 ms, as session_wait.
    backoff bo({.initial = std::chrono::milliseconds(5), .max = std::chrono::milliseconds(200)});
    for (;;) {
      if (rows::first_is(b.exec("migration_lock_xact", {key}), "1")) return true;
      if (!sleep_before(bo, deadline)) return false;
    }
  }
  bool unlogged_lock_tables() const noexcept override { return true; }
  // sql/postgresql/lock_tables_{logged,unlogged}.sql, one statement at a time (in the
  // migration's transaction when behind a pooler, else each autocommitted: every statement
  // is idempotent, so a run cut short is completed by the next).
  void set_lock_tables(backend& b, lock_table_mode mode) const override {
    if (mode == lock_table_mode::keep) return;
    const char* path = mode == lock_table_mode::unlogged ? "sql/postgresql/lock_tables_unlogged.sql"
                                                         : "sql/postgresql/lock_tables_logged.sql";
    const char* text = find_embedded(path);
    if (!text) throw internal_error(std::string("embedded ") + path + " is missing");
    for (const auto& st : split_statements(text)) b.run_script(st);
  }
};
}  // namespace

const migration_ops& postgresql_migrations() noexcept {
  static const pg_migrations_impl ops;
  return ops;
}

}  // namespace dblock::detail
