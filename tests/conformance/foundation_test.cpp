// tests/conformance/foundation_test.cpp — the foundation on all seven combinations:
// connecting, the migration runner (fresh, idempotent, drift, user folders, failures,
// eight racing processes), error classification against the real servers (duplicate
// key, killed connection, the commit trap), the round-trip counter, and attach(); on SQLite
// alone, opening a new file under a writer and the SOCI driver's statement cache.
#include <cppconn/connection.h>
#include <cppconn/driver.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <soci/mysql/soci-mysql.h>
#include <soci/postgresql/soci-postgresql.h>
#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>  // declares the sqlite3 C API in namespace sqlite_api

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pqxx/pqxx>

#include <chrono>
#include <map>
#include <sstream>

#include "conformance/fixture.hpp"
#include "core/crypto.hpp"
#include "dblock/idempotency.hpp"
#include "dblock/mysql.hpp"
#include "dblock/pqxx.hpp"
#include "dblock/soci.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace dblock::test {
namespace {

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

// NNNN of ".../NNNN_name.sql".
int version_of(const std::string& file) { return std::stoi(file.substr(file.rfind('/') + 1, 4)); }

class FoundationConformance : public conformance {
 protected:
  // Asserts that `db` holds exactly dblock's embedded migrations, once each, in order.
  void expect_full_history(database& db) {
    const auto files = dblock_migration_files(kind());
    const auto hist = db.applied_migrations("dblock");
    ASSERT_EQ(hist.size(), files.size());
    for (std::size_t i = 0; i < files.size(); ++i) {
      EXPECT_EQ(hist[i].version, version_of(files[i]));
      EXPECT_EQ(hist[i].checksum, detail::sha256_hex(detail::find_embedded(files[i])));
      EXPECT_TRUE(contains(files[i], "_" + hist[i].name + ".sql")) << files[i] << " vs " << hist[i].name;
    }
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_schema_migrations WHERE scope = $1", {std::string("dblock")}),
              static_cast<std::int64_t>(files.size()));
  }
};

TEST_P(FoundationConformance, ConnectAndPing) {
  auto db = open_unmigrated();
  EXPECT_EQ(db.kind(), kind());
  EXPECT_EQ(db.client(), client());
  EXPECT_NO_THROW(db.ping());
  EXPECT_EQ(query_int(db, "SELECT 1 + $1", {std::int64_t{41}}), 42);
  // describe() is for messages: it must never carry the password.
  auto pw = parse_url(url()).password;
  if (pw) {
    EXPECT_FALSE(contains(db.describe(), *pw)) << "describe() shows the password";
  }
}

// A closed port on loopback: bound, never listened on, then released.
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return 1;
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Multi-host URL: the first host is dead (nothing listens), the second is the server.
// libpq walks its list (pqxx and SOCI); MariaDB's clients try each host in order.
TEST_P(FoundationConformance, MultiHostUrlSkipsADeadFirstHost) {
  if (kind() == dialect::sqlite) GTEST_SKIP() << "SQLite has no hosts";
  const auto u = parse_url(url());
  const std::string& s = url();
  const auto at = s.rfind('@', s.find('/', s.find("://") + 3));
  ASSERT_NE(at, std::string::npos);
  std::string multi = s.substr(0, at + 1) + "127.0.0.1:" + std::to_string(closed_port()) + "," + s.substr(at + 1);
  if (kind() == dialect::postgresql)
    multi += (multi.find('?') == std::string::npos ? "?" : "&") + std::string("target_session_attrs=read-write");
  ASSERT_EQ(parse_url(multi).hosts.size(), 2u);
  auto db = dblock::open(multi);
  EXPECT_EQ(query_int(db, "SELECT 40 + $1", {std::int64_t{2}}), 42);
  // The server's own port: the second host answered.
  const std::int64_t port = query_int(db, kind() == dialect::postgresql ? "SELECT inet_server_port()" : "SELECT @@port");
  EXPECT_EQ(port, *u.port);
  if (u.password) {
    EXPECT_FALSE(contains(db.describe(), *u.password)) << "describe() shows the password";
  }
  (void)db.migrate({.replication = replication_policy::ignore});
  session ses(db);
  auto l = ses.try_acquire(unique_name("multi"));
  ASSERT_TRUE(l);
  EXPECT_GT(l->fence(), 0);

  // Every host dead: one connection_error, no password in it.
  std::string dead = s.substr(0, at + 1) + "127.0.0.1:" + std::to_string(closed_port()) + ",127.0.0.1:" +
                     std::to_string(closed_port()) + s.substr(s.find('/', at));
  try {
    open_options o;
    o.connect_timeout = std::chrono::seconds(2);
    (void)dblock::open(dead, o);
    ADD_FAILURE() << "connected with every host dead";
  } catch (const connection_error& e) {
    if (u.password) {
      EXPECT_FALSE(contains(e.what(), *u.password));
    }
  }
}

// A single server with no standby: nothing to report, on every database.
TEST_P(FoundationConformance, ReplicationCheckOnASingleServerFindsNothing) {
  auto db = open();
  auto rep = check_replication(db);
  EXPECT_FALSE(rep.can_lose_grants) << (rep.reasons.empty() ? "" : rep.reasons[0]);
  EXPECT_EQ(rep.standbys, 0);
  session_options o;
  o.replication = replication_policy::refuse;
  EXPECT_NO_THROW([&] { session s(db, o); }());
}

