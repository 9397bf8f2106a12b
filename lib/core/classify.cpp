// lib/core/classify.cpp — see classify.hpp. Sources: PostgreSQL "Appendix A. Error
// Codes", MariaDB error codes (client 2xxx, server 1xxx), SQLite result codes.
#include "core/classify.hpp"

namespace dblock::detail {

error_kind classify_sqlstate(std::string_view s) noexcept {
  if (s == "23505") return error_kind::unique_violation;
  if (s == "55P03") return error_kind::lock_not_available;  // NOWAIT, lock_timeout
  if (s == "40P01") return error_kind::deadlock;
  if (s == "40001") return error_kind::serialization;
  if (s == "42P01" || s == "3F000" || s == "42883") return error_kind::schema_missing;  // undefined table/schema/function
  if (s == "57014") return error_kind::timeout;                                        // statement_timeout / cancel
  if (s == "57P01" || s == "57P02" || s == "57P03") return error_kind::connection;     // admin shutdown, crash, cannot connect now
  if (s.substr(0, 2) == "08") return error_kind::connection;                           // connection exception class
  if (s == "22023" || s == "22P02" || s == "22003") return error_kind::invalid_argument;
  return error_kind::database;
}

error_kind classify_mysql(int code, std::string_view sqlstate) noexcept {
  switch (code) {
    case 1062: case 1586: return error_kind::unique_violation;  // ER_DUP_ENTRY, ER_DUP_ENTRY_WITH_KEY_NAME
    case 1205: case 3572: return error_kind::lock_not_available;  // lock wait timeout / NOWAIT (MySQL 8)
    case 1213: return error_kind::deadlock;
    case 1146: case 1049: return error_kind::schema_missing;  // no such table / database
    case 1317: case 1969: case 3024: return error_kind::timeout;  // query interrupted, max_statement_time
    case 1927:  // ER_CONNECTION_KILLED (MariaDB)
    case 1053:  // server shutdown in progress
    case 2002: case 2003: case 2005: case 2006: case 2013: case 2055:
      return error_kind::connection;
    default: break;
  }
  if (sqlstate == "40001") return error_kind::serialization;
  if (sqlstate.substr(0, 2) == "08") return error_kind::connection;
  return error_kind::database;
}

error_kind classify_sqlite(int rc) noexcept {
  switch (rc & 0xff) {  // primary code of an extended result code
    case 5: case 6: return error_kind::lock_not_available;  // SQLITE_BUSY, SQLITE_LOCKED
    case 19:                                               // SQLITE_CONSTRAINT
      // 2067 = SQLITE_CONSTRAINT_UNIQUE, 1555 = SQLITE_CONSTRAINT_PRIMARYKEY
      return (rc == 2067 || rc == 1555) ? error_kind::unique_violation : error_kind::database;
    case 14: case 10: return error_kind::connection;  // SQLITE_CANTOPEN, SQLITE_IOERR
    case 9: return error_kind::timeout;               // SQLITE_INTERRUPT
    default: return error_kind::database;
  }
}

}  // namespace dblock::detail
