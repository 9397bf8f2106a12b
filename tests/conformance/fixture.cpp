// tests/conformance/fixture.cpp — see fixture.hpp.
#include "conformance/fixture.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "support/servers.hpp"

namespace dblock::test {

const std::vector<combination>& all_combinations() {
  static const std::vector<combination> all = {
      {"pqxx_postgresql", dialect::postgresql, client_library::pqxx, pg_url_env, ""},
      {"mysql_mariadb", dialect::mysql, client_library::mysql, mysql_url_env, ""},
      {"soci_sqlite", dialect::sqlite, client_library::soci, nullptr, ""},
      {"soci_postgresql", dialect::postgresql, client_library::soci, pg_url_env, "soci+"},
      {"soci_mariadb", dialect::mysql, client_library::soci, mysql_url_env, "soci+"},
      // MySQL 8.0's dialect forced on the MariaDB server: every statement of sql/mysql8/ and
      // migrations/mysql8/ is one MariaDB accepts too.
      {"mysql_mysql8", dialect::mysql8, client_library::mysql, mysql_url_env, "", "mysql8"},
      {"soci_mysql8", dialect::mysql8, client_library::soci, mysql_url_env, "soci+", "mysql8"},
  };
  return all;
}

std::string combination_name(const ::testing::TestParamInfo<combination>& info) { return info.param.name; }

void PrintTo(const combination& c, std::ostream* os) { *os << c.name; }

void conformance::SetUp() {
  const combination& c = GetParam();
  if (c.kind == dialect::sqlite) {
    url_ = "sqlite://" + (temp_path() / "test.db").string();  // sqlite:///tmp/.../test.db
    return;
  }
  auto u = env_url(c.url_env);
  if (!u) {
    if (require_all()) FAIL() << c.url_env << " is not set (DBLOCK_TEST_REQUIRE_ALL=1: a missing database is a failure)";
    GTEST_SKIP() << c.url_env << " is not set: skipping " << c.name;
  }
  server_url_ = *u;
  if (c.forced_dialect) {
    // A database of the dialect's own, made once per process (kept: the next run reuses it).
    const std::string db = std::string("dblock_") + c.forced_dialect;
    static std::set<std::string> made;
    static std::mutex made_mu;
    std::lock_guard lock(made_mu);
    if (made.insert(db).second) {
      auto admin = dblock::open(*u);
      detail::backend_of(admin)->run_script("CREATE DATABASE IF NOT EXISTS `" + db + "` CHARACTER SET utf8mb4");
    }
    server_url_ = with_database(*u, db);
    server_url_ += (server_url_.find('?') == std::string::npos ? "?dialect=" : "&dialect=") + std::string(c.forced_dialect);
  }
  url_ = c.scheme_prefix + server_url_;
}

void conformance::TearDown() {
  for (const auto& m : made_) drop_database(m.server_url, kind(), m.name);
  made_.clear();
  temp_.reset();
}

database conformance::open() {
  auto db = dblock::open(url_);
  db.migrate();
  return db;
}

database conformance::open_unmigrated() { return dblock::open(url_); }

std::string conformance::fresh_database() {
  if (kind() == dialect::sqlite)
    return "sqlite://" + (temp_path() / ("fresh-" + std::to_string(++fresh_count_) + ".db")).string();
  auto name = create_database(server_url_, kind());
  made_.push_back({server_url_, name});
  return GetParam().scheme_prefix + with_database(server_url_, name);
}

std::string conformance::unique_name(std::string_view stem) {
  std::string test;
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    std::string_view n = info->name();
    n = n.substr(0, n.find('/'));  // the combination is added below
    for (char ch : n)
      if (std::isalnum(static_cast<unsigned char>(ch))) test += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  std::string tail = std::string("_") + GetParam().name + "_" + std::to_string(::getpid()) + "_" +
                     std::to_string(++name_count_);
  std::string head(stem);
  if (!test.empty()) head += "_" + test;
  if (head.size() + tail.size() > 63) head.resize(63 - tail.size());
  return head + tail;
}

const std::filesystem::path& conformance::temp_path() {
  if (!temp_) temp_ = std::make_unique<temp_dir>("dblock-conf");
  return temp_->path();
}

detail::result conformance::raw_query(database& db, std::string_view sql, std::vector<detail::value> params) {
  auto& drv = detail::backend_of(db)->raw();
  // The statement's name keys the MySQL driver's prepared-statement cache: use the text.
  auto st = detail::rewrite_placeholders("test: " + std::string(sql), sql, drv.style());
  return drv.run(st, params);
}

void conformance::raw_exec(database& db, std::string_view sql) { detail::backend_of(db)->raw().run_script(sql); }

std::int64_t conformance::query_int(database& db, std::string_view sql, std::vector<detail::value> params) {
  auto r = raw_query(db, sql, std::move(params));
  if (r.rows.empty() || r.rows[0].empty() || !r.rows[0][0])
    throw std::runtime_error("query_int: no value from: " + std::string(sql));
  return std::stoll(*r.rows[0][0]);
}

bool conformance::table_exists(database& db, std::string_view table) {
  const std::string t(table);
  switch (db.kind()) {
    case dialect::postgresql:
      return query_int(db, "SELECT CASE WHEN to_regclass($1) IS NULL THEN 0 ELSE 1 END", {t}) == 1;
    case dialect::mysql8:
    case dialect::mysql:
      return query_int(db,
                       "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND "
                       "table_name = $1",
                       {t}) == 1;
    case dialect::sqlite:
      return query_int(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = $1", {t}) == 1;
  }
  return false;
}

void conformance::expect_clean_in_two_processes(const std::function<int()>& work, const std::string& what) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(work() == 0 ? 0 : 1);
  const int parent = work();
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_EQ(parent, 0) << what;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child saw " << what;
}

std::uint64_t conformance::round_trips_of(database& db, const std::function<void()>& fn) {
  const auto before = db.round_trips();
  fn();
  return db.round_trips() - before;
}

std::int64_t conformance::server_connection_id(database& db) {
  switch (db.kind()) {
    case dialect::postgresql: return query_int(db, "SELECT pg_backend_pid()");
    case dialect::mysql8:
    case dialect::mysql: return query_int(db, "SELECT CONNECTION_ID()");
    case dialect::sqlite: break;
  }
  throw std::logic_error("SQLite has no server connection");
}

void conformance::kill_connection(database& victim) {
  ASSERT_TRUE(can_kill_connections()) << "SQLite has no server connection to kill";
  const std::int64_t id = server_connection_id(victim);
  auto killer = open_unmigrated();
  const char* gone_sql = nullptr;
  if (kind() == dialect::postgresql) {
    // With a timeout, pg_terminate_backend waits until the backend has exited.
    ASSERT_EQ(query_int(killer, "SELECT CASE WHEN pg_terminate_backend($1, 10000) THEN 1 ELSE 0 END", {id}), 1);
    gone_sql = "SELECT COUNT(*) FROM pg_stat_activity WHERE pid = $1";
  } else {
    raw_exec(killer, "KILL CONNECTION " + std::to_string(id));
    gone_sql = "SELECT COUNT(*) FROM information_schema.processlist WHERE id = $1";
  }
  // Bounded wait for the server to forget the connection (a precondition, not a proof).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (query_int(killer, gone_sql, {id}) != 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "server connection " << id << " still listed after kill";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string conformance::scrubbed(std::string text) const {
  std::optional<std::string> pw;
  try {
    pw = parse_url(url_).password;
  } catch (...) {
  }
  if (!pw || pw->empty()) return text;
  for (auto pos = text.find(*pw); pos != std::string::npos; pos = text.find(*pw, pos + 3)) text.replace(pos, pw->size(), "***");
  return text;
}

std::vector<std::string> conformance::dblock_migration_files(dialect d) {
  std::vector<std::string> out;
  const std::string prefix = "migrations/" + std::string(detail::dialect_dir(d)) + "/";
  for (std::size_t i = 0; i < detail::embedded_file_count; ++i)
    if (std::string_view(detail::embedded_files[i].path).starts_with(prefix)) out.emplace_back(detail::embedded_files[i].path);
  std::sort(out.begin(), out.end());  // NNNN_ prefixes: text order is version order
  return out;
}

}  // namespace dblock::test
