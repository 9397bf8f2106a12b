// lib/dialects/mysql8/row_guard.cpp — MySQL 8.0 dialect, row guards: as on MariaDB (lib/dialects/mysql/row_guard.cpp); NOWAIT fails with 3572 on MySQL 8 (1205 on MariaDB), both classified lock_not_available.
// The behaviour is MariaDB's object; only the SQL files differ (sql/mysql8/).
#include "core/ops/row_guard.hpp"

namespace dblock::detail {

const row_guard_ops& mysql_row_guards() noexcept;

const row_guard_ops& mysql8_row_guards() noexcept { return mysql_row_guards(); }

}  // namespace dblock::detail
