// dblock/pqxx.hpp — dblock on libpqxx (target dblock::pqxx): PostgreSQL.
#pragma once

#include <pqxx/connection>
#include <pqxx/transaction_base>

#include "dblock/open.hpp"
#include "dblock/transaction.hpp"

namespace dblock {

// Opens its own connection from a postgresql:// URL.
[[nodiscard]] database open_pqxx(std::string_view url, const open_options& opts = {});
// Works on a connection you hold; it must outlive the returned database and every
// object made from it, and must not be used by another thread meanwhile.
[[nodiscard]] database attach(pqxx::connection& conn);

// The caller's open transaction (pqxx::work, ...) as a dblock transaction_ref: dblock
// statements run inside it and commit or roll back with it. It must outlive the ref.
[[nodiscard]] transaction_ref within(pqxx::transaction_base& tx);

}  // namespace dblock
