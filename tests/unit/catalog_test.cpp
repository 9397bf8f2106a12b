// tests/unit/catalog_test.cpp — the SQL catalog (core/catalog.hpp): the embedded text
// equals the files under sql/ and migrations/, placeholder rewriting for the three
// client-library styles, and the splitting of migration scripts into statements.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <thread>
#include <vector>

#include "core/catalog.hpp"
#include "dblock/errors.hpp"
#include "support/temp_dir.hpp"

namespace dblock::detail {
namespace {

namespace fs = std::filesystem;
using test::read_file;

const fs::path source_dir{DBLOCK_SOURCE_DIR};

// ---------------------------------------------------------------- embedded files

TEST(Embedded, TextEqualsTheFilesByteForByte) {
  ASSERT_GT(embedded_file_count, 0u);
  std::set<std::string> paths;
  for (std::size_t i = 0; i < embedded_file_count; ++i) {
    const std::string path = embedded_files[i].path;
    SCOPED_TRACE(path);
    EXPECT_TRUE(paths.insert(path).second) << "embedded twice";
    EXPECT_TRUE(path.starts_with("sql/") || path.starts_with("migrations/"));
    ASSERT_TRUE(fs::exists(source_dir / path)) << "embedded file no longer on disk: rebuild";
    const std::string disk = read_file(source_dir / path);
    const std::string_view embedded = embedded_files[i].text;
    EXPECT_EQ(embedded.size(), disk.size());
    EXPECT_TRUE(embedded == disk) << "embedded text differs from the file: rebuild";
    EXPECT_EQ(find_embedded(path), embedded_files[i].text);
  }
}

TEST(Embedded, EverySqlFileOnDiskIsEmbedded) {
  std::size_t on_disk = 0;
  for (const char* top : {"sql", "migrations"}) {
    ASSERT_TRUE(fs::is_directory(source_dir / top)) << top;
    for (const auto& e : fs::recursive_directory_iterator(source_dir / top)) {
      if (!e.is_regular_file() || e.path().extension() != ".sql") continue;
      ++on_disk;
      const std::string rel = fs::relative(e.path(), source_dir).generic_string();
      EXPECT_NE(find_embedded(rel), nullptr) << rel << " is not embedded: rebuild";
    }
  }
  EXPECT_EQ(on_disk, embedded_file_count);
}

TEST(Embedded, LookupOfMissingFiles) {
  EXPECT_EQ(find_embedded("sql/postgresql/no_such_statement.sql"), nullptr);
  EXPECT_EQ(find_embedded(""), nullptr);
  EXPECT_THROW((void)get_statement(dialect::postgresql, placeholder_style::dollar, "no_such_statement"),
               internal_error);
  EXPECT_EQ(dialect_dir(dialect::postgresql), "postgresql");
  EXPECT_EQ(dialect_dir(dialect::mysql), "mysql");
  EXPECT_EQ(dialect_dir(dialect::sqlite), "sqlite");
  EXPECT_EQ(dialect_dir(dialect::mysql8), "mysql8");
}

TEST(Embedded, MigrationsAreNumberedAlikeInEveryDialect) {
  static const std::regex name_re(R"(^migrations/(postgresql|mysql8|mysql|sqlite)/([0-9]{4})_([a-z0-9_]+)\.sql$)");
  std::map<std::string, std::vector<std::string>> per_dialect;  // dialect -> "NNNN_name"
  for (std::size_t i = 0; i < embedded_file_count; ++i) {
    std::string path = embedded_files[i].path;
    if (!path.starts_with("migrations/")) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(path, m, name_re)) << path << " is not migrations/<dialect>/NNNN_name.sql";
    per_dialect[m[1]].push_back(m[2].str() + "_" + m[3].str());
  }
  ASSERT_EQ(per_dialect.size(), 4u);
  for (auto& [d, names] : per_dialect) {
    std::sort(names.begin(), names.end());
    for (std::size_t i = 0; i < names.size(); ++i)
      EXPECT_EQ(std::stoi(names[i].substr(0, 4)), static_cast<int>(i + 1)) << d << ": versions must be 1..n";
  }
  // The same schema steps, in the same order, for every dialect.
  EXPECT_EQ(per_dialect["postgresql"], per_dialect["mysql"]);
  EXPECT_EQ(per_dialect["postgresql"], per_dialect["sqlite"]);
  EXPECT_EQ(per_dialect["postgresql"], per_dialect["mysql8"]);
}

// MySQL 8.0's dialect uses only what MySQL 8.0 and MariaDB 10.11 both accept: no sequence,
// no INSERT ... RETURNING, no MariaDB-only shared-lock spelling.
TEST(Embedded, MySQL8StatementsAvoidMariaDBOnlySyntax) {
  static const std::regex mariadb_only(R"(RETURNING|SEQUENCE|NEXTVAL|LOCK IN SHARE MODE)");
  int files = 0;
  for (std::size_t i = 0; i < embedded_file_count; ++i) {
    const std::string path = embedded_files[i].path;
    if (!path.starts_with("sql/mysql8/") && !path.starts_with("migrations/mysql8/")) continue;
    ++files;
    EXPECT_FALSE(std::regex_search(std::string(embedded_files[i].text), mariadb_only)) << path;
  }
  EXPECT_GT(files, 0);
}

TEST(Embedded, EveryRuntimeStatementHasContiguousParameters) {
  for (std::size_t i = 0; i < embedded_file_count; ++i) {
    std::string path = embedded_files[i].path;
    if (!path.starts_with("sql/")) continue;
    SCOPED_TRACE(path);
    auto st = rewrite_placeholders("x", embedded_files[i].text, placeholder_style::dollar);
    std::set<int> used(st.order.begin(), st.order.end());
    EXPECT_EQ(static_cast<int>(used.size()), st.param_count) << "parameters must be $1..$n without gaps";
    if (!used.empty()) {
      EXPECT_EQ(*used.begin(), 0);
      EXPECT_EQ(*used.rbegin(), st.param_count - 1);
    }
    EXPECT_EQ(st.text, embedded_files[i].text) << "dollar style must leave the text as written";
  }
}

// ---------------------------------------------------------------- placeholders

TEST(Placeholders, ThreeStylesWithRepeatedParameters) {
  const std::string sql = "SELECT $1, $2 FROM t WHERE a = $1 AND b = $3";
  auto d = rewrite_placeholders("s", sql, placeholder_style::dollar);
  EXPECT_EQ(d.name, "s");
  EXPECT_EQ(d.text, sql);
  EXPECT_EQ(d.order, (std::vector<int>{0, 1, 0, 2}));
  EXPECT_EQ(d.param_count, 3);

  auto q = rewrite_placeholders("s", sql, placeholder_style::question);
  EXPECT_EQ(q.text, "SELECT ?, ? FROM t WHERE a = ? AND b = ?");
  EXPECT_EQ(q.order, (std::vector<int>{0, 1, 0, 2}));
  EXPECT_EQ(q.param_count, 3);

  auto n = rewrite_placeholders("s", sql, placeholder_style::named);
  EXPECT_EQ(n.text, "SELECT :a1, :a2 FROM t WHERE a = :a3 AND b = :a4");
  EXPECT_EQ(n.order, (std::vector<int>{0, 1, 0, 2}));
  EXPECT_EQ(n.param_count, 3);
}

TEST(Placeholders, MultiDigitAndAdjacentText) {
  auto q = rewrite_placeholders("s", "VALUES ($10,$2)", placeholder_style::question);
  EXPECT_EQ(q.text, "VALUES (?,?)");
  EXPECT_EQ(q.order, (std::vector<int>{9, 1}));
  EXPECT_EQ(q.param_count, 10);
  auto n = rewrite_placeholders("s", "SELECT $1::bigint", placeholder_style::named);
  EXPECT_EQ(n.text, "SELECT :a1::bigint");
  auto none = rewrite_placeholders("s", "SELECT 1", placeholder_style::question);
  EXPECT_EQ(none.text, "SELECT 1");
  EXPECT_TRUE(none.order.empty());
  EXPECT_EQ(none.param_count, 0);
}

TEST(Placeholders, QuotesAreLeftAlone) {
  const std::string sql = "SELECT '$1', \"$2\", `$3`, 'it''s $4', $1";
  auto q = rewrite_placeholders("s", sql, placeholder_style::question);
  EXPECT_EQ(q.text, "SELECT '$1', \"$2\", `$3`, 'it''s $4', ?");
  EXPECT_EQ(q.order, (std::vector<int>{0}));
  EXPECT_EQ(q.param_count, 1);
  auto n = rewrite_placeholders("s", sql, placeholder_style::named);
  EXPECT_EQ(n.text, "SELECT '$1', \"$2\", `$3`, 'it''s $4', :a1");
}

TEST(Placeholders, CommentsAreLeftAlone) {
  const std::string sql = "-- takes $1 and $2\nSELECT $2 /* not $3 */ + $1 -- $4\n";
  auto q = rewrite_placeholders("s", sql, placeholder_style::question);
  EXPECT_EQ(q.text, "-- takes $1 and $2\nSELECT ? /* not $3 */ + ? -- $4\n");
  EXPECT_EQ(q.order, (std::vector<int>{1, 0}));
  EXPECT_EQ(q.param_count, 2);
}

TEST(Placeholders, DollarQuotesAreLeftAlone) {
  const std::string sql = "SELECT $$ $1 $$, $tag$ it's $2; $tag$, $1, $_x$ $3 $_x$";
  auto q = rewrite_placeholders("s", sql, placeholder_style::question);
  EXPECT_EQ(q.text, "SELECT $$ $1 $$, $tag$ it's $2; $tag$, ?, $_x$ $3 $_x$");
  EXPECT_EQ(q.order, (std::vector<int>{0}));
  auto n = rewrite_placeholders("s", sql, placeholder_style::named);
  EXPECT_EQ(n.text, "SELECT $$ $1 $$, $tag$ it's $2; $tag$, :a1, $_x$ $3 $_x$");
}

TEST(Placeholders, CachedStatementsMatchRewriting) {
  const auto& a = get_statement(dialect::mysql, placeholder_style::question, "history_insert");
  const auto& b = get_statement(dialect::mysql, placeholder_style::question, "history_insert");
  EXPECT_EQ(&a, &b);  // cached
  EXPECT_EQ(a.param_count, 4);
  EXPECT_EQ(a.order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(std::count(a.text.begin(), a.text.end(), '?'), 4);
  EXPECT_EQ(a.name, "history_insert");
}

// Lookups from many threads at once, the first ones for SQLite's dollar style among them
// (no test before this one looks it up), all see the one statement object per name.
TEST(Placeholders, ConcurrentLookupsSeeOneObject) {
  constexpr int threads = 8, rounds = 2000;
  const std::vector<const char*> names{"ping", "lock_probe", "idem_peek", "lock_acquire"};
  std::vector<std::vector<const statement*>> got(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < rounds; ++i)
        got[static_cast<std::size_t>(t)].push_back(
            &get_statement(dialect::sqlite, placeholder_style::dollar, names[static_cast<std::size_t>(i) % names.size()]));
    });
  for (auto& th : pool) th.join();
  int violations = 0;
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < rounds; ++i)
      if (got[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)] != got[0][static_cast<std::size_t>(i)]) ++violations;
  EXPECT_EQ(violations, 0);
  EXPECT_EQ(got[0][1]->name, "lock_probe");
}

