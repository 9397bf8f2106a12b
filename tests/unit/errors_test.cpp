// tests/unit/errors_test.cpp — the error hierarchy (dblock/errors.hpp) and the code
// tables every backend classifies with (core/classify.hpp): by code, never by text.
#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>

#include "core/classify.hpp"
#include "dblock/errors.hpp"

namespace dblock {
namespace {

using detail::classify_mysql;
using detail::classify_sqlite;
using detail::classify_sqlstate;

const error_kind all_kinds[] = {
    error_kind::invalid_argument, error_kind::connection, error_kind::commit_unknown, error_kind::unique_violation,
    error_kind::lock_not_available, error_kind::deadlock, error_kind::serialization, error_kind::schema_missing,
    error_kind::migration, error_kind::timeout, error_kind::lock_lost, error_kind::database, error_kind::internal,
};

TEST(Errors, RetryableFlags) {
  // Retrying the operation (or whole transaction) can succeed for these, and only these.
  for (auto k : all_kinds) {
    SCOPED_TRACE(to_string(k));
    const bool want = k == error_kind::connection || k == error_kind::lock_not_available ||
                      k == error_kind::deadlock || k == error_kind::serialization || k == error_kind::timeout;
    EXPECT_EQ(error(k, "x").retryable(), want);
  }
  // Above all: a commit whose outcome is unknown must never be retried blindly.
  EXPECT_FALSE(commit_unknown("lost during COMMIT").retryable());
  EXPECT_TRUE(connection_error("gone").retryable());
  EXPECT_TRUE(deadlock("victim").retryable());
  EXPECT_TRUE(serialization_failure("conflict").retryable());
  EXPECT_FALSE(unique_violation("dup").retryable());
  EXPECT_FALSE(invalid_argument("bad").retryable());
}

TEST(Errors, CarryCodesAndMessage) {
  unique_violation e("duplicate key", "23505", 1062);
  EXPECT_STREQ(e.what(), "duplicate key");
  EXPECT_EQ(e.sqlstate(), "23505");
  EXPECT_EQ(e.vendor_code(), 1062);
  EXPECT_EQ(e.kind(), error_kind::unique_violation);
  invalid_argument plain("x");
  EXPECT_EQ(plain.sqlstate(), "");
  EXPECT_EQ(plain.vendor_code(), 0);
}

template <typename E>
void expect_thrown_as(error_kind k) {
  SCOPED_TRACE(to_string(k));
  try {
    throw_error(k, "message", "XX000", 7);
  } catch (const E& e) {
    EXPECT_EQ(e.kind(), k);
    EXPECT_STREQ(e.what(), "message");
    EXPECT_EQ(e.sqlstate(), "XX000");
    EXPECT_EQ(e.vendor_code(), 7);
    return;
  } catch (...) {
  }
  ADD_FAILURE() << "throw_error did not throw the matching subclass";
}

TEST(Errors, ThrowErrorThrowsTheMatchingSubclass) {
  expect_thrown_as<invalid_argument>(error_kind::invalid_argument);
  expect_thrown_as<connection_error>(error_kind::connection);
  expect_thrown_as<commit_unknown>(error_kind::commit_unknown);
  expect_thrown_as<unique_violation>(error_kind::unique_violation);
  expect_thrown_as<lock_not_available>(error_kind::lock_not_available);
  expect_thrown_as<deadlock>(error_kind::deadlock);
  expect_thrown_as<serialization_failure>(error_kind::serialization);
  expect_thrown_as<schema_missing>(error_kind::schema_missing);
  expect_thrown_as<migration_error>(error_kind::migration);
  expect_thrown_as<timeout_error>(error_kind::timeout);
  expect_thrown_as<lock_lost>(error_kind::lock_lost);
  expect_thrown_as<database_error>(error_kind::database);
  expect_thrown_as<internal_error>(error_kind::internal);
  // The two transaction conflicts share a base callers can catch.
  expect_thrown_as<transaction_conflict>(error_kind::deadlock);
  expect_thrown_as<transaction_conflict>(error_kind::serialization);
  // Everything is a dblock::error and a std::runtime_error.
  for (auto k : all_kinds) {
    EXPECT_THROW(throw_error(k, "m"), error);
    EXPECT_THROW(throw_error(k, "m"), std::runtime_error);
  }
}

TEST(Errors, KindNamesAreDistinct) {
  std::set<std::string> names;
  for (auto k : all_kinds) names.insert(to_string(k));
  EXPECT_EQ(names.size(), std::size(all_kinds));
  // The name of the class a kind is thrown as, so a log line names what to catch.
  EXPECT_STREQ(to_string(error_kind::commit_unknown), "commit_unknown");
  EXPECT_STREQ(to_string(error_kind::connection), "connection_error");
  EXPECT_STREQ(to_string(error_kind::serialization), "serialization_failure");
  EXPECT_STREQ(to_string(error_kind::timeout), "timeout_error");
}

TEST(Classify, PostgresqlSqlstates) {
  struct row {
    const char* state;
    error_kind kind;
  };
  const row rows[] = {
      {"23505", error_kind::unique_violation},   // unique_violation
      {"55P03", error_kind::lock_not_available}, // lock_not_available (NOWAIT, lock_timeout)
      {"40P01", error_kind::deadlock},           // deadlock_detected
      {"40001", error_kind::serialization},      // serialization_failure
      {"42P01", error_kind::schema_missing},     // undefined_table
      {"3F000", error_kind::schema_missing},     // invalid_schema_name
      {"42883", error_kind::schema_missing},     // undefined_function
      {"57014", error_kind::timeout},            // query_canceled (statement_timeout)
      {"57P01", error_kind::connection},         // admin_shutdown (pg_terminate_backend)
      {"57P02", error_kind::connection},         // crash_shutdown
      {"57P03", error_kind::connection},         // cannot_connect_now
      {"08000", error_kind::connection},         // connection_exception
      {"08003", error_kind::connection},         // connection_does_not_exist
      {"08006", error_kind::connection},         // connection_failure
      {"08001", error_kind::connection},         // sqlclient_unable_to_establish_sqlconnection
      {"22023", error_kind::invalid_argument},   // invalid_parameter_value
      {"22P02", error_kind::invalid_argument},   // invalid_text_representation
      {"22003", error_kind::invalid_argument},   // numeric_value_out_of_range
      {"23503", error_kind::database},           // foreign_key_violation: not a unique violation
      {"23502", error_kind::database},           // not_null_violation
      {"42601", error_kind::database},           // syntax_error
      {"40003", error_kind::database},           // statement_completion_unknown: pqxx maps it by type
      {"XX000", error_kind::database},
      {"", error_kind::database},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.state);
    EXPECT_EQ(classify_sqlstate(r.state), r.kind);
  }
}

TEST(Classify, MysqlErrorNumbers) {
  struct row {
    int code;
    const char* state;
    error_kind kind;
  };
  const row rows[] = {
      {1062, "23000", error_kind::unique_violation},    // ER_DUP_ENTRY
      {1586, "23000", error_kind::unique_violation},    // ER_DUP_ENTRY_WITH_KEY_NAME
      {1205, "HY000", error_kind::lock_not_available},  // lock wait timeout; MariaDB NOWAIT
      {3572, "HY000", error_kind::lock_not_available},  // MySQL 8 NOWAIT
      {1213, "40001", error_kind::deadlock},            // deadlock (its SQLSTATE is 40001, still a deadlock)
      {1146, "42S02", error_kind::schema_missing},      // no such table
      {1049, "42000", error_kind::schema_missing},      // unknown database
      {1317, "70100", error_kind::timeout},             // KILL QUERY
      {1969, "70100", error_kind::timeout},             // max_statement_time (MariaDB)
      {3024, "HY000", error_kind::timeout},             // max_execution_time (MySQL)
      {1927, "70100", error_kind::connection},          // connection killed (MariaDB)
      {1053, "08S01", error_kind::connection},          // server shutdown
      {2002, "HY000", error_kind::connection},          // refused
      {2003, "HY000", error_kind::connection},          // can't connect (TCP)
      {2005, "HY000", error_kind::connection},          // unknown host
      {2006, "HY000", error_kind::connection},          // server has gone away
      {2013, "HY000", error_kind::connection},          // lost connection during query
      {2055, "HY000", error_kind::connection},          // lost connection (system error)
      {9999, "40001", error_kind::serialization},       // unknown number, SQLSTATE decides
      {9999, "08S01", error_kind::connection},
      {1045, "28000", error_kind::database},            // access denied: not retryable
      {1064, "42000", error_kind::database},            // syntax error
      {1452, "23000", error_kind::database},            // foreign key: 23000 but not a duplicate
      {0, "", error_kind::database},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.code);
    EXPECT_EQ(classify_mysql(r.code, r.state), r.kind);
  }
}