TEST_P(FoundationConformance, MigrateFreshDatabaseAppliesAll) {
  auto db = dblock::open(fresh_database());
  EXPECT_THROW(db.require_schema(), schema_missing);
  EXPECT_TRUE(db.applied_migrations("dblock").empty());

  const auto files = dblock_migration_files(kind());
  ASSERT_GE(files.size(), 2u);
  auto res = db.migrate();
  EXPECT_EQ(res.already_applied, 0u);
  ASSERT_EQ(res.applied.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(res.applied[i].scope, "dblock");
    EXPECT_EQ(res.applied[i].version, version_of(files[i]));
    EXPECT_EQ(res.applied[i].file, files[i]);
    EXPECT_EQ(res.applied[i].checksum, detail::sha256_hex(detail::find_embedded(files[i])));
  }
  EXPECT_NO_THROW(db.require_schema());
  expect_full_history(db);

  for (const char* t : {"dblock_locks", "dblock_idempotency", "dblock_schema_migrations"})
    EXPECT_TRUE(table_exists(db, t)) << t;
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_locks"), 0);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM dblock_idempotency"), 0);
  // The fencing source exists and starts at the beginning.
  switch (kind()) {
    case dialect::postgresql: EXPECT_EQ(query_int(db, "SELECT nextval('dblock_fence_seq')"), 1); break;
    case dialect::mysql: EXPECT_EQ(query_int(db, "SELECT NEXTVAL(dblock_fence_seq)"), 1); break;
    case dialect::mysql8: EXPECT_EQ(query_int(db, "SELECT value FROM dblock_fence_counter WHERE id = 1"), 0); break;
    case dialect::sqlite: EXPECT_EQ(query_int(db, "SELECT last FROM dblock_fence WHERE id = 1"), 0); break;
  }
}

TEST_P(FoundationConformance, RemigrateAppliesNone) {
  const auto url = fresh_database();
  const auto n = dblock_migration_files(kind()).size();
  auto db = dblock::open(url);
  ASSERT_EQ(db.migrate().applied.size(), n);

  auto again = db.migrate();
  EXPECT_TRUE(again.applied.empty());
  EXPECT_EQ(again.already_applied, n);

  auto other = dblock::open(url);  // another connection, same answer
  auto third = other.migrate();
  EXPECT_TRUE(third.applied.empty());
  EXPECT_EQ(third.already_applied, n);
  expect_full_history(other);
}

TEST_P(FoundationConformance, EditedAppliedMigrationIsRefused) {
  const auto url = fresh_database();
  auto db = dblock::open(url);
  const auto dir = temp_path() / "drift";
  const std::string original = "CREATE TABLE drift_a (id INTEGER);\n";
  write_file(dir / "0001_x.sql", original);
  auto first = db.migrate_dir(dir, "app");
  ASSERT_EQ(first.applied.size(), 1u);
  const auto before = db.applied_migrations("app");
  ASSERT_EQ(before.size(), 1u);

  // Edit the applied file and add a new one: the run must stop at the edit.
  write_file(dir / "0001_x.sql", original + "CREATE TABLE drift_b (id INTEGER);\n");
  write_file(dir / "0002_y.sql", "CREATE TABLE drift_c (id INTEGER);\n");
  try {
    (void)db.migrate_dir(dir, "app");
    ADD_FAILURE() << "an edited, applied migration was accepted";
  } catch (const migration_error& e) {
    EXPECT_TRUE(contains(e.what(), "0001_x.sql")) << e.what();
    EXPECT_TRUE(contains(e.what(), "edited")) << e.what();
    EXPECT_FALSE(e.retryable());
  }

  // Nothing changed, as seen from a second connection (which also proves the
  // migration lock was released: it would time out otherwise).
  auto other = dblock::open(url);
  const auto after = other.applied_migrations("app");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].checksum, before[0].checksum);
  EXPECT_TRUE(table_exists(other, "drift_a"));
  EXPECT_FALSE(table_exists(other, "drift_b"));
  EXPECT_FALSE(table_exists(other, "drift_c"));

  // Putting the file back lets the run continue with 0002.
  write_file(dir / "0001_x.sql", original);
  migrate_options quick;
  quick.lock_wait = std::chrono::seconds(5);
  auto fixed = other.migrate_dir(dir, "app", quick);
  ASSERT_EQ(fixed.applied.size(), 1u);
  EXPECT_EQ(fixed.applied[0].version, 2);
  EXPECT_EQ(fixed.already_applied, 1u);
  EXPECT_TRUE(table_exists(other, "drift_c"));
}

// MySQL 8.0's dialect runs a user's mysql/ subfolder when the folder has no mysql8/ one: the
// same server family, and most users write one folder for it.
TEST_P(FoundationConformance, MySQL8UsesTheMySQLSubfolderWhenItHasNoneOfItsOwn) {
  if (kind() != dialect::mysql8) GTEST_SKIP() << "the family fallback is MySQL 8.0's";
  auto db = dblock::open(fresh_database());
  (void)db.migrate();
  const auto dir = temp_path() / "family";
  write_file(dir / "0001_wrong.sql", "THIS IS NOT SQL;\n");
  write_file(dir / "mysql" / "0001_items.sql", "CREATE TABLE app_items (id INTEGER PRIMARY KEY);\n");
  auto res = db.migrate_dir(dir, "family");
  ASSERT_EQ(res.applied.size(), 1u);
  EXPECT_TRUE(table_exists(db, "app_items"));
}

