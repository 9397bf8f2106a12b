// dblock/open.hpp — open a database from a URL (see dblock/url.hpp), dispatching on
// the scheme to libpqxx, Connector/C++ or SOCI. Part of dblock::dblock, which links
// every client library built; link dblock::pqxx, dblock::mysql or dblock::soci alone
// to avoid the others.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "dblock/database.hpp"

namespace dblock {

struct open_options {
  // Give up connecting after this long (connection_error). libpq counts at least 2 s.
  // Default: 10 s.
  std::chrono::seconds connect_timeout{10};
  // How long a connection dblock opens may stay silent before it counts as dead
  // (keepalives and tcp_user_timeout on PostgreSQL, read/write timeouts on MySQL/MariaDB,
  // ignored by SQLite); see docs/operations.md, "Network timeouts". At least 1 s.
  // Default: 30 s.
  std::chrono::milliseconds network_timeout{30'000};
  // The name each connection dblock opens gives the server (application_name,
  // program_name), at most 63 bytes; see docs/operations.md, "Connections and poolers".
  // Default: empty, meaning "dblock <host>:<pid>".
  std::string application_name;
};

// Parses the URL first (invalid_argument names the bad part, before any connection),
// then connects (connection_error when unreachable; the message never has the password).
[[nodiscard]] database open(std::string_view url, const open_options& opts = {});

}  // namespace dblock
