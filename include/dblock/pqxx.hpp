// dblock/pqxx.hpp — the libpqxx backend (target dblock::pqxx): PostgreSQL.
#pragma once

#include <pqxx/connection>

#include "dblock/open.hpp"

namespace dblock {

// Opens its own connection from a postgresql:// URL.
[[nodiscard]] database open_pqxx(std::string_view url, const open_options& opts = {});
// Works on a connection you hold; it must outlive the returned database and every
// object made from it, and must not be used by another thread meanwhile.
[[nodiscard]] database attach(pqxx::connection& conn);

}  // namespace dblock