// Every catalog statement has its own id, within catalog_size(); a rendered one has none
// (drivers key per-connection prepared statements by id).
TEST(Placeholders, CatalogStatementsHaveDistinctStableIds) {
  std::map<std::uint32_t, std::string> seen;
  int clashes = 0;
  for (dialect d : {dialect::postgresql, dialect::mysql, dialect::mysql8, dialect::sqlite})
    for (auto style : {placeholder_style::dollar, placeholder_style::question, placeholder_style::named})
      for (const char* name : {"ping", "lock_acquire", "lock_release", "lock_renew", "idem_claim"}) {
        const auto& st = get_statement(d, style, name);
        EXPECT_GT(st.id, 0u) << name;
        EXPECT_LE(st.id, catalog_size()) << name;
        const std::string what = std::string(to_string(d)) + "/" + std::to_string(static_cast<int>(style)) + "/" + name;
        if (auto [it, fresh] = seen.emplace(st.id, what); !fresh && ++clashes < 5)
          ADD_FAILURE() << "id " << st.id << " for " << what << " and " << it->second;
        EXPECT_EQ(get_statement(d, style, name).id, st.id);
      }
  EXPECT_EQ(clashes, 0);
  EXPECT_EQ(render_statement(dialect::sqlite, placeholder_style::named, "ping", {}).id, 0u);
  EXPECT_THROW((void)get_statement(dialect::sqlite, placeholder_style::named, "no_such_statement"), internal_error);
}

