// dblock/url.hpp — parsing and checking of the connection URLs dblock accepts:
//   postgresql://user:pass@host:port/db   (libpqxx)      also postgres://
//   mysql://user:pass@host:port/db        (Connector/C++) also mariadb://
//   sqlite:relative/path.db | sqlite:///abs/path.db  (SOCI sqlite3)
//   soci+postgresql://...  soci+mysql://...           (SOCI for PostgreSQL / MySQL)
// MySQL URLs take ?dialect=mysql8 or ?dialect=mysql: the SQL dialect is then the one named,
// not the one recognised at connect (a server whose VERSION() says MariaDB speaks `mysql`,
// MariaDB's dialect; any other speaks `mysql8`, written in what MySQL 8.0 and MariaDB 10.11
// both accept). The server is not asked then.
// PostgreSQL URLs take ?pooler=transaction: the server is reached through a pooler in
// transaction pooling mode (PgBouncer); dblock then keeps no state in the server
// session (docs/locks.md, "Poolers"). libpq never sees this option.
// Server URLs may list several hosts, tried in order at connect:
//   postgresql://u:p@h1:p1,h2:p2/db?target_session_attrs=read-write  (libpq picks the
//   writable one), mysql://u:p@h1:p1,[::1]:p2/db. A port is optional per host.
// A malformed URL is refused here, before any connection attempt, with an
// invalid_argument naming the bad part. Passwords never appear in messages.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dblock {

// mysql: MariaDB's dialect (sequences, RETURNING); mysql8: MySQL 8.0's (docs/sql.md).
enum class dialect { postgresql, mysql, sqlite, mysql8 };
enum class client_library { pqxx, mysql, soci };
// How the server is reached: directly (or through a session-pooling pooler, which is
// the same to dblock), or through a pooler in transaction pooling mode.
enum class pooler_mode { none, transaction };

[[nodiscard]] const char* to_string(dialect d) noexcept;
[[nodiscard]] const char* to_string(client_library c) noexcept;

// One entry of a URL's host list.
struct url_host {
  std::string host;  // percent-decoded; IPv6 without brackets; empty = client default
  std::optional<int> port;
  friend bool operator==(const url_host&, const url_host&) = default;
};

struct connection_url {
  std::string scheme;  // as written, lower-cased
  dialect kind = dialect::sqlite;
  client_library client = client_library::soci;
  std::string user;                   // percent-decoded
  std::optional<std::string> password;  // percent-decoded; never printed
  std::string host;         // the first host of `hosts`
  std::optional<int> port;  // the first host's port
  std::vector<url_host> hosts;  // every host, in the order written (one for a single-host URL)
  std::string database;  // database name, or the SQLite file path
  std::map<std::string, std::string> options;  // ?key=value pairs, percent-decoded (not `pooler`)
  pooler_mode pooler = pooler_mode::none;      // ?pooler=transaction (PostgreSQL only)
  bool dialect_given = false;                  // ?dialect=...: `kind` is not re-read from the server
  std::string original;  // the URL as given (contains the password: do not log)

  // The URL with the password replaced by "***": safe for messages and logs.
  [[nodiscard]] std::string redacted() const;
};

// Parses and validates; throws dblock::invalid_argument naming the bad part.
[[nodiscard]] connection_url parse_url(std::string_view url);

// Redacts the password of any URL-looking text (best effort, never throws).
[[nodiscard]] std::string redact_url(std::string_view url) noexcept;

}  // namespace dblock
