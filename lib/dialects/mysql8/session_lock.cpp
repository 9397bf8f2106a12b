// lib/dialects/mysql8/session_lock.cpp — MySQL 8.0 dialect, session locks: GET_LOCK, as on MariaDB (lib/dialects/mysql/session_lock.cpp).
// The behaviour is MariaDB's object; only the SQL files differ (sql/mysql8/).
#include "core/ops/session_lock.hpp"

namespace dblock::detail {

const session_lock_ops& mysql_session_locks() noexcept;

const session_lock_ops& mysql8_session_locks() noexcept { return mysql_session_locks(); }

}  // namespace dblock::detail