// ---------------------------------------------------------------- statements

TEST(Split, PlainStatementsAndEmptyOnes) {
  EXPECT_EQ(split_statements("SELECT 1; SELECT 2;; ;\n SELECT 3"),
            (std::vector<std::string>{"SELECT 1", "SELECT 2", "SELECT 3"}));
  EXPECT_TRUE(split_statements("").empty());
  EXPECT_TRUE(split_statements(" ;\n; ").empty());
  EXPECT_EQ(split_statements("  SELECT 1  \n"), (std::vector<std::string>{"SELECT 1"}));
}

TEST(Split, SemicolonsInStrings) {
  EXPECT_EQ(split_statements("INSERT INTO t VALUES ('a;b', \"c;d\", `e;f`, 'it''s;'); SELECT ';'"),
            (std::vector<std::string>{"INSERT INTO t VALUES ('a;b', \"c;d\", `e;f`, 'it''s;')", "SELECT ';'"}));
}

TEST(Split, Comments) {
  EXPECT_EQ(split_statements("-- header; with a semicolon\nSELECT 1; /* ; */ SELECT 2; -- trailing; comment\n"),
            (std::vector<std::string>{"-- header; with a semicolon\nSELECT 1", "/* ; */ SELECT 2"}));
  // A script of only comments has no statements.
  EXPECT_TRUE(split_statements("-- nothing here;\n/* or; here */\n").empty());
}

