// lib/dialects/mysql/migration.cpp — migrations on MySQL/MariaDB: DDL commits implicitly,
// so a file runs in autocommit and then its history row is recorded.
#include "dialects/common/families.hpp"

namespace dblock::detail {

namespace {
class mysql_migrations_impl final : public session_locked_migrations {
  bool transactional_ddl() const noexcept override { return false; }
};
}  // namespace

const migration_ops& mysql_migrations() noexcept {
  static const mysql_migrations_impl ops;
  return ops;
}

}  // namespace dblock::detail