TEST_P(FoundationConformance, UserFolderHasItsOwnScope) {
  const auto url = fresh_database();
  auto db = dblock::open(url);
  const auto n = db.migrate().applied.size();
  const auto dir = temp_path() / "app";
  // A dialect subfolder, when present, is used instead of the top level.
  write_file(dir / "0001_wrong.sql", "THIS IS NOT SQL;\n");
  const auto sub = dir / detail::dialect_dir(kind());
  write_file(sub / "0001_users.sql", "-- users\nCREATE TABLE app_users (id INTEGER PRIMARY KEY, name VARCHAR(50));\n");
  write_file(sub / "0002_orders.sql",
             "CREATE TABLE app_orders (id INTEGER PRIMARY KEY, note VARCHAR(50));\n"
             "INSERT INTO app_orders (id, note) VALUES (1, 'semi;colon');\n");

  auto res = db.migrate_dir(dir, "app");
  ASSERT_EQ(res.applied.size(), 2u);
  EXPECT_EQ(res.already_applied, 0u);
  EXPECT_EQ(res.applied[0].scope, "app");
  EXPECT_EQ(res.applied[0].version, 1);
  EXPECT_EQ(res.applied[0].name, "users");
  EXPECT_EQ(res.applied[1].version, 2);
  EXPECT_EQ(res.applied[1].name, "orders");
  EXPECT_TRUE(table_exists(db, "app_users"));
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM app_orders WHERE note = $1", {std::string("semi;colon")}), 1);

  EXPECT_EQ(db.applied_migrations("app").size(), 2u);
  EXPECT_EQ(db.applied_migrations("dblock").size(), n);  // dblock's own scope untouched

  // Another scope may reuse version numbers.
  const auto dir2 = temp_path() / "billing";
  write_file(dir2 / "0001_invoices.sql", "CREATE TABLE billing_invoices (id INTEGER);\n");
  auto billing = db.migrate_dir(dir2, "billing");
  ASSERT_EQ(billing.applied.size(), 1u);
  EXPECT_EQ(db.applied_migrations("billing").size(), 1u);

  auto again = db.migrate_dir(dir, "app");
  EXPECT_TRUE(again.applied.empty());
  EXPECT_EQ(again.already_applied, 2u);

  EXPECT_THROW((void)db.migrate_dir(dir, "dblock"), invalid_argument);  // reserved
  EXPECT_THROW((void)db.migrate_dir(dir, ""), invalid_argument);
  EXPECT_THROW((void)db.migrate_dir(temp_path() / "missing", "app"), invalid_argument);
}

TEST_P(FoundationConformance, FailingUserMigrationIsReportedAndNotRecorded) {
  const auto url = fresh_database();
  auto db = dblock::open(url);
  const auto dir = temp_path() / "fail";
  write_file(dir / "0001_ok.sql", "CREATE TABLE fail_ok (id INTEGER);\n");
  write_file(dir / "0002_bad.sql",
             "CREATE TABLE fail_first (id INTEGER);\n"
             "THIS IS NOT SQL;\n"
             "CREATE TABLE fail_third (id INTEGER);\n");
  write_file(dir / "0003_later.sql", "CREATE TABLE fail_later (id INTEGER);\n");
  try {
    (void)db.migrate_dir(dir, "app");
    ADD_FAILURE() << "a migration with invalid SQL succeeded";
  } catch (const migration_error& e) {
    EXPECT_TRUE(contains(e.what(), "0002_bad.sql")) << e.what();
    EXPECT_TRUE(contains(e.what(), "statement 2")) << e.what();
    EXPECT_TRUE(contains(e.what(), "THIS IS NOT SQL")) << e.what();
    EXPECT_TRUE(contains(e.what(), "not recorded")) << e.what();
  }

  auto other = dblock::open(url);
  std::vector<int> versions;
  for (const auto& m : other.applied_migrations("app")) versions.push_back(m.version);
  // The run stops at the failure everywhere: nothing after statement 2 of 0002 ran.
  EXPECT_FALSE(table_exists(other, "fail_third"));
  EXPECT_FALSE(table_exists(other, "fail_later"));
  switch (kind()) {
    case dialect::postgresql:
      // Each file is one transaction with its history row: 0001 stays, 0002 vanishes whole.
      EXPECT_EQ(versions, std::vector<int>{1});
      EXPECT_TRUE(table_exists(other, "fail_ok"));
      EXPECT_FALSE(table_exists(other, "fail_first"));
      break;
    case dialect::mysql8:
    case dialect::mysql:
      // DDL autocommits: 0001 stays, and 0002's first statement stays too (the documented
      // MySQL limitation), but 0002 is not recorded, so the user can fix it and re-run.
      EXPECT_EQ(versions, std::vector<int>{1});
      EXPECT_TRUE(table_exists(other, "fail_ok"));
      EXPECT_TRUE(table_exists(other, "fail_first"));
      break;
    case dialect::sqlite:
      // The whole run is one BEGIN IMMEDIATE transaction: all of it rolls back.
      EXPECT_TRUE(versions.empty());
      EXPECT_FALSE(table_exists(other, "fail_ok"));
      EXPECT_FALSE(table_exists(other, "fail_first"));
      break;
  }
}

TEST_P(FoundationConformance, DuplicateKeyIsUniqueViolation) {
  auto db = open_unmigrated();
  const auto t = unique_name("dup");
  raw_exec(db, "CREATE TABLE " + t + " (id INTEGER PRIMARY KEY, code VARCHAR(20) UNIQUE)");
  const std::string insert = "INSERT INTO " + t + " (id, code) VALUES ($1, $2)";
  raw_query(db, insert, {std::int64_t{1}, std::string("a")});

  auto expect_unique = [&](std::vector<detail::value> params, const char* what) {
    try {
      raw_query(db, insert, std::move(params));
      ADD_FAILURE() << what << ": duplicate accepted";
    } catch (const unique_violation& e) {
      EXPECT_EQ(e.kind(), error_kind::unique_violation);
      EXPECT_FALSE(e.retryable());
      switch (kind()) {
        case dialect::postgresql: EXPECT_EQ(e.sqlstate(), "23505") << what; break;
        case dialect::mysql8:
        case dialect::mysql: EXPECT_EQ(e.vendor_code(), 1062) << what; break;
        case dialect::sqlite:
          // 1555 SQLITE_CONSTRAINT_PRIMARYKEY, 2067 SQLITE_CONSTRAINT_UNIQUE
          EXPECT_TRUE(e.vendor_code() == 1555 || e.vendor_code() == 2067) << what << ": " << e.vendor_code();
          break;
      }
    } catch (const error& e) {
      ADD_FAILURE() << what << ": classified as " << to_string(e.kind()) << ": " << e.what();
    }
  };
  expect_unique({std::int64_t{1}, std::string("b")}, "primary key");
  expect_unique({std::int64_t{2}, std::string("a")}, "unique column");
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM " + t), 1);  // the connection is still usable
  raw_exec(db, "DROP TABLE " + t);
}

