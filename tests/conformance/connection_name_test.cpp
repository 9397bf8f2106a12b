// tests/conformance/connection_name_test.cpp — every connection dblock opens names itself
// (DESIGN, principle 7, "Connections are scarce"): the server sees application_name
// (PostgreSQL) or the connection attribute program_name (MariaDB, Connector/C++), by
// default "dblock <host>:<pid>", else open_options::application_name; a name in the
// URL wins. SOCI's MySQL backend sends no connection attributes; SQLite has no server.
#include <unistd.h>

#include "conformance/fixture.hpp"
#include "support/servers.hpp"

namespace dblock::test {
namespace {

class ConnectionNameConformance : public conformance {
 protected:
  // The name this connection's server session carries, or nullopt when it has none.
  static std::optional<std::string> name_on_server(database& db) {
    auto r = db.kind() == dialect::postgresql
                 ? raw_query(db, "SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()")
                 : raw_query(db,
                             "SELECT ATTR_VALUE FROM performance_schema.session_connect_attrs "
                             "WHERE PROCESSLIST_ID = CONNECTION_ID() AND ATTR_NAME = 'program_name'");
    if (r.rows.empty() || !r.rows[0][0]) return std::nullopt;
    return *r.rows[0][0];
  }
  std::string with_url_option(const std::string& key, const std::string& value) const {
    return url() + (url().find('?') == std::string::npos ? "?" : "&") + key + "=" + value;
  }
};

TEST_P(ConnectionNameConformance, TheServerSeesTheName) {
  const std::string default_name = detail::connection_name({});
  ASSERT_EQ(default_name.rfind("dblock ", 0), 0u) << default_name;
  open_options named;
  named.application_name = "conformance-" + std::to_string(::getpid());

  if (kind() == dialect::sqlite) {
    // Nothing to name: no server, no connection. The option is accepted all the same.
    auto db = dblock::open(url(), named);
    EXPECT_NO_THROW(db.ping());
    EXPECT_EQ(db.describe().find(named.application_name), std::string::npos);
    return;
  }

  auto db = open_unmigrated();
  if (mysql_family() && query_int(db, "SELECT @@performance_schema") == 0) {
    // session_connect_attrs lives in performance_schema (scripts/servers turns it on).
    if (require_all()) FAIL() << "performance_schema is off on the test MariaDB: connection attributes are invisible";
    GTEST_SKIP() << "performance_schema is off: connection attributes are invisible";
  }
  if (mysql_family() && client() == client_library::soci) {
    // SOCI 4.0's MySQL backend has no option for connection attributes (documented).
    EXPECT_EQ(name_on_server(db), std::nullopt);
    return;
  }
  EXPECT_EQ(name_on_server(db), default_name);
  auto db2 = dblock::open(url(), named);
  EXPECT_EQ(name_on_server(db2), named.application_name);

  // The connections a session opens for itself are named too (here: the watchdog's).
  if (kind() == dialect::postgresql) {
    db2.migrate();
    session s(db2);
    auto l = s.try_acquire(unique_name("named"));
    EXPECT_GE(query_int(db, "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = $1",
                        {named.application_name}),
              2);
    // A name in the URL wins over the option.
    auto db3 = dblock::open(with_url_option("application_name", "from_url"), named);
    EXPECT_EQ(name_on_server(db3), "from_url");
  }
}

DBLOCK_CONFORMANCE_SUITE(ConnectionNameConformance);

}  // namespace
}  // namespace dblock::test
