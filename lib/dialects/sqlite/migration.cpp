// lib/dialects/sqlite/migration.cpp — migrations on SQLite: the whole run is one
// BEGIN IMMEDIATE transaction (other migrators wait on the busy timeout), so there is no
// migration lock to take.
#include "dialects/common/families.hpp"

namespace dblock::detail {

namespace {
class sqlite_migrations_impl final : public session_locked_migrations {
  bool one_transaction() const noexcept override { return true; }
  bool transactional_ddl() const noexcept override { return false; }  // files run inside the run's transaction
  bool lock(backend&, std::chrono::milliseconds) const override { return true; }
  void unlock(backend&) const noexcept override {}
};
}  // namespace

const migration_ops& sqlite_migrations() noexcept {
  static const sqlite_migrations_impl ops;
  return ops;
}

}  // namespace dblock::detail