// SQLite is embedded: there is no server connection to kill. Its analogues of "the
// database is not reachable for you right now" are checked instead: a file that cannot
// be opened is a retryable connection_error, and a write while another connection holds
// the write lock fails after the busy timeout with a retryable lock_not_available
// (SQLITE_BUSY) that the same connection then succeeds in retrying.
TEST_P(FoundationConformance, KilledConnectionIsRetryableConnectionError) {
  if (!can_kill_connections()) {
    try {
      (void)dblock::open("sqlite://" + (temp_path() / "no-such-dir" / "x.db").string());
      ADD_FAILURE() << "opening a file in a missing folder succeeded";
    } catch (const connection_error& e) {
      EXPECT_EQ(e.kind(), error_kind::connection);
      EXPECT_TRUE(e.retryable());
    } catch (const error& e) {
      ADD_FAILURE() << "unopenable file classified as " << to_string(e.kind()) << ": " << e.what();
    }

    auto victim = open_unmigrated();
    auto holder = open_unmigrated();
    const auto t = unique_name("busy");
    raw_exec(victim, "CREATE TABLE " + t + " (id INTEGER PRIMARY KEY)");
    const std::string insert = "INSERT INTO " + t + " (id) VALUES ($1)";
    detail::backend_of(victim)->set_busy_timeout(std::chrono::milliseconds(50));
    detail::backend_of(holder)->in_transaction([&] {  // BEGIN IMMEDIATE: holder has the write lock
      raw_query(holder, insert, {std::int64_t{1}});
      const auto start = std::chrono::steady_clock::now();
      try {
        raw_query(victim, insert, {std::int64_t{2}});
        ADD_FAILURE() << "a write went through while another connection held the write lock";
      } catch (const lock_not_available& e) {
        EXPECT_EQ(e.kind(), error_kind::lock_not_available);
        EXPECT_TRUE(e.retryable());
        EXPECT_EQ(e.vendor_code() & 0xff, 5) << "SQLITE_BUSY family, got " << e.vendor_code();
      } catch (const error& e) {
        ADD_FAILURE() << "classified as " << to_string(e.kind()) << " (code " << e.vendor_code() << "): " << e.what();
      }
      const auto waited = std::chrono::steady_clock::now() - start;
      EXPECT_GE(waited, std::chrono::milliseconds(40)) << "failed before the busy timeout";
      EXPECT_LT(waited, std::chrono::seconds(5)) << "the 50 ms busy timeout was not applied";
    });
    EXPECT_FALSE(detail::backend_of(victim)->raw().in_transaction());
    EXPECT_NO_THROW(raw_query(victim, insert, {std::int64_t{2}})) << "the retry after the lock was released failed";
    EXPECT_EQ(query_int(holder, "SELECT COUNT(*) FROM " + t), 2);
    return;
  }
  auto victim = open_unmigrated();
  victim.ping();
  ASSERT_NO_FATAL_FAILURE(kill_connection(victim));
  try {
    victim.ping();
    ADD_FAILURE() << "ping on a killed connection returned normally";
  } catch (const connection_error& e) {
    EXPECT_EQ(e.kind(), error_kind::connection);
    EXPECT_TRUE(e.retryable());
  } catch (const error& e) {
    ADD_FAILURE() << "classified as " << to_string(e.kind()) << " (sqlstate '" << e.sqlstate() << "', code "
                  << e.vendor_code() << "): " << e.what();
  }
}

