// dblock/mysql.hpp — dblock on MySQL Connector/C++ 1.1 (target dblock::mysql):
// MySQL 8.0 and MariaDB.
#pragma once

#include <cppconn/connection.h>

#include "dblock/open.hpp"
#include "dblock/transaction.hpp"

namespace dblock {

// Opens its own connection from a mysql:// URL.
[[nodiscard]] database open_mysql(std::string_view url, const open_options& opts = {});
// Works on a connection you hold (not owned: you delete it, after the database).
// Its schema must be set. dblock commits with a COMMIT statement, never with
// Connection::commit(), which in 1.1.12 reports success on a dead connection.
[[nodiscard]] database attach(sql::Connection* conn);
// The same, speaking dialect `d` of the MySQL family (dialect::mysql: MariaDB's,
// dialect::mysql8: MySQL 8.0's) instead of the one the server's VERSION() names.
[[nodiscard]] database attach(sql::Connection* conn, dialect d);

// The caller's connection, inside a transaction the caller began (START TRANSACTION or
// setAutoCommit(false)), as a dblock transaction_ref. dblock never commits it. Each
// call prepares its statements anew (one extra round trip per statement kind).
[[nodiscard]] transaction_ref within(sql::Connection* conn);

}  // namespace dblock