TEST(Split, DollarQuotedFunctionBodies) {
  const std::string fn =
      "CREATE FUNCTION f() RETURNS int AS $$ BEGIN PERFORM 1; RETURN 1; END; $$ LANGUAGE plpgsql";
  const std::string tagged = "DO $body$ BEGIN RAISE NOTICE ';'; END $body$";
  EXPECT_EQ(split_statements(fn + ";\n" + tagged + ";\nSELECT 1;"),
            (std::vector<std::string>{fn, tagged, "SELECT 1"}));
}

TEST(Split, SqliteTriggersWithBeginEnd) {
  const std::string trig =
      "CREATE TRIGGER IF NOT EXISTS tr AFTER INSERT ON t\nBEGIN\n  UPDATE c SET n = n + 1;\n"
      "  UPDATE c SET legend = 'END;';\n  UPDATE c SET m = append;\nEND";
  const std::string temp = "create temp trigger t2 after delete on t begin delete from u; end";
  const std::string temporary = "CREATE  TEMPORARY\nTRIGGER t3 BEFORE UPDATE ON t BEGIN SELECT 1; SELECT 2; END";
  auto out = split_statements(trig + ";\n" + temp + ";\n" + temporary + ";\nSELECT 1;");
  EXPECT_EQ(out, (std::vector<std::string>{trig, temp, temporary, "SELECT 1"}));
}

TEST(Split, TriggersAfterCommentsAndOtherStatements) {
  // A comment in front of a trigger must not hide its BEGIN ... END body.
  const std::string a = "-- keep the counter in sync; always\nCREATE TRIGGER a AFTER INSERT ON t BEGIN UPDATE c SET n = 1; END";
  const std::string b = "/* second; one */\n CREATE TRIGGER b AFTER DELETE ON t BEGIN UPDATE c SET n = 0; END";
  EXPECT_EQ(split_statements("CREATE TABLE t (x INTEGER);\n" + a + ";\n" + b + ";\n"),
            (std::vector<std::string>{"CREATE TABLE t (x INTEGER)", a, b}));
}

