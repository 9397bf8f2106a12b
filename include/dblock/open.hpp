// dblock/open.hpp — open a database from a URL (see dblock/url.hpp), dispatching on
// the scheme to the libpqxx, Connector/C++ or SOCI backend. Part of dblock::dblock,
// which links all three; link one backend target instead to avoid the others.
#pragma once

#include <chrono>
#include <string_view>

#include "dblock/database.hpp"

namespace dblock {

struct open_options {
  // Give up connecting after this long (connection_error). Default 10 s.
  std::chrono::seconds connect_timeout{10};
};

// Parses the URL first (invalid_argument names the bad part, before any connection),
// then connects (connection_error when unreachable; the message never has the password).
[[nodiscard]] database open(std::string_view url, const open_options& opts = {});

}  // namespace dblock
