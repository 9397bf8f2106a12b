// dblock/soci.hpp — dblock on SOCI 4.0 (target dblock::soci): SQLite, and
// PostgreSQL or MySQL/MariaDB for SOCI users.
#pragma once

#include <soci/session.h>

#include "dblock/open.hpp"
#include "dblock/transaction.hpp"

namespace dblock {

// Opens its own session from a sqlite:, soci+postgresql:// or soci+mysql:// URL.
[[nodiscard]] database open_soci(std::string_view url, const open_options& opts = {});
// Works on a session you hold (it must outlive the database). The dialect is the
// session's driver: "sqlite3", "postgresql" or "mysql".
[[nodiscard]] database attach(soci::session& sess);
// The same on a "mysql" session, speaking dialect `d` of the MySQL family (dialect::mysql:
// MariaDB's, dialect::mysql8: MySQL 8.0's) instead of the one the server's VERSION() names.
[[nodiscard]] database attach(soci::session& sess, dialect d);

// The caller's session, inside a transaction the caller began (for SQLite begin with
// BEGIN IMMEDIATE, not soci::transaction's deferred BEGIN), as a dblock transaction_ref.
[[nodiscard]] transaction_ref within(soci::session& sess);

}  // namespace dblock
