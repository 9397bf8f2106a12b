// tests/conformance/fixture.hpp — the ONE conformance fixture: every test written on it
// runs on all five backend x database combinations (DESIGN, "Backends"):
//
//   pqxx_postgresql   libpqxx              x PostgreSQL  (DBLOCK_TEST_PG_URL)
//   mysql_mariadb     MySQL Connector/C++  x MariaDB     (DBLOCK_TEST_MYSQL_URL)
//   soci_sqlite       SOCI                 x SQLite      (a fresh file per test)
//   soci_postgresql   SOCI                 x PostgreSQL  ("soci+" + DBLOCK_TEST_PG_URL)
//   soci_mariadb      SOCI                 x MariaDB     ("soci+" + DBLOCK_TEST_MYSQL_URL)
//
// Writing a conformance test:
//
//   #include "conformance/fixture.hpp"
//   class LockConformance : public dblock::test::conformance {};
//   TEST_P(LockConformance, AcquireRelease) {
//     auto db = open();                                  // migrated, on this combination
//     auto r = raw_query(db, "SELECT COUNT(*) FROM dblock_locks WHERE name = $1", {unique_name("lock")});
//     ...
//   }
//   DBLOCK_CONFORMANCE_SUITE(LockConformance);
//
// Test names come out as LockConformance.AcquireRelease/soci_mariadb: the combination
// is in every name, the URL never is (it carries a password; do not print url() either).
//
// Rules, because ctest runs every test as its own process, two at a time (-j2):
//  - PostgreSQL and MariaDB tests share one test database per server: name everything
//    you create with unique_name() (test name + pid + counter), or take a
//    fresh_database() when the test needs an empty one (migrations, history counts).
//  - SQLite gets a new file per test anyway.
//  - A test that restarts a server must have "ServerRestart" in its name (see
//    tests/CMakeLists.txt: it then runs alone).
//  - Prove concurrency by counting violations over many threads/processes, never by sleeping.
//
// When a server URL is missing the test is skipped, or fails when DBLOCK_TEST_REQUIRE_ALL=1.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "dblock/dblock.hpp"
#include "support/temp_dir.hpp"

namespace dblock::test {

// Every suite writes durations as literals (5000ms, 30s).
using namespace std::chrono_literals;
using std::chrono::milliseconds;

struct combination {
  const char* name;            // part of the test name: "pqxx_postgresql", ...
  dialect kind;                // database
  client_library client;       // client library
  const char* url_env;         // variable holding the server URL; nullptr for SQLite
  const char* scheme_prefix;   // prepended to that URL: "" or "soci+"
  // ?dialect=<this> forced on that URL, in a database of its own (dblock_<this>) so that
  // each dialect's schema and migration history stay apart; nullptr: the server's dialect.
  const char* forced_dialect = nullptr;
};

// The seven combinations, in the order above.
[[nodiscard]] const std::vector<combination>& all_combinations();
// Name generator for INSTANTIATE_TEST_SUITE_P.
[[nodiscard]] std::string combination_name(const ::testing::TestParamInfo<combination>& info);
// gtest prints parameters with this (name only, never a URL).
void PrintTo(const combination& c, std::ostream* os);

class conformance : public ::testing::TestWithParam<combination> {
 protected:
  // Resolves the combination's URL (SQLite: a new file in a per-test temp folder);
  // skips, or fails with DBLOCK_TEST_REQUIRE_ALL=1, when its variable is not set.
  void SetUp() override;
  // Drops the databases made by fresh_database() and removes the temp folder.
  void TearDown() override;

  [[nodiscard]] const combination& combo() const { return GetParam(); }
  [[nodiscard]] dialect kind() const { return GetParam().kind; }
  [[nodiscard]] client_library client() const { return GetParam().client; }
  // Round trips of one lock_acquire: 1 on every dialect (MySQL 8.0: a stored function).
  [[nodiscard]] std::uint64_t acquire_trips(bool /*new_grant*/) const { return 1u; }
  // MariaDB's dialect or MySQL 8.0's (both run against the MariaDB test server).
  [[nodiscard]] bool mysql_family() const { return kind() == dialect::mysql || kind() == dialect::mysql8; }

  // The combination's URL (for dblock::open). Contains the password: never print it.
  [[nodiscard]] const std::string& url() const { return url_; }
  // A new connection to url(), with dblock's schema migrated.
  [[nodiscard]] database open();
  // A new connection to url(), nothing migrated by this call.
  [[nodiscard]] database open_unmigrated();

  // The URL (same combination: client library and scheme) of a new, empty database,
  // dropped in TearDown. PostgreSQL / MariaDB: CREATE DATABASE dblock_t_<random>;
  // SQLite: a new file. Open it with dblock::open(fresh_database()).
  [[nodiscard]] std::string fresh_database();

