// tests/unit/user_sql_test.cpp — column names in the row guards' and conditional writes'
// argument checks follow each dialect's identifier rules (core/user_sql.hpp): dblock
// quotes every identifier, and quoted PostgreSQL names are case-sensitive, while MySQL /
// MariaDB column names and SQLite names are not.
#include <gtest/gtest.h>

#include "core/user_sql.hpp"
#include "dblock/errors.hpp"

namespace dblock {
namespace {

TEST(UserSqlColumns, PostgresqlQuotedNamesAreCaseSensitive) {
  EXPECT_TRUE(detail::same_column(dialect::postgresql, "amount", "amount"));
  EXPECT_FALSE(detail::same_column(dialect::postgresql, "Amount", "amount"));
  // "Amount" and "amount" are two columns of one PostgreSQL table.
  EXPECT_NO_THROW(detail::check_columns(dialect::postgresql, {"Amount", "amount"}, 1, {"id"}, "fenced_write"));
  EXPECT_NO_THROW(detail::check_columns(dialect::postgresql, {"ID"}, 1, {"id"}, "fenced_write"));
  EXPECT_THROW(detail::check_columns(dialect::postgresql, {"amount", "amount"}, 1, {"id"}, "fenced_write"),
               invalid_argument);
  EXPECT_THROW(detail::check_columns(dialect::postgresql, {"id"}, 1, {"id"}, "fenced_write"), invalid_argument);
}

TEST(UserSqlColumns, MysqlAndSqliteNamesAreCaseInsensitive) {
  for (auto d : {dialect::mysql, dialect::sqlite}) {
    SCOPED_TRACE(to_string(d));
    EXPECT_TRUE(detail::same_column(d, "Amount", "aMOUNT"));
    EXPECT_FALSE(detail::same_column(d, "amount", "amounts"));
    EXPECT_FALSE(detail::same_column(d, "a_1", "a_2"));
    EXPECT_THROW(detail::check_columns(d, {"Amount", "amount"}, 1, {"id"}, "fenced_write"), invalid_argument);
    EXPECT_THROW(detail::check_columns(d, {"ID"}, 1, {"id"}, "fenced_write"), invalid_argument);
    EXPECT_NO_THROW(detail::check_columns(d, {"amount", "note"}, 1, {"id", "fence"}, "fenced_write"));
  }
}

TEST(UserSqlColumns, MessagesNameTheColumnAndTheProblem) {
  try {
    detail::check_columns(dialect::mysql, {"note", "NOTE"}, 1, {"id"}, "update_if_version");
    FAIL() << "no throw";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'NOTE' is named twice"), std::string::npos) << e.what();
  }
  try {
    detail::check_columns(dialect::sqlite, {"Version"}, 1, {"version"}, "update_if_version");
    FAIL() << "no throw";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'Version' is the key, version or fence column"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dblock