TEST(Classify, SqliteResultCodes) {
  struct row {
    int rc;
    error_kind kind;
  };
  const row rows[] = {
      {5, error_kind::lock_not_available},     // SQLITE_BUSY
      {261, error_kind::lock_not_available},   // SQLITE_BUSY_RECOVERY
      {517, error_kind::lock_not_available},   // SQLITE_BUSY_SNAPSHOT
      {6, error_kind::lock_not_available},     // SQLITE_LOCKED
      {262, error_kind::lock_not_available},   // SQLITE_LOCKED_SHAREDCACHE
      {2067, error_kind::unique_violation},    // SQLITE_CONSTRAINT_UNIQUE
      {1555, error_kind::unique_violation},    // SQLITE_CONSTRAINT_PRIMARYKEY
      {19, error_kind::database},              // SQLITE_CONSTRAINT (no detail)
      {787, error_kind::database},             // SQLITE_CONSTRAINT_FOREIGNKEY
      {275, error_kind::database},             // SQLITE_CONSTRAINT_CHECK
      {1299, error_kind::database},            // SQLITE_CONSTRAINT_NOTNULL
      {14, error_kind::connection},            // SQLITE_CANTOPEN
      {10, error_kind::connection},            // SQLITE_IOERR
      {3338, error_kind::connection},          // SQLITE_IOERR_FSYNC
      {9, error_kind::timeout},                // SQLITE_INTERRUPT
      {1, error_kind::database},               // SQLITE_ERROR (e.g. no such table: by text only)
      {0, error_kind::database},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.rc);
    EXPECT_EQ(classify_sqlite(r.rc), r.kind);
  }
}

}  // namespace
}  // namespace dblock