  // A name no other test (process) uses: "<stem>_<test>_<combination>_<pid>_<n>",
  // lower case, a valid identifier of at most 63 characters (tables, locks, scopes).
  [[nodiscard]] std::string unique_name(std::string_view stem = "t");

  // This test's own temporary folder (created on first use, removed in TearDown).
  [[nodiscard]] const std::filesystem::path& temp_path();

  // Runs arbitrary test SQL through the database's internal driver: one round trip,
  // errors classified exactly as dblock's own statements are. Write parameters as
  // $1..$n (rewritten per client library), bind int64, string or nullptr. Runs on the
  // database's connection (inside its transaction when called from in_transaction),
  // without taking the database's mutex: not for use while other threads use `db`.
  static detail::result raw_query(database& db, std::string_view sql, std::vector<detail::value> params = {});
  // A parameterless statement over the plain text protocol (DDL, KILL, SET, ...).
  static void raw_exec(database& db, std::string_view sql);
  // The first column of the first row as an integer (e.g. SELECT COUNT(*)).
  static std::int64_t query_int(database& db, std::string_view sql, std::vector<detail::value> params = {});
  // Whether `table` exists in db's current database/schema.
  static bool table_exists(database& db, std::string_view table);

  // Round trips `fn` costs on `db` (database::round_trips() before and after).
  static std::uint64_t round_trips_of(database& db, const std::function<void()>& fn);

  // Options of a test session: a lease of `ttl`, everything else at its default (a lock
  // delay of 1 s).
  [[nodiscard]] static session_options quick(milliseconds ttl = 5000ms) {
    session_options o;
    o.ttl = ttl;
    return o;
  }
  // The same without a lock delay: a released or expired hold is free at once.
  [[nodiscard]] static session_options quick_no_delay(milliseconds ttl = 5000ms) {
    auto o = quick(ttl);
    o.lock_delay = 0ms;
    return o;
  }
  // Rows of `name`: lease locks (dblock_locks), read-write and semaphore holds
  // (dblock_lock_holders), wait-line tickets (dblock_lock_waiters).
  static std::int64_t lock_rows(database& db, const std::string& name) {
    return query_int(db, "SELECT COUNT(*) FROM dblock_locks WHERE name = $1", {name});
  }
  static std::int64_t holder_rows(database& db, const std::string& name) {
    return query_int(db, "SELECT COUNT(*) FROM dblock_lock_holders WHERE name = $1", {name});
  }
  static std::int64_t tickets(database& db, const std::string& name) {
    return query_int(db, "SELECT COUNT(*) FROM dblock_lock_waiters WHERE name = $1", {name});
  }
  // Runs `work` (returns the violations it counted) here and in a forked child at once; both
  // must report 0 (`what` names them in the failure).
  static void expect_clean_in_two_processes(const std::function<int()>& work, const std::string& what);

  // Server-side connection killing (not on SQLite: check can_kill_connections() and
  // assert SQLite's own analogue instead; CI skips nothing). server_connection_id:
  // pg_backend_pid() / CONNECTION_ID().
  [[nodiscard]] bool can_kill_connections() const { return kind() != dialect::sqlite; }
  static std::int64_t server_connection_id(database& db);
  // Kills `victim`'s server connection from a second connection to url() and returns
  // once the server no longer lists it (pg_terminate_backend with a wait / KILL +
  // processlist poll, bounded). The victim's next statement must fail. Uses gtest
  // assertions: call it as ASSERT_NO_FATAL_FAILURE(kill_connection(db)).
  void kill_connection(database& victim);

  // `text` with the password of url() replaced by "***": use it before printing
  // anything that might echo the URL (a child process's stderr, say).
  [[nodiscard]] std::string scrubbed(std::string text) const;

  // dblock's own migrations for a dialect, as embedded: "migrations/<dialect>/NNNN_x.sql",
  // in version order.
  [[nodiscard]] static std::vector<std::string> dblock_migration_files(dialect d);

 private:
  struct made_database {
    std::string server_url;
    std::string name;
  };
  std::string server_url_;  // env URL without the "soci+" prefix (server combinations)
  std::string url_;
  std::vector<made_database> made_;
  std::unique_ptr<temp_dir> temp_;
  int fresh_count_ = 0;
  int name_count_ = 0;
};

}  // namespace dblock::test

// Instantiates a conformance suite (a subclass of dblock::test::conformance) on all five
// combinations. Test names: Suite.Test/<combination>.
#define DBLOCK_CONFORMANCE_SUITE(Suite)                                                     \
  INSTANTIATE_TEST_SUITE_P(, Suite, ::testing::ValuesIn(::dblock::test::all_combinations()), \
                           ::dblock::test::combination_name)
