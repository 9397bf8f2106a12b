// tests/support/servers.hpp — the test database servers (DESIGN, "Tests"): their URLs
// from DBLOCK_TEST_PG_URL / DBLOCK_TEST_MYSQL_URL / DBLOCK_TEST_PGBOUNCER_URL, whether a
// missing one is a failure (DBLOCK_TEST_REQUIRE_ALL=1) or a skip, and throwaway databases on them.
//
// URLs carry a password: never put one in a test name, an assertion message or a log.
// Use dblock::redact_url() if a URL must be shown.
#pragma once

#include <pqxx/pqxx>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/backend.hpp"
#include "dblock/dblock.hpp"

namespace dblock::test {

inline constexpr const char* pg_url_env = "DBLOCK_TEST_PG_URL";
inline constexpr const char* mysql_url_env = "DBLOCK_TEST_MYSQL_URL";
// PgBouncer in transaction pooling mode in front of the PostgreSQL above (scripts/servers);
// tests add ?pooler=transaction themselves.
inline constexpr const char* pgbouncer_url_env = "DBLOCK_TEST_PGBOUNCER_URL";

// True when DBLOCK_TEST_REQUIRE_ALL=1 (CI): a missing server URL fails the test.
inline bool require_all() {
  const char* v = std::getenv("DBLOCK_TEST_REQUIRE_ALL");
  return v && std::string_view(v) == "1";
}

// The URL in environment variable `var`, or nullopt when unset or empty.
inline std::optional<std::string> env_url(const char* var) {
  const char* v = std::getenv(var);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

// `n` random bytes as lower-case hex (names of throwaway databases and tables).
inline std::string random_hex(std::size_t n) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    auto b = static_cast<unsigned>(rng() & 0xff);
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

// The same server URL with the database name replaced (scheme://auth@host:port/DB?opts).
inline std::string with_database(std::string_view url, std::string_view db) {
  auto sep = url.find("://");
  if (sep == std::string_view::npos) throw std::invalid_argument("with_database: not a server URL");
  auto slash = url.find('/', sep + 3);
  auto q = url.find('?', sep + 3);
  std::string out(url.substr(0, std::min(slash, q)));
  out += '/';
  out += db;
  if (q != std::string_view::npos) out += url.substr(q);
  return out;
}

// Creates an empty database on the server of `server_url` (a postgresql:// or mysql://
// test URL) named dblock_t_<random>, and returns its name. PostgreSQL: through a libpqxx
// connection to the test database (the test user has CREATEDB). MariaDB: through dblock's
// Connector/C++ driver (the test user has ALL on `dblock\_%`.*).
inline std::string create_database(const std::string& server_url, dialect d) {
  const std::string name = "dblock_t_" + random_hex(8);
  if (d == dialect::postgresql) {
    pqxx::connection c(server_url);
    pqxx::nontransaction(c).exec("CREATE DATABASE " + name);
  } else if ((d == dialect::mysql || d == dialect::mysql8)) {
    auto db = dblock::open(server_url);
    detail::backend_of(db)->run_script("CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4");
  } else {
    throw std::invalid_argument("create_database: SQLite databases are files");
  }
  return name;
}

// Drops a database made by create_database; never throws (cleanup).
inline void drop_database(const std::string& server_url, dialect d, const std::string& name) noexcept {
  try {
    if (d == dialect::postgresql) {
      pqxx::connection c(server_url);
      pqxx::nontransaction(c).exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    } else if ((d == dialect::mysql || d == dialect::mysql8)) {
      auto db = dblock::open(server_url);
      detail::backend_of(db)->run_script("DROP DATABASE IF EXISTS `" + name + "`");
    }
  } catch (...) {
    // A leftover dblock_t_* database on a throwaway server is harmless.
  }
}

}  // namespace dblock::test