TEST(Split, MySQLStoredRoutinesWithBeginEnd) {
  // A MariaDB / MySQL routine body: inner statements, END IF, END WHILE; the routine ends at END.
  const std::string fn =
      "CREATE FUNCTION f(p INT) RETURNS INT NOT DETERMINISTIC MODIFIES SQL DATA\nBEGIN\n"
      "  DECLARE v INT DEFAULT 0;\n  IF p > 0 THEN\n    SET v = 1;\n  END IF;\n"
      "  WHILE v < 3 DO\n    SET v = v + 1;\n  END WHILE;\n  SELECT 'END;' INTO @x;\n  RETURN v;\nEND";
  const std::string proc = "-- why; here\ncreate procedure p() begin select 1; select 2; end";
  const std::string no_body = "CREATE FUNCTION g() RETURNS INT RETURN 1";
  EXPECT_EQ(split_statements("DROP FUNCTION IF EXISTS f;\n" + fn + ";\n" + proc + ";\n" + no_body + ";\nSELECT 1;"),
            (std::vector<std::string>{"DROP FUNCTION IF EXISTS f", fn, proc, no_body, "SELECT 1"}));
  // PostgreSQL's bodies are dollar quotes (no BEGIN outside them): the first ';' after one ends it.
  const std::string pg = "CREATE FUNCTION h() RETURNS int AS $$ BEGIN RETURN 1; END $$ LANGUAGE plpgsql";
  const std::string pg_sql = "CREATE FUNCTION k() RETURNS int AS 'SELECT 1' LANGUAGE sql";
  EXPECT_EQ(split_statements(pg + ";\n" + pg_sql + ";\nSELECT 2;"), (std::vector<std::string>{pg, pg_sql, "SELECT 2"}));
  // MySQL 8.0 migrations 0011, 0012 and 0013: one DROP / CREATE pair each, the function whole.
  for (const auto& [path, create] :
       {std::pair{"migrations/mysql8/0011_idem_claim_read_first.sql", "CREATE FUNCTION dblock_idem_claim("},
        std::pair{"migrations/mysql8/0012_idem_claim_insert_first.sql", "CREATE FUNCTION dblock_idem_claim_insert("},
        std::pair{"migrations/mysql8/0013_lock_grant_one_statement.sql", "CREATE FUNCTION dblock_lock_grant("}}) {
    const char* text = find_embedded(path);
    ASSERT_NE(text, nullptr) << path;
    auto st = split_statements(text);
    ASSERT_EQ(st.size(), 2u) << path;
    EXPECT_TRUE(st[1].starts_with(create)) << st[1];
    EXPECT_TRUE(st[1].ends_with("END")) << st[1];
  }
  // MariaDB and MySQL 8.0 migration 0010: three DROP / CREATE pairs.
  for (const char* path : {"migrations/mysql/0010_holders_one_statement.sql", "migrations/mysql8/0010_holders_one_statement.sql"}) {
    const char* text = find_embedded(path);
    ASSERT_NE(text, nullptr) << path;
    auto st = split_statements(text);
    ASSERT_EQ(st.size(), 6u) << path;
    for (std::size_t i = 1; i < st.size(); i += 2) {
      EXPECT_TRUE(st[i].find("CREATE FUNCTION") != std::string::npos) << st[i];
      EXPECT_TRUE(st[i].ends_with("END")) << st[i];
    }
  }
}

TEST(Split, EmbeddedMigrationsSplitAsWritten) {
  // sqlite 0001: fence table, its row, lock table, two indexes, two triggers.
  const char* sqlite = find_embedded("migrations/sqlite/0001_locks.sql");
  ASSERT_NE(sqlite, nullptr);
  auto s = split_statements(sqlite);
  ASSERT_EQ(s.size(), 7u);
  EXPECT_TRUE(s[5].find("CREATE TRIGGER") != std::string::npos) << s[5];
  EXPECT_TRUE(s[5].ends_with("END")) << s[5];
  EXPECT_TRUE(s[6].ends_with("END")) << s[6];
  // Every migration of every dialect has at least one statement, none empty.
  for (std::size_t i = 0; i < embedded_file_count; ++i) {
    std::string_view path = embedded_files[i].path;
    if (!path.starts_with("migrations/")) continue;
    auto stmts = split_statements(embedded_files[i].text);
    EXPECT_FALSE(stmts.empty()) << path;
    for (const auto& st : stmts) EXPECT_FALSE(st.empty()) << path;
  }
}

}  // namespace
}  // namespace dblock::detail