// THE COMMIT TRAP (CLIENT-NOTES): Connector/C++ 1.1.12's Connection::commit() returns
// normally on a dead connection and the rows are gone. Whatever the backend, a commit
// on a connection killed mid-transaction must throw, and the row must not be there.
// SQLite has no connection to kill; its COMMIT fails on a deferred foreign key left
// dangling (SQLITE_CONSTRAINT_FOREIGNKEY), and SQLite then keeps the transaction open:
// the commit must throw, the row must not be there, and the connection must not stay
// inside the failed transaction (holding the write lock every other writer waits for).
TEST_P(FoundationConformance, CommitOnKilledConnectionThrows) {
  if (!can_kill_connections()) {
    auto victim = open_unmigrated();
    const auto parent = unique_name("parent");
    const auto child = unique_name("child");
    raw_exec(victim, "CREATE TABLE " + parent + " (id INTEGER PRIMARY KEY)");
    raw_exec(victim, "CREATE TABLE " + child + " (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES " + parent +
                         " (id) DEFERRABLE INITIALLY DEFERRED)");
    const std::string insert_child = "INSERT INTO " + child + " (id, parent_id) VALUES ($1, $2)";
    bool committed = false;
    bool ran = false;
    try {
      detail::backend_of(victim)->in_transaction([&] {
        raw_query(victim, insert_child, {std::int64_t{1}, std::int64_t{42}});  // no parent 42: checked at COMMIT
        ran = true;
      });
      committed = true;
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), error_kind::database) << e.what();
      EXPECT_FALSE(e.retryable()) << e.what();
      EXPECT_EQ(e.vendor_code(), 787) << "SQLITE_CONSTRAINT_FOREIGNKEY expected: " << e.what();
    }
    EXPECT_TRUE(ran) << "the INSERT itself failed: the constraint was not deferred to COMMIT";
    EXPECT_FALSE(committed) << "a COMMIT that failed returned normally";
    EXPECT_FALSE(detail::backend_of(victim)->raw().in_transaction());

    // Another connection sees no row and can write at once: the failed transaction is gone.
    auto checker = open_unmigrated();
    detail::backend_of(checker)->set_busy_timeout(std::chrono::milliseconds(200));
    EXPECT_EQ(query_int(checker, "SELECT COUNT(*) FROM " + child), 0) << "the row of the failed commit is there";
    EXPECT_NO_THROW(raw_query(checker, "INSERT INTO " + parent + " (id) VALUES ($1)", {std::int64_t{42}}))
        << "the failed transaction still holds the write lock";
    // The victim's connection works for the next transaction.
    EXPECT_NO_THROW(detail::backend_of(victim)->in_transaction(
        [&] { raw_query(victim, insert_child, {std::int64_t{1}, std::int64_t{42}}); }));
    EXPECT_EQ(query_int(checker, "SELECT COUNT(*) FROM " + child), 1);
    return;
  }
  auto victim = open_unmigrated();
  const auto t = unique_name("trap");
  raw_exec(victim, "CREATE TABLE " + t + " (id INTEGER PRIMARY KEY)");
  bool committed = false;
  try {
    detail::backend_of(victim)->in_transaction([&] {
      raw_query(victim, "INSERT INTO " + t + " (id) VALUES ($1)", {std::int64_t{1}});
      kill_connection(victim);
    });
    committed = true;
  } catch (const commit_unknown& e) {
    EXPECT_FALSE(e.retryable()) << "a commit with an unknown outcome must never be retried blindly";
  } catch (const connection_error& e) {
    EXPECT_TRUE(e.retryable());
  } catch (const error& e) {
    ADD_FAILURE() << "classified as " << to_string(e.kind()) << ": " << e.what();
  }
  EXPECT_FALSE(committed) << "COMMIT on a killed connection returned normally";
  EXPECT_FALSE(detail::backend_of(victim)->raw().in_transaction());

  auto checker = open_unmigrated();
  EXPECT_EQ(query_int(checker, "SELECT COUNT(*) FROM " + t), 0) << "the row of the lost transaction is there";
  raw_exec(checker, "DROP TABLE " + t);
}

// The round-trip counter later primitives assert on (DESIGN principle 2). Observed:
//  - ping: 1 round trip. Exception: Connector/C++, and libpqxx on a connection dblock
//    opened, prepare each statement once per connection (COM_STMT_PREPARE / Parse is a
//    round trip), so their first ping costs 2.
//  - migrate() on an up-to-date database, same connection, uncontended: 4 on every
//    combination (sql/<dialect>/*.sql file names):
//      PostgreSQL: session_lock_try (pg_try_advisory_lock), history_present, history_list,
//                  session_lock_release
//      MariaDB:    session_lock_try (GET_LOCK), history_present, history_list, session_lock_release
//      SQLite:     BEGIN IMMEDIATE, history_present, history_list, COMMIT
//    (its statements are already prepared on Connector/C++ and libpqxx by the first migrate).
//  - the same on a new Connector/C++ or libpqxx connection: 8 (4 prepares + 4 executions).
TEST_P(FoundationConformance, RoundTripCounter) {
  const auto url = fresh_database();
  auto db = dblock::open(url);
  (void)db.migrate();
  const bool prepares = client() == client_library::mysql || client() == client_library::pqxx;
  EXPECT_EQ(round_trips_of(db, [&] { db.ping(); }), prepares ? 2u : 1u);
  EXPECT_EQ(round_trips_of(db, [&] { db.ping(); }), 1u);
  EXPECT_EQ(round_trips_of(db, [&] { db.ping(); }), 1u);
  // PostgreSQL: one more for the replication check after migrating (replication.hpp).
  const unsigned check = kind() == dialect::postgresql ? 1u : 0u;
  EXPECT_EQ(round_trips_of(db, [&] { (void)db.migrate(); }), 4u + check);
  EXPECT_EQ(round_trips_of(db, [&] { (void)db.migrate(); }), 4u + check);
  migrate_options unchecked;
  unchecked.replication = replication_policy::ignore;
  EXPECT_EQ(round_trips_of(db, [&] { (void)db.migrate(unchecked); }), 4u);

  auto fresh_conn = dblock::open(url);
  EXPECT_EQ(round_trips_of(fresh_conn, [&] { (void)fresh_conn.migrate(); }), (prepares ? 8u : 4u) + (prepares ? 2 : 1) * check);

  // A transaction is BEGIN + statements + COMMIT.
  EXPECT_EQ(round_trips_of(db, [&] { detail::backend_of(db)->in_transaction([&] { db.ping(); }); }), 3u);
}

