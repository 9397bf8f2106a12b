// lib/dialects/mysql8/optimistic.cpp — MySQL 8.0 dialect, versioned and fenced writes: the same statements and the same changed-rows check as MariaDB's (lib/dialects/mysql/optimistic.cpp).
// The behaviour is MariaDB's object; only the SQL files differ (sql/mysql8/).
#include "core/ops/optimistic.hpp"

namespace dblock::detail {

const optimistic_ops& mysql_optimistic() noexcept;

const optimistic_ops& mysql8_optimistic() noexcept { return mysql_optimistic(); }

}  // namespace dblock::detail
