// lib/core/dialect.hpp — the dialect seam. lib/core is written once for every database;
// what a SQL dialect does differently lives in lib/dialects/<dialect>/, one file per
// statement family, each implementing an interface declared in lib/core/ops/<family>.hpp
// and returning typed rows (no positional cell reads in lib/core). This header holds what
// a dialect declares about itself as a whole; lib/core asks these questions instead of
// comparing dialects. Internal.
#pragma once

#include "dblock/url.hpp"

namespace dblock::detail {

struct dialect_traits {
  dialect kind;
  const char* name;                 // sql/<name>/ and migrations/<name>/
  char identifier_quote;            // '"' or '`'
  bool notify = false;              // LISTEN/NOTIFY wake-ups between clients
  bool async_commit = false;        // a statement may commit without waiting for its WAL flush
  bool session_locks = false;       // server locks owned by a connection (advisory locks, GET_LOCK)
  bool single_writer = false;       // one writer per database file: busy waits, not row locks
  bool network = true;              // a server reached over a socket (timeouts, interrupt)
  // Quoted identifiers that differ only in letter case name different columns
  // (PostgreSQL); otherwise column names compare case-insensitively (ASCII).
  bool case_sensitive_columns = false;
  // Connection URLs (url.cpp):
  bool url_is_path = false;         // scheme:path/to/file, no //host
  bool url_needs_host = false;      // scheme://host/... with a non-empty host (no default socket)
  bool url_pooler = false;          // accepts ?pooler=transaction (a transaction-pooling pooler)
  // A try that is not a re-entry, on a live row of the same owner granted on an earlier
  // timeline, is granted afresh (new fence, holds 1) rather than re-entered: such a row is
  // an older grant that a failover brought back (migrations/postgresql/0007_failover_fences.sql).
  bool fresh_grant_on_unheld_own_row = false;
  // Dialects of one family share a server protocol, URL schemes and client drivers; the
  // driver picks one at connect, ?dialect=<name> picks one in the URL.
  dialect family = kind;
};

// Every dialect, for lookups by name.
inline constexpr dialect all_dialects[] = {dialect::postgresql, dialect::mysql, dialect::sqlite, dialect::mysql8};

// The traits of each dialect (lib/dialects/<dialect>/traits.cpp).
[[nodiscard]] const dialect_traits& traits_of(dialect d) noexcept;

// What sql/mysql/server_info.sql says about a server of the MySQL family.
struct mysql_server_info {
  std::string version;  // VERSION()
  bool galera = false;  // a node of a Galera cluster (wsrep_on = ON)
  // One (Variable_name, Value) row of the statement.
  void add(std::string_view variable, std::string_view value);
};

// The dialect a server of the MySQL family speaks: MariaDB's (dialect::mysql) when its
// version says MariaDB and it is not a Galera node, else MySQL 8.0's (dialect::mysql8),
// whose fences come from a replicated counter row. lib/dialects/registry.cpp.
[[nodiscard]] dialect mysql_family_dialect(const mysql_server_info& server) noexcept;

// Throws invalid_argument when the URL names MariaDB's dialect for a Galera node: that
// dialect's fences come from a cached sequence, which a Galera cluster refuses.
void check_dialect_for_server(dialect given, const mysql_server_info& server);

}  // namespace dblock::detail