// attach(): dblock works on the connection the user already holds.
TEST_P(FoundationConformance, AttachUsersOwnConnection) {
  const auto url = fresh_database();
  const auto u = parse_url(url);
  const auto n = dblock_migration_files(kind()).size();
  auto exercise = [&](database db) {
    EXPECT_EQ(db.kind(), kind());
    EXPECT_EQ(db.client(), client());
    EXPECT_TRUE(contains(db.describe(), "attached")) << db.describe();
    EXPECT_FALSE(detail::backend_of(db)->can_reopen());
    auto res = db.migrate();
    EXPECT_EQ(res.applied.size(), n);
    EXPECT_NO_THROW(db.ping());
    EXPECT_NO_THROW(db.require_schema());
    EXPECT_EQ(db.migrate().already_applied, n);
  };
  const std::string count_sql = "SELECT COUNT(*) FROM dblock_schema_migrations";

  if (client() == client_library::pqxx) {
    pqxx::connection c(url);
    exercise(attach(c));
    // The user's connection is still theirs and sees the schema.
    EXPECT_EQ(pqxx::nontransaction(c).exec1(count_sql)[0].as<long long>(), static_cast<long long>(n));
  } else if (client() == client_library::mysql) {
    EXPECT_THROW((void)attach(static_cast<sql::Connection*>(nullptr)), invalid_argument);
    sql::ConnectOptionsMap o;
    o["hostName"] = sql::SQLString("tcp://" + u.host + ":" + std::to_string(u.port.value_or(3306)));
    o["userName"] = sql::SQLString(u.user);
    o["password"] = sql::SQLString(u.password.value_or(""));
    o["schema"] = sql::SQLString(u.database);
    std::unique_ptr<sql::Connection> c(get_driver_instance()->connect(o));
    exercise(kind() == dialect::mysql8 ? attach(c.get(), kind()) : attach(c.get()));
    std::unique_ptr<sql::Statement> st(c->createStatement());
    std::unique_ptr<sql::ResultSet> rs(st->executeQuery(count_sql));
    ASSERT_TRUE(rs->next());
    EXPECT_EQ(rs->getInt64(1), static_cast<std::int64_t>(n));
  } else {
    std::unique_ptr<soci::session> s;
    auto q = [](const std::string& v) { return "'" + v + "'"; };  // test values have no quotes
    switch (kind()) {
      case dialect::sqlite: s = std::make_unique<soci::session>(soci::sqlite3, "db=" + u.database); break;
      case dialect::postgresql:
        s = std::make_unique<soci::session>(soci::postgresql, "dbname=" + q(u.database) + " host=" + q(u.host) +
                                                                  " port=" + std::to_string(u.port.value_or(5432)) +
                                                                  " user=" + q(u.user) +
                                                                  " password=" + q(u.password.value_or("")));
        break;
      case dialect::mysql8:
      case dialect::mysql:
        s = std::make_unique<soci::session>(soci::mysql, "db=" + q(u.database) + " host=" + q(u.host) +
                                                             " port=" + std::to_string(u.port.value_or(3306)) +
                                                             " user=" + q(u.user) +
                                                             " password=" + q(u.password.value_or("")));
        break;
    }
    exercise(kind() == dialect::mysql8 ? attach(*s, kind()) : attach(*s));
    long long count = 0;
    *s << count_sql, soci::into(count);
    EXPECT_EQ(count, static_cast<long long>(n));
  }
}

// Eight `dblock migrate` processes started at the same instant on a fresh database:
// all exit 0, and every migration is applied by exactly one of them.
TEST_P(FoundationConformance, EightConcurrentMigrateProcesses) {
  const auto url = fresh_database();
  const auto files = dblock_migration_files(kind());
  constexpr int processes = 8;
  std::vector<child> kids;
  {
    start_barrier gate;
    for (int i = 0; i < processes; ++i) {
      process_options o;
      o.argv = {DBLOCK_BINARY, "migrate"};
      o.env["DBLOCK_URL"] = url;  // not on the command line: it has the password
      o.cwd = temp_path();
      kids.push_back(start_process(o, &gate));
    }
    gate.open();
  }
  std::map<std::string, int> applied_by;  // migration file -> processes that applied it
  for (int i = 0; i < processes; ++i) {
    auto r = kids[static_cast<std::size_t>(i)].wait();
    EXPECT_EQ(r.exit_code, 0) << "process " << i << " stderr: " << scrubbed(r.err);
    EXPECT_TRUE(r.err.empty()) << "process " << i << " stderr: " << scrubbed(r.err);
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with("applied dblock ")) ++applied_by[line.substr(15)];
  }
  for (const auto& f : files) EXPECT_EQ(applied_by[f], 1) << f << " applied by " << applied_by[f] << " processes";
  EXPECT_EQ(applied_by.size(), files.size());

  auto db = dblock::open(url);
  expect_full_history(db);
  EXPECT_NO_THROW(db.require_schema());
}

DBLOCK_CONFORMANCE_SUITE(FoundationConformance);

// SQLite answers the WAL switch of a new connection (sql/sqlite/connect.sql) with an
// immediate SQLITE_BUSY, without calling the busy handler, while another connection
// writes to a file still in rollback-journal mode: the race of several processes opening
// one new file. Opening must wait for the writer (bounded by connect_timeout), not fail.
TEST(SqliteOpen, WalSwitchWaitsForAnotherWriterUpToTheConnectTimeout) {
  temp_dir dir("dblock-wal");
  const std::string path = (dir / "busy.db").string();
  namespace sq = sqlite_api;
  sq::sqlite3* writer = nullptr;
  ASSERT_EQ(sq::sqlite3_open(path.c_str(), &writer), SQLITE_OK);
  std::unique_ptr<sq::sqlite3, decltype(&sq::sqlite3_close)> guard(writer, &sq::sqlite3_close);
  ASSERT_EQ(sq::sqlite3_exec(writer, "CREATE TABLE t (x INTEGER); BEGIN IMMEDIATE; INSERT INTO t VALUES (1);", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);

  open_options quick;
  quick.connect_timeout = std::chrono::seconds(1);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW((void)open("sqlite://" + path, quick), lock_not_available);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(900)) << "gave up at once instead of waiting for the writer";
  EXPECT_LT(waited, std::chrono::seconds(10)) << "ignored connect_timeout";

  // Once the writer is done, the same open succeeds and can migrate.
  ASSERT_EQ(sq::sqlite3_exec(writer, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  auto db = open("sqlite://" + path, quick);
  EXPECT_FALSE(db.migrate().applied.empty());
  auto& drv = detail::backend_of(db)->raw();
  auto rows = drv.run(detail::rewrite_placeholders("count", "SELECT COUNT(*) FROM t", drv.style()), {}).rows;
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], std::optional<std::string>("1"));
}

