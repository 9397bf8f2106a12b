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
  // Give up connecting after this long (connection_error). Default 10 s. libpq counts
  // at least 2 s.
  std::chrono::seconds connect_timeout{10};
  // How long a connection dblock opens may stay silent before it is treated as dead, so
  // that no statement waits forever on a network that stopped answering (no RST: a
  // switch, a NAT, a frozen peer). Default 30 s; at least 1 s.
  //  - PostgreSQL (libpqxx and SOCI): TCP keepalives (idle network_timeout / 2, then
  //    3 probes network_timeout / 6 apart) and tcp_user_timeout = network_timeout (data
  //    sent but unacknowledged). A server busy on a long statement still answers
  //    keepalives, so long server-side waits are not cut. Parameters given in the URL
  //    (keepalives, keepalives_idle, keepalives_interval, keepalives_count,
  //    tcp_user_timeout) win.
  //  - MySQL/MariaDB (Connector/C++ and SOCI): read and write timeouts of
  //    network_timeout, rounded up to whole seconds. A statement that waits on the
  //    server longer than that (a row lock wait) fails as a lost connection: raise
  //    network_timeout above the longest lock wait you ask for. dblock's own waits
  //    stay below it.
  //  - SQLite: no network; ignored.
  // Lease renewals have a tighter bound of their own (see session_options): the
  // watchdog's connection is opened with a timeout no longer than the renewal period,
  // and a renewal still unanswered when a lease it speaks for runs out is cut off.
  // Connections you attach are yours to configure (docs/locks.md, "Timing").
  std::chrono::milliseconds network_timeout{30'000};
  // The name every connection dblock opens gives the server, so that a DBA can tell
  // dblock's connections apart (pg_stat_activity.application_name, MariaDB's
  // performance_schema.session_connect_attrs program_name). Empty (the default):
  // "dblock <host>:<pid>". At most 63 bytes are sent (PostgreSQL's limit).
  //  - PostgreSQL (libpqxx and SOCI): application_name; an application_name given in
  //    the URL wins.
  //  - MySQL/MariaDB with Connector/C++: the connection attribute program_name.
  //  - SOCI with MySQL/MariaDB: not sent (SOCI 4.0 has no option for connection
  //    attributes). SQLite: nothing to name.
  std::string application_name;
};

// Parses the URL first (invalid_argument names the bad part, before any connection),
// then connects (connection_error when unreachable; the message never has the password).
[[nodiscard]] database open(std::string_view url, const open_options& opts = {});

}  // namespace dblock
