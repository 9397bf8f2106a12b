// tests/cli/cli_test.cpp — the dblock command driven as a user (or a script) would:
// a real process, its exit code (DESIGN: 64 usage/input, 69 unreachable, 78 schema
// missing), one stderr line starting "dblock: ", and never a password in the output.
#include <gtest/gtest.h>

#include "dblock/dblock.hpp"
#include "dblock/version.hpp"
#include "support/process.hpp"
#include "support/servers.hpp"
#include "support/temp_dir.hpp"

namespace dblock::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* secret = "s3cr3t-PW";

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

class Cli : public ::testing::Test {
 protected:
  // Runs `dblock ARGS...` in this test's own folder, with DBLOCK_URL unset unless `env`
  // says otherwise.
  process_result dblock(std::vector<std::string> args, std::map<std::string, std::optional<std::string>> env = {}) {
    process_options o;
    o.argv = {DBLOCK_BINARY};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.env = std::move(env);
    if (!o.env.count("DBLOCK_URL")) o.env["DBLOCK_URL"] = std::nullopt;
    o.cwd = cwd_.path();
    o.timeout = std::chrono::seconds(60);
    auto r = run_process(o);
    EXPECT_FALSE(r.timed_out);
    return r;
  }

  // The documented error shape: exactly one line on stderr, "dblock: ...", no password,
  // nothing on stdout.
  static void expect_one_error_line(const process_result& r) {
    EXPECT_TRUE(r.err.starts_with("dblock: ")) << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_TRUE(r.err.ends_with("\n"));
    EXPECT_EQ(r.out, "");
  }
  static void expect_no_secret(const process_result& r) {
    EXPECT_FALSE(contains(r.err, secret)) << "the password is on stderr";
    EXPECT_FALSE(contains(r.out, secret)) << "the password is on stdout";
  }

  const fs::path& cwd() const { return cwd_.path(); }

 private:
  temp_dir cwd_{"dblock-cli"};
};