// The SOCI driver keeps SQLite statements prepared per connection it opened
// (docs/architecture.md, "The SOCI driver"). A reused statement must take fresh bindings
// (a NULL after a text, all 64 bits of an integer), follow schema changes made on the same
// connection, never block DDL, and be re-prepared after it failed.
TEST(SqliteStatementCache, ReusedStatementsRebindFollowSchemaChangesAndRecoverAfterFailure) {
  temp_dir dir("dblock-stcache");
  auto db = open("sqlite://" + (dir / "cache.db").string());
  auto& drv = detail::backend_of(db)->raw();
  auto st = [&](const char* name, const char* sql) { return detail::rewrite_placeholders(name, sql, drv.style()); };
  const auto ins = st("ins", "INSERT INTO t (k, n, s) VALUES ($1, $2, $3)");
  const auto sel = st("sel", "SELECT * FROM t WHERE k = $1");
  using detail::value;
  drv.run_script("CREATE TABLE t (k INTEGER PRIMARY KEY, n INTEGER, s TEXT)");

  const std::int64_t big = std::int64_t{1} << 40;  // needs more than 32 bits
  const std::vector<value> rows[] = {{std::int64_t{1}, big, std::string("one")},
                                     {std::int64_t{2}, nullptr, nullptr},
                                     {std::int64_t{3}, std::int64_t{-7}, std::string("it's")}};
  for (const auto& r : rows) EXPECT_EQ(drv.run(ins, r).affected, 1);
  auto get = [&](std::int64_t k) {
    auto res = drv.run(sel, std::vector<value>{k}).rows;
    return res.empty() ? std::vector<detail::cell>{} : res.at(0);
  };
  using C = std::vector<detail::cell>;
  EXPECT_EQ(get(1), (C{"1", std::to_string(big), "one"}));
  EXPECT_EQ(get(2), (C{"2", std::nullopt, std::nullopt}));
  EXPECT_EQ(get(3), (C{"3", "-7", "it's"}));
  EXPECT_EQ(get(4), C{});

  // A schema change on this connection: the cached SELECT * sees the new column.
  drv.run_script("ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'x'");
  EXPECT_EQ(get(3), (C{"3", "-7", "it's", "x"}));

  // DDL is not blocked by the cached (reset) statements; the SELECT now fails,
  // classified as usual, and works again once the table is back.
  drv.run_script("DROP TABLE t");
  EXPECT_THROW((void)get(1), database_error);
  EXPECT_THROW((void)drv.run(ins, rows[0]), database_error);
  drv.run_script("CREATE TABLE t (k INTEGER PRIMARY KEY, n INTEGER, s TEXT)");
  EXPECT_EQ(drv.run(ins, rows[0]).affected, 1);
  EXPECT_THROW((void)drv.run(ins, rows[0]), unique_violation);  // a constraint code, as before
  EXPECT_EQ(get(1), (C{"1", std::to_string(big), "one"}));
}

