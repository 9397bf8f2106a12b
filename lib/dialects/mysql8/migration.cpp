// lib/dialects/mysql8/migration.cpp — MySQL 8.0 dialect, migrations: DDL commits implicitly, as on MariaDB (lib/dialects/mysql/migration.cpp); the files are migrations/mysql8/.
// The behaviour is MariaDB's object; only the SQL files differ (sql/mysql8/).
#include "core/ops/migration.hpp"

namespace dblock::detail {

const migration_ops& mysql_migrations() noexcept;

const migration_ops& mysql8_migrations() noexcept { return mysql_migrations(); }

}  // namespace dblock::detail