TEST_F(Cli, Version) {
  auto r = dblock({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, DBLOCK_VERSION)) << r.out;
  EXPECT_TRUE(r.out.starts_with("dblock ")) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(Cli, Help) {
  auto r = dblock({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "migrate")) << r.out;
  EXPECT_TRUE(contains(r.out, "--url")) << r.out;
  EXPECT_EQ(r.err, "");
  auto m = dblock({"migrate", "--help"});
  EXPECT_EQ(m.exit_code, 0);
  EXPECT_TRUE(contains(m.out, "--dir")) << m.out;
}

TEST_F(Cli, NoSubcommandIsUsageError) {
  auto r = dblock({});
  EXPECT_EQ(r.exit_code, 64);
  expect_one_error_line(r);
  auto u = dblock({"--url", "sqlite:x.db"});
  EXPECT_EQ(u.exit_code, 64);
  expect_one_error_line(u);
  EXPECT_FALSE(fs::exists(cwd() / "x.db")) << "nothing may be opened on a usage error";
}

TEST_F(Cli, UnknownOptionOrCommandIsUsageError) {
  for (std::vector<std::string> args : {std::vector<std::string>{"--bogus", "migrate"},
                                        std::vector<std::string>{"migrate", "--bogus"},
                                        std::vector<std::string>{"frobnicate"},
                                        std::vector<std::string>{"migrate", "--dir"},
                                        std::vector<std::string>{"migrate", "--dir", "/nonexistent/dblock-dir"}}) {
    SCOPED_TRACE(args[0] + (args.size() > 1 ? " " + args[1] : ""));
    auto r = dblock(args);
    EXPECT_EQ(r.exit_code, 64);
    expect_one_error_line(r);
  }
  EXPECT_FALSE(fs::exists(cwd() / "dblock.db"));
}

TEST_F(Cli, BadUrlsAreUsageErrorsNamingTheBadPart) {
  struct row {
    std::string url;
    std::string names;
  };
  const row rows[] = {
      {std::string("ftp://u:") + secret + "@h/db", "ftp"},
      {std::string("postgresql://u:") + secret + "@h:99999/db", "99999"},
      {std::string("postgresql://u:") + secret + "@h:abc/db", "'abc'"},
      {std::string("mysql://u:") + secret + "@h:3306/", "missing database"},
      {std::string("soci+mysql://u:") + secret + "@:3306/db", "missing host"},
      {std::string("postgresql://u:") + secret + "/x@h/db", "percent-encode"},
      {"sqlite://host/x.db", "sqlite:///absolute/path.db"},
      {"sqlite:", "missing database file path"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.names);
    auto p = dblock({"--url", r.url, "migrate"});
    EXPECT_EQ(p.exit_code, 64);
    expect_one_error_line(p);
    expect_no_secret(p);
    EXPECT_TRUE(contains(p.err, r.names)) << p.err;
  }
}

TEST_F(Cli, UnreachableServersExit69WithoutThePassword) {
  for (const char* scheme : {"postgresql", "mysql", "soci+postgresql", "soci+mysql"}) {
    SCOPED_TRACE(scheme);
    auto p = dblock({"--url", std::string(scheme) + "://u:" + secret + "@127.0.0.1:1/db", "migrate"});
    EXPECT_EQ(p.exit_code, 69);
    expect_one_error_line(p);
    expect_no_secret(p);
  }
}

TEST_F(Cli, DefaultIsSqliteInTheCurrentDirectory) {
  auto r = dblock({"migrate"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(fs::exists(cwd() / "dblock.db"));
  EXPECT_TRUE(contains(r.out, "applied dblock migrations/sqlite/0001_locks.sql")) << r.out;
  auto again = dblock({"migrate"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(contains(again.out, "migrations: 0 applied")) << again.out;
  // An empty DBLOCK_URL counts as unset.
  auto empty = dblock({"migrate"}, {{"DBLOCK_URL", ""}});
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_TRUE(contains(empty.out, "migrations: 0 applied")) << empty.out;
}

TEST_F(Cli, DblockUrlEnvironmentIsHonoured) {
  auto r = dblock({"migrate"}, {{"DBLOCK_URL", "sqlite:from-env.db"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(cwd() / "from-env.db"));
  EXPECT_FALSE(fs::exists(cwd() / "dblock.db"));
  // A bad DBLOCK_URL is refused like a bad --url, without the password.
  auto bad = dblock({"migrate"}, {{"DBLOCK_URL", std::string("ftp://u:") + secret + "@h/db"}});
  EXPECT_EQ(bad.exit_code, 64);
  expect_one_error_line(bad);
  expect_no_secret(bad);
  // --url wins over DBLOCK_URL.
  auto flag = dblock({"--url", "sqlite:from-flag.db", "migrate"}, {{"DBLOCK_URL", "ftp://nowhere/x"}});
  EXPECT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_TRUE(fs::exists(cwd() / "from-flag.db"));
}

TEST_F(Cli, MigrateWithAUserFolder) {
  const auto dir = cwd() / "app-migrations";
  write_file(dir / "0001_users.sql", "CREATE TABLE users (id INTEGER PRIMARY KEY);\n");
  write_file(dir / "0002_orders.sql", "CREATE TABLE orders (id INTEGER PRIMARY KEY);\n");
  const std::string url = "sqlite:app.db";
  auto r = dblock({"--url", url, "migrate", "--dir", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "applied app " + (dir / "0001_users.sql").string())) << r.out;
  EXPECT_TRUE(contains(r.out, "applied app " + (dir / "0002_orders.sql").string())) << r.out;
  {
    auto db = open("sqlite://" + (cwd() / "app.db").string());
    EXPECT_EQ(db.applied_migrations("app").size(), 2u);
    EXPECT_NO_THROW(db.require_schema());
  }
  auto again = dblock({"--url", url, "migrate", "--dir", dir.string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(contains(again.out, "migrations: 0 applied")) << again.out;

  // --scope names the history scope of the folder.
  const auto audit = cwd() / "audit-migrations";
  write_file(audit / "0001_audit.sql", "CREATE TABLE audit (id INTEGER PRIMARY KEY);\n");
  auto scoped = dblock({"--url", url, "migrate", "--dir", audit.string(), "--scope", "audit"});
  ASSERT_EQ(scoped.exit_code, 0) << scoped.err;
  EXPECT_TRUE(contains(scoped.out, "applied audit " + (audit / "0001_audit.sql").string())) << scoped.out;
  {
    auto db = open("sqlite://" + (cwd() / "app.db").string());
    EXPECT_EQ(db.applied_migrations("audit").size(), 1u);
    EXPECT_EQ(db.applied_migrations("app").size(), 2u);
  }

  // A failing migration: exit 65, naming the file.
  write_file(dir / "0003_broken.sql", "CREATE TABLE broken (id INTEGER);\nNOT SQL AT ALL;\n");
  auto broken = dblock({"--url", url, "migrate", "--dir", dir.string()});
  EXPECT_EQ(broken.exit_code, 65);
  expect_one_error_line(broken);
  EXPECT_TRUE(contains(broken.err, "0003_broken.sql")) << broken.err;
  fs::remove(dir / "0003_broken.sql");

  // An edited, applied migration: exit 65 (migration error), naming the file.
  write_file(dir / "0001_users.sql", "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);\n");
  auto drift = dblock({"--url", url, "migrate", "--dir", dir.string()});
  EXPECT_EQ(drift.exit_code, 65);
  expect_one_error_line(drift);
  EXPECT_TRUE(contains(drift.err, "0001_users.sql")) << drift.err;
}

// dblock reap --once removes the rows expired past the grace and leaves live ones; bad
// options exit 64 with one error line naming the option, and leave every row in place.
TEST_F(Cli, ReapOnceRemovesOnlyExpiredRowsAndRefusesBadOptions) {
  const std::string url = "sqlite:" + (cwd() / "reap.db").string();
  ASSERT_EQ(dblock({"--url", url, "migrate"}).exit_code, 0);
  auto db = dblock::open(url);
  detail::backend_of(db)->raw().run_script(
      "INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder) VALUES"
      " ('old-1', 'o', 1, 1, 0, 1000, ''), ('old-2', 'o', 1, 2, 0, 1000, ''),"
      " ('live', 'o', 1, 3, 0, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + 3600000, '')");
  ASSERT_EQ(list_locks(db).size(), 3u);
  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"--async-commit", "maybe"}, {"--duty-cycle", "0"}, {"--batch", "0"}, {"--grace", "soon"}}) {
    std::vector<std::string> args{"--url", url, "reap", "--once"};
    args.insert(args.end(), bad.begin(), bad.end());
    auto r = dblock(args);
    EXPECT_EQ(r.exit_code, 64) << bad[0] << " " << bad[1];
    expect_one_error_line(r);
    EXPECT_TRUE(contains(r.err, bad[0]) || contains(r.err, bad[1])) << r.err;
  }
  EXPECT_EQ(list_locks(db).size(), 3u) << "a refused command changed the table";
  auto r = dblock({"--url", url, "reap", "--once", "--grace", "0s", "--async-commit", "false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "reaped 2 lock rows, 0 wait-line tickets, 0 idempotency records")) << r.out;
  const auto left = list_locks(db);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].name, "live");
}

// A command that needs dblock's schema, run on an unmigrated PostgreSQL database,
// exits 78 and tells the user to run `dblock migrate`.
TEST_F(Cli, SchemaMissingExit78) {
  auto help = dblock({"--help"});
  ASSERT_EQ(help.exit_code, 0);
  ASSERT_TRUE(contains(help.out, "\n  locks ")) << "`dblock locks` is missing from --help:\n" << help.out;
  auto pg = env_url(pg_url_env);
  if (!pg) {
    if (require_all()) FAIL() << pg_url_env << " is not set (DBLOCK_TEST_REQUIRE_ALL=1)";
    GTEST_SKIP() << pg_url_env << " is not set";
  }
  const auto name = create_database(*pg, dialect::postgresql);
  auto r = dblock({"locks"}, {{"DBLOCK_URL", with_database(*pg, name)}});
  drop_database(*pg, dialect::postgresql, name);
  EXPECT_EQ(r.exit_code, 78);
  EXPECT_TRUE(contains(r.err, "dblock migrate")) << r.err;
  expect_one_error_line(r);
}

// `dblock migrate --lock-tables`: unlogged on SQLite is exit 64 with one line and creates
// nothing; on PostgreSQL it switches the three lock tables, and `logged` switches them back.
TEST_F(Cli, MigrateLockTables) {
  auto refused = dblock({"--url", "sqlite:unlogged.db", "migrate", "--lock-tables", "unlogged"});
  EXPECT_EQ(refused.exit_code, 64);
  EXPECT_TRUE(contains(refused.err, "only on PostgreSQL")) << refused.err;
  expect_one_error_line(refused);
  {
    auto db = open("sqlite://" + (cwd() / "unlogged.db").string());
    EXPECT_TRUE(db.applied_migrations("dblock").empty()) << "the refusal came before any migration";
  }
  auto bad = dblock({"--url", "sqlite:unlogged.db", "migrate", "--lock-tables", "fast"});
  EXPECT_EQ(bad.exit_code, 64);
  expect_one_error_line(bad);

  auto pg = env_url(pg_url_env);
  if (!pg) {
    if (require_all()) FAIL() << pg_url_env << " is not set (DBLOCK_TEST_REQUIRE_ALL=1)";
    GTEST_SKIP() << pg_url_env << " is not set";
  }
  const auto name = create_database(*pg, dialect::postgresql);
  const auto url = with_database(*pg, name);
  const auto unlogged_count = [&] {
    pqxx::connection c(url.substr(0, url.find('?')));
    return pqxx::nontransaction(c)
        .exec1("SELECT count(*) FROM pg_class WHERE relname IN ('dblock_locks', 'dblock_lock_waiters', "
               "'dblock_lock_holders') AND relpersistence = 'u'")[0]
        .as<int>();
  };
  auto on = dblock({"migrate", "--lock-tables", "unlogged"}, {{"DBLOCK_URL", url}});
  EXPECT_EQ(on.exit_code, 0) << on.err;
  EXPECT_TRUE(contains(on.out, "lock tables: unlogged")) << on.out;
  const int after_on = unlogged_count();
  auto off = dblock({"migrate", "--lock-tables", "logged"}, {{"DBLOCK_URL", url}});
  EXPECT_EQ(off.exit_code, 0) << off.err;
  const int after_off = unlogged_count();
  drop_database(*pg, dialect::postgresql, name);
  EXPECT_EQ(after_on, 3);
  EXPECT_EQ(after_off, 0);
}

}  // namespace
}  // namespace dblock::test
