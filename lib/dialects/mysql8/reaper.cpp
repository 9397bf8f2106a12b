// lib/dialects/mysql8/reaper.cpp — MySQL 8.0 dialect, reaping: READ COMMITTED reaper connection and counted deletes, as on MariaDB (lib/dialects/mysql/reaper.cpp).
// The behaviour is MariaDB's object; only the SQL files differ (sql/mysql8/).
#include "core/ops/reaper.hpp"

namespace dblock::detail {

const reaper_ops& mysql_reaper() noexcept;

const reaper_ops& mysql8_reaper() noexcept { return mysql_reaper(); }

}  // namespace dblock::detail