// SQLITE_BUSY from a cached statement is lock_not_available, every time, and the
// statement works once the other writer is gone; round trips are counted as before.
TEST(SqliteStatementCache, BusyIsLockNotAvailableAndTheStatementRecovers) {
  temp_dir dir("dblock-stcache");
  const std::string path = (dir / "busy.db").string();
  auto db = open("sqlite://" + path);
  db.migrate();
  detail::backend_of(db)->set_busy_timeout(std::chrono::milliseconds(0));
  auto& drv = detail::backend_of(db)->raw();
  const auto& acq = detail::get_statement(dialect::sqlite, drv.style(), "lock_acquire");
  const std::vector<detail::value> p{std::string("busy"), std::string("me"), std::int64_t{60000}, std::string("h"),
                                    std::int64_t{0}, std::numeric_limits<std::int64_t>::max()};
  auto holds = [&] {
    auto r = drv.run(acq, p);
    return r.rows.size() == 1 ? r.rows[0][2] : std::nullopt;
  };
  ASSERT_EQ(holds(), std::optional<std::string>("1"));  // prepared and cached now

  namespace sq = sqlite_api;
  sq::sqlite3* writer = nullptr;
  ASSERT_EQ(sq::sqlite3_open(path.c_str(), &writer), SQLITE_OK);
  std::unique_ptr<sq::sqlite3, decltype(&sq::sqlite3_close)> guard(writer, &sq::sqlite3_close);
  ASSERT_EQ(sq::sqlite3_exec(writer, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  for (int i = 0; i < 3; ++i) {
    const auto before = drv.round_trips();
    EXPECT_THROW((void)drv.run(acq, p), lock_not_available) << "attempt " << i;
    EXPECT_EQ(drv.round_trips(), before + 1);
  }
  ASSERT_EQ(sq::sqlite3_exec(writer, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_EQ(holds(), std::optional<std::string>("2"));  // re-entry by the same owner
  EXPECT_EQ(holds(), std::optional<std::string>("3"));
}

// On SQLite a replay, a mismatch and an attempt in progress are answered by the read before
// the claim (idem_peek.sql): while another connection holds the database's write lock they
// still answer at once (a write would fail with SQLITE_BUSY: no busy wait here), and they
// change nothing (the other connection's PRAGMA data_version stays put).
TEST(SqliteStatementCache, IdempotencyAnswersThatChangeNothingTakeNoWriteLock) {
  temp_dir dir("dblock-stcache");
  const std::string path = (dir / "peek.db").string();
  auto db = open("sqlite://" + path);
  db.migrate();
  detail::backend_of(db)->set_busy_timeout(std::chrono::milliseconds(0));
  idempotency_store store(db);
  const auto fp = fingerprint("request");
  auto done = store.begin("peek", "done", fp);
  ASSERT_TRUE(done.started());
  ASSERT_EQ(store.complete(done.attempt, {201, std::string("body\0bytes", 10)}), finish_status::recorded);
  auto open_attempt = store.begin("peek", "open", fp);
  ASSERT_TRUE(open_attempt.started());

  namespace sq = sqlite_api;
  sq::sqlite3* writer = nullptr;
  ASSERT_EQ(sq::sqlite3_open(path.c_str(), &writer), SQLITE_OK);
  std::unique_ptr<sq::sqlite3, decltype(&sq::sqlite3_close)> guard(writer, &sq::sqlite3_close);
  auto data_version = [&] {
    sq::sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sq::sqlite3_prepare_v2(writer, "PRAGMA data_version", -1, &st, nullptr), SQLITE_OK);
    EXPECT_EQ(sq::sqlite3_step(st), SQLITE_ROW);
    const auto v = sq::sqlite3_column_int64(st, 0);
    sq::sqlite3_finalize(st);
    return v;
  };
  const auto version = data_version();
  ASSERT_EQ(sq::sqlite3_exec(writer, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  for (int i = 0; i < 3; ++i) {
    const auto replay = store.begin("peek", "done", fp);
    EXPECT_EQ(replay.outcome, idempotency_outcome::replay);
    EXPECT_EQ(replay.response.code, 201);
    EXPECT_EQ(replay.response.body, std::string("body\0bytes", 10));
    EXPECT_EQ(replay.attempt.number, 1);
    const auto other = store.begin("peek", "done", fingerprint("another request"));
    EXPECT_EQ(other.outcome, idempotency_outcome::mismatch);
    EXPECT_EQ(other.response.code, 0);
    EXPECT_TRUE(other.response.body.empty());
    const auto busy = store.begin("peek", "open", fp);
    EXPECT_EQ(busy.outcome, idempotency_outcome::in_progress);
    EXPECT_GT(busy.retry_after.count(), 0);
  }
  // A new key has to write: refused at once while the other connection writes.
  EXPECT_THROW((void)store.begin("peek", "new", fp), lock_not_available);
  ASSERT_EQ(sq::sqlite3_exec(writer, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_EQ(data_version(), version);  // no other connection committed anything meanwhile
  EXPECT_TRUE(store.begin("peek", "new", fp).started());
}

// The cache is finalized before the connection closes: sqlite3_close refuses while
// statements remain, and a connection left open keeps its WAL file. After the last
// connection closes cleanly SQLite checkpoints and removes the -wal file.
TEST(SqliteStatementCache, ConnectionsCloseWithTheCacheFinalized) {
  temp_dir dir("dblock-stcache");
  const std::string path = (dir / "close.db").string();
  {
    auto db = open("sqlite://" + path);
    db.migrate();
    dblock::session s(db);
    for (int i = 0; i < 3; ++i) {
      auto l = s.try_acquire("close");
      ASSERT_TRUE(l);
      l->release();
    }
    dblock::idempotency_store store(db);
    EXPECT_TRUE(store.begin("scope", "key", std::string(64, 'a')).started());
    ASSERT_TRUE(std::filesystem::exists(path + "-wal"));
  }
  EXPECT_FALSE(std::filesystem::exists(path + "-wal")) << "a connection was left open";
}

// An attached SQLite session (the caller's soci::session) is not cached - its owner may close
// or reconnect it at any time - but runs through the same C-API path, prepared for each run:
// all 64 bits of INTEGER columns come back (SOCI 4.0's own row reads them as a 32-bit int,
// which truncated e.g. created_at_ms), and no prepared statement is left on the caller's connection.
TEST(SqliteStatementCache, AttachedSessionsReadAll64BitsAndKeepNoStatement) {
  temp_dir dir("dblock-stcache");
  const std::string path = (dir / "attached.db").string();
  {
    soci::session sess(soci::sqlite3, "db=" + path);
    auto db = dblock::attach(sess);
    db.migrate();
    dblock::idempotency_store store(db);
    ASSERT_TRUE(store.begin("scope", "key", std::string(64, 'a')).started());
    auto rec = store.get("scope", "key");
    ASSERT_TRUE(rec);
    EXPECT_GT(rec->created_at_ms, std::int64_t{1} << 40) << "created_at_ms was truncated";
    auto& drv = detail::backend_of(db)->raw();
    const std::int64_t big = (std::int64_t{1} << 40) + 7;
    drv.run_script("CREATE TABLE t (n INTEGER)");
    using detail::value;
    drv.run(detail::rewrite_placeholders("ins", "INSERT INTO t (n) VALUES ($1)", drv.style()),
            std::vector<value>{big});
    auto rows = drv.run(detail::rewrite_placeholders("sel", "SELECT n FROM t", drv.style()), {}).rows;
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0][0], std::optional<std::string>(std::to_string(big)));
    auto* conn = static_cast<soci::sqlite3_session_backend*>(sess.get_backend())->conn_;
    EXPECT_EQ(sqlite_api::sqlite3_next_stmt(conn, nullptr), nullptr)
        << "a statement outlived its run on the caller's session";
  }
}

}  // namespace
}  // namespace dblock::test
