// tests/unit/url_test.cpp — connection URL parsing and redaction (dblock/url.hpp).
// Every refusal is an invalid_argument naming the bad part, and no message ever
// contains the password.
#include <gtest/gtest.h>
#include <unistd.h>

#include "cli/args.hpp"
#include "core/backend.hpp"
#include "dblock/errors.hpp"
#include "dblock/open.hpp"
#include "dblock/url.hpp"

namespace dblock {
namespace {

constexpr const char* secret = "s3cr3t-PW";

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

// parse_url(url) must throw invalid_argument whose message contains every `names` part
// and never `secret`. Returns the message.
std::string refused(const std::string& url, std::initializer_list<std::string_view> names) {
  try {
    (void)parse_url(url);
  } catch (const invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.kind(), error_kind::invalid_argument);
    EXPECT_FALSE(e.retryable());
    EXPECT_FALSE(contains(msg, secret)) << "the message shows the password (URL #" << url.size() << ")";
    if (!contains(msg, secret)) {
      for (auto n : names) EXPECT_TRUE(contains(msg, n)) << "message '" << msg << "' does not name '" << n << "'";
    }
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type";
    return {};
  }
  ADD_FAILURE() << "accepted a bad URL, expected a message naming " << *names.begin();
  return {};
}

TEST(Url, PostgresqlAllParts) {
  auto u = parse_url("postgresql://alice:s3cr3t-PW@db.example.com:6543/orders?sslmode=require&connect_timeout=5");
  EXPECT_EQ(u.scheme, "postgresql");
  EXPECT_EQ(u.kind, dialect::postgresql);
  EXPECT_EQ(u.client, client_library::pqxx);
  EXPECT_EQ(u.user, "alice");
  ASSERT_TRUE(u.password);
  EXPECT_EQ(*u.password, secret);
  EXPECT_EQ(u.host, "db.example.com");
  ASSERT_TRUE(u.port);
  EXPECT_EQ(*u.port, 6543);
  EXPECT_EQ(u.database, "orders");
  ASSERT_EQ(u.options.size(), 2u);
  EXPECT_EQ(u.options.at("sslmode"), "require");
  EXPECT_EQ(u.options.at("connect_timeout"), "5");
}

TEST(Url, EverySchemeMapsToItsBackend) {
  struct row {
    const char* url;
    dialect kind;
    client_library client;
    const char* scheme;
  };
  const row rows[] = {
      {"postgresql://h/db", dialect::postgresql, client_library::pqxx, "postgresql"},
      {"postgres://h/db", dialect::postgresql, client_library::pqxx, "postgres"},
      {"mysql://h/db", dialect::mysql, client_library::mysql, "mysql"},
      {"mariadb://h/db", dialect::mysql, client_library::mysql, "mariadb"},
      {"sqlite:dblock.db", dialect::sqlite, client_library::soci, "sqlite"},
      {"soci+postgresql://h/db", dialect::postgresql, client_library::soci, "soci+postgresql"},
      {"soci+postgres://h/db", dialect::postgresql, client_library::soci, "soci+postgres"},
      {"soci+mysql://h/db", dialect::mysql, client_library::soci, "soci+mysql"},
      {"soci+mariadb://h/db", dialect::mysql, client_library::soci, "soci+mariadb"},
      {"soci+sqlite:x.db", dialect::sqlite, client_library::soci, "soci+sqlite"},
      {"PostgreSQL://h/db", dialect::postgresql, client_library::pqxx, "postgresql"},  // scheme is case-insensitive
      {"SQLITE:x.db", dialect::sqlite, client_library::soci, "sqlite"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.url);
    auto u = parse_url(r.url);
    EXPECT_EQ(u.kind, r.kind);
    EXPECT_EQ(u.client, r.client);
    EXPECT_EQ(u.scheme, r.scheme);
    EXPECT_EQ(u.original, r.url);
  }
}

TEST(Url, ServerUrlDefaultsAndOptionalParts) {
  auto u = parse_url("mysql://h/db");
  EXPECT_EQ(u.host, "h");
  EXPECT_FALSE(u.port);
  EXPECT_TRUE(u.user.empty());
  EXPECT_FALSE(u.password);
  EXPECT_EQ(u.database, "db");

  auto v = parse_url("postgresql://bob@h:1/db");  // user without password; port 1 is valid
  EXPECT_EQ(v.user, "bob");
  EXPECT_FALSE(v.password);
  EXPECT_EQ(*v.port, 1);

  auto w = parse_url("postgresql://bob:@h:65535/db");  // empty password is a password
  ASSERT_TRUE(w.password);
  EXPECT_EQ(*w.password, "");
  EXPECT_EQ(*w.port, 65535);

  // libpq allows an empty host (unix socket); the database is still required.
  auto x = parse_url("postgresql:///db");
  EXPECT_EQ(x.host, "");
  EXPECT_EQ(x.database, "db");
}

TEST(Url, Ipv6Hosts) {
  auto u = parse_url("postgresql://u:s3cr3t-PW@[::1]:5433/db");
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(*u.port, 5433);
  EXPECT_EQ(u.database, "db");

  auto v = parse_url("mysql://[2001:db8::17]/shop");
  EXPECT_EQ(v.host, "2001:db8::17");
  EXPECT_FALSE(v.port);

  refused("postgresql://u:s3cr3t-PW@[::1/db", {"'['"});
  refused("postgresql://u:s3cr3t-PW@[::1]x/db", {"']'"});
  refused("postgresql://u:s3cr3t-PW@[::1]:99999/db", {"port", "99999"});
}

TEST(Url, PercentDecoding) {
  auto u = parse_url("postgresql://al%40ice:p%3Aw%40rd%2F%25@h/my%20db?application_name=a%26b");
  EXPECT_EQ(u.user, "al@ice");
  EXPECT_EQ(*u.password, "p:w@rd/%");
  EXPECT_EQ(u.database, "my db");
  EXPECT_EQ(u.options.at("application_name"), "a&b");
  // A password with '@' left unencoded still splits at the last '@'.
  auto v = parse_url("postgresql://u:p@ss@h/db");
  EXPECT_EQ(*v.password, "p@ss");
  EXPECT_EQ(v.host, "h");

  refused("postgresql://u:s3cr3t-PW%zz@h/db", {"percent-encoding", "password"});
  refused("postgresql://u:s3cr3t-PW%4@h/db", {"percent-encoding", "password"});
  refused("postgresql://u%g1:s3cr3t-PW@h/db", {"percent-encoding", "user"});
  refused("postgresql://u:s3cr3t-PW@h/d%b", {"percent-encoding", "database"});
}

TEST(Url, SqliteForms) {
  auto rel = parse_url("sqlite:data/dblock.db");
  EXPECT_EQ(rel.database, "data/dblock.db");
  EXPECT_EQ(rel.kind, dialect::sqlite);
  auto abs = parse_url("sqlite:///var/lib/app/dblock.db");
  EXPECT_EQ(abs.database, "/var/lib/app/dblock.db");
  auto opts = parse_url("sqlite:///tmp/x.db?timeout=5");
  EXPECT_EQ(opts.database, "/tmp/x.db");
  EXPECT_EQ(opts.options.at("timeout"), "5");
  auto spaced = parse_url("sqlite:my%20file.db");
  EXPECT_EQ(spaced.database, "my file.db");
  EXPECT_EQ(parse_url(dblock::cli::default_url).database, "dblock.db");

  refused("sqlite:", {"missing database file path"});
  refused("sqlite:///", {"missing database file path"});
  refused("sqlite://host/path.db", {"sqlite:relative/path.db", "sqlite:///absolute/path.db"});
  refused("sqlite://", {"sqlite:///absolute/path.db"});
  refused("sqlite:a%zz.db", {"percent-encoding", "SQLite path"});
}

TEST(Url, UnknownOrMissingScheme) {
  auto msg = refused("ftp://u:s3cr3t-PW@h/db", {"unknown scheme", "'ftp'"});
  EXPECT_TRUE(contains(msg, "postgresql")) << "lists the known schemes: " << msg;
  refused("soci+oracle://u:s3cr3t-PW@h/db", {"'soci+oracle'"});
  refused("", {"empty"});
  refused("u:s3cr3t-PW@h/db", {"unknown scheme 'u'"});
  refused("://h/db", {"missing scheme"});
  refused("just-text", {"missing scheme"});
}

TEST(Url, BadPorts) {
  for (const char* port : {"99999", "0", "65536", "-1", "abc", "54x", "1.5"}) {
    SCOPED_TRACE(port);
    refused(std::string("postgresql://u:s3cr3t-PW@h:") + port + "/db", {"bad port", std::string("'") + port + "'"});
    refused(std::string("mysql://u:s3cr3t-PW@h:") + port + "/db", {"bad port"});
  }
  refused("postgresql://u:s3cr3t-PW@h:/db", {"bad port ''"});
}

TEST(Url, MissingOrBadDatabaseAndHost) {
  refused("postgresql://u:s3cr3t-PW@h:5432", {"missing database name"});
  refused("postgresql://u:s3cr3t-PW@h:5432/", {"missing database name"});
  refused("mysql://u:s3cr3t-PW@h/", {"missing database name"});
  refused("soci+mysql://u:s3cr3t-PW@h", {"missing database name"});
  refused("mysql://u:s3cr3t-PW@:3306/db", {"missing host"});
  refused("postgresql://u:s3cr3t-PW@h/a/b", {"'a/b'", "'/'"});
  refused("postgresql:h/db", {"'postgresql://'"});
  refused("mysql:/u:s3cr3t-PW@h/db", {"'mysql://'"});
  refused("postgresql://u:s3cr3t-PW@h/db?novalue", {"'novalue'", "key=value"});
  refused("postgresql://u:s3cr3t-PW@h/db?=x", {"key=value"});
}

// A password with an unencoded '/' or '?' (common in generated passwords) makes the rest
// of the URL look like a host, port and path. The refusal must not echo any of it.
TEST(Url, UnencodedPasswordCharactersAreNotEchoed) {
  for (const char* url : {"postgresql://app:s3cr3t-PW/xyz@db.example.com/prod",
                          "postgresql://app:abc/s3cr3t-PW@db.example.com/prod",
                          "mysql://app:s3cr3t-PW/x/y@db:3306/prod",
                          "postgresql://app:s3cr3t-PW?xyz@db.example.com/prod",
                          "postgresql://app:abc?s3cr3t-PW@db.example.com/prod"}) {
    SCOPED_TRACE(std::string(url).substr(0, 16));
    try {
      (void)parse_url(url);
      ADD_FAILURE() << "accepted";
    } catch (const invalid_argument& e) {
      std::string m = e.what();
      EXPECT_FALSE(contains(m, "s3cr3t") || contains(m, "abc") || contains(m, "xyz") || contains(m, "PW"))
          << "a piece of the password is in the message";
      EXPECT_TRUE(contains(m, "percent-encode")) << m;
    }
  }
  // '@' legitimately after the host: in an option value.
  auto u = parse_url("postgresql://h/db?application_name=me@host");
  EXPECT_EQ(u.options.at("application_name"), "me@host");
}

TEST(Url, OpenRefusesBadUrlsBeforeConnecting) {
  // dblock::open parses first: a bad URL is invalid_argument, never a connection attempt.
  EXPECT_THROW((void)open("ftp://u:s3cr3t-PW@h/db"), invalid_argument);
  EXPECT_THROW((void)open("postgresql://u:s3cr3t-PW@h:0/db"), invalid_argument);
  EXPECT_THROW((void)open("mysql://u:s3cr3t-PW@h:3306/"), invalid_argument);
  EXPECT_THROW((void)open("sqlite:"), invalid_argument);
}

TEST(Redaction, RedactedHidesThePasswordOnly) {
  EXPECT_EQ(parse_url("postgresql://u:s3cr3t-PW@h:5432/db").redacted(), "postgresql://u:***@h:5432/db");
  EXPECT_EQ(parse_url("soci+mysql://u:s3cr3t-PW@h/db?x=1").redacted(), "soci+mysql://u:***@h/db?x=1");
  EXPECT_EQ(parse_url("postgresql://u:p@ss@h/db").redacted(), "postgresql://u:***@h/db");
  EXPECT_EQ(parse_url("postgresql://u:p%40ss@h/db").redacted(), "postgresql://u:***@h/db");
  EXPECT_EQ(parse_url("postgresql://u:@h/db").redacted(), "postgresql://u:***@h/db");
  EXPECT_EQ(parse_url("postgresql://u@h/db").redacted(), "postgresql://u@h/db");
  EXPECT_EQ(parse_url("postgresql://h/db").redacted(), "postgresql://h/db");
  EXPECT_EQ(parse_url("sqlite:///tmp/a.db").redacted(), "sqlite:///tmp/a.db");
  EXPECT_EQ(parse_url("postgresql://u:s3cr3t-PW@[::1]:5/db").redacted(), "postgresql://u:***@[::1]:5/db");
}

TEST(Redaction, PasswordOptionIsHidden) {
  // libpq accepts ?password=...; it must not leak through describe() or messages.
  auto r = parse_url("postgresql://u@h/db?sslmode=require&password=s3cr3t-PW").redacted();
  EXPECT_FALSE(contains(r, secret)) << "password option not redacted";
  EXPECT_TRUE(contains(r, "sslmode=require")) << r;
  EXPECT_FALSE(contains(redact_url("postgresql://h/db?PASSWORD=s3cr3t-PW&x=1"), secret));
}

TEST(Redaction, RedactUrlIsBestEffortAndNeverThrows) {
  EXPECT_EQ(redact_url(""), "");
  EXPECT_EQ(redact_url("not a url"), "not a url");
  EXPECT_EQ(redact_url("mysql://u:s3cr3t-PW@h/db"), "mysql://u:***@h/db");
  EXPECT_EQ(redact_url("weird://u:s3cr3t-PW@h"), "weird://u:***@h");
  EXPECT_EQ(redact_url("x://u@h/db"), "x://u@h/db");
  EXPECT_TRUE(noexcept(redact_url("")));
}

TEST(Url, NamesOfEnums) {
  EXPECT_STREQ(to_string(dialect::postgresql), "postgresql");
  EXPECT_STREQ(to_string(dialect::mysql), "mysql");
  EXPECT_STREQ(to_string(dialect::sqlite), "sqlite");
  EXPECT_STREQ(to_string(client_library::pqxx), "pqxx");
  EXPECT_STREQ(to_string(client_library::mysql), "mysql");
  EXPECT_STREQ(to_string(client_library::soci), "soci");
}

TEST(Url, PoolerModeIsParsedAndNotAnOptionForLibpq) {
  EXPECT_EQ(parse_url("postgresql://u@h/db").pooler, pooler_mode::none);
  auto u = parse_url("postgresql://u@h/db?sslmode=disable&pooler=transaction");
  EXPECT_EQ(u.pooler, pooler_mode::transaction);
  EXPECT_EQ(u.options.count("pooler"), 0u);
  EXPECT_EQ(u.options.at("sslmode"), "disable");
  EXPECT_EQ(parse_url("soci+postgresql://u@h/db?pooler=transaction").pooler, pooler_mode::transaction);
  EXPECT_EQ(parse_url("postgresql://u@h/db?pooler=none").pooler, pooler_mode::none);
  refused("postgresql://u:s3cr3t-PW@h/db?pooler=session", {"pooler", "'session'", "transaction"});
  refused("mysql://u:s3cr3t-PW@h/db?pooler=transaction", {"pooler", "PostgreSQL"});
  refused("sqlite:x.db?pooler=transaction", {"pooler", "PostgreSQL"});
  EXPECT_EQ(detail::url_without_option("postgresql://u@h/db?pooler=transaction", "pooler"), "postgresql://u@h/db");
  EXPECT_EQ(detail::url_without_option("postgresql://u@h/db?a=1&pooler=transaction&b=2", "pooler"),
            "postgresql://u@h/db?a=1&b=2");
  EXPECT_EQ(detail::url_without_option("postgresql://u@h/db?poolers=1", "pooler"), "postgresql://u@h/db?poolers=1");
}

TEST(Url, DialectOptionPicksADialectOfTheMySQLFamily) {
  auto plain = parse_url("mysql://u@h/db");
  EXPECT_EQ(plain.kind, dialect::mysql);
  EXPECT_FALSE(plain.dialect_given);
  auto forced = parse_url("mysql://u@h/db?dialect=mysql8&x=1");
  EXPECT_EQ(forced.kind, dialect::mysql8);
  EXPECT_TRUE(forced.dialect_given);
  EXPECT_EQ(forced.options.count("dialect"), 0u);
  EXPECT_EQ(forced.options.at("x"), "1");
  EXPECT_EQ(parse_url("soci+mariadb://u@h/db?dialect=mysql8").kind, dialect::mysql8);
  auto back = parse_url("mysql://u@h/db?dialect=mysql");
  EXPECT_EQ(back.kind, dialect::mysql);
  EXPECT_TRUE(back.dialect_given);
  EXPECT_STREQ(to_string(dialect::mysql8), "mysql8");
  refused("mysql://u:s3cr3t-PW@h/db?dialect=oracle", {"dialect", "'oracle'", "mysql8"});
  refused("postgresql://u:s3cr3t-PW@h/db?dialect=mysql8", {"dialect", "MySQL"});
  refused("sqlite:x.db?dialect=sqlite", {"dialect", "MySQL"});
}

TEST(Url, ConnectionNameIsDblockHostPidAtMost63Bytes) {
  open_options o;
  auto name = detail::connection_name(o);
  EXPECT_EQ(name.rfind("dblock ", 0), 0u) << name;
  EXPECT_TRUE(name.ends_with(":" + std::to_string(::getpid())) || name.size() == 63) << name;
  EXPECT_LE(name.size(), 63u);
  o.application_name = "billing-worker";
  EXPECT_EQ(detail::connection_name(o), "billing-worker");
  o.application_name = std::string(62, 'a') + "\xc3\xa9";  // 'é' across the 63-byte limit: cut before it
  EXPECT_EQ(detail::connection_name(o), std::string(62, 'a'));
  EXPECT_EQ(detail::percent_encode("dblock h:1/é"), "dblock%20h%3A1%2F%C3%A9");
}

}  // namespace
}  // namespace dblock

namespace dblock {
namespace {

TEST(Url, MultiHostListsKeepOrderAndOptionalPorts) {
  auto u = parse_url("postgresql://u:s3cr3t-PW@h1:5433,h2,[::1]:5434/db?target_session_attrs=read-write");
  ASSERT_EQ(u.hosts.size(), 3u);
  EXPECT_EQ(u.hosts[0], (url_host{"h1", 5433}));
  EXPECT_EQ(u.hosts[1], (url_host{"h2", std::nullopt}));
  EXPECT_EQ(u.hosts[2], (url_host{"::1", 5434}));
  // host/port name the first host.
  EXPECT_EQ(u.host, "h1");
  EXPECT_EQ(*u.port, 5433);
  EXPECT_EQ(u.database, "db");
  EXPECT_EQ(u.options.at("target_session_attrs"), "read-write");

  auto m = parse_url("mysql://u:s3cr3t-PW@127.0.0.1:1,127.0.0.1/shop");
  ASSERT_EQ(m.hosts.size(), 2u);
  EXPECT_EQ(m.hosts[0], (url_host{"127.0.0.1", 1}));
  EXPECT_EQ(m.hosts[1], (url_host{"127.0.0.1", std::nullopt}));

  auto s = parse_url("soci+postgresql://u@[2001:db8::1],[2001:db8::2]:6432/db");
  ASSERT_EQ(s.hosts.size(), 2u);
  EXPECT_EQ(s.hosts[0].host, "2001:db8::1");
  EXPECT_EQ(*s.hosts[1].port, 6432);

  auto one = parse_url("postgresql://u@h:6543/db");
  ASSERT_EQ(one.hosts.size(), 1u);
  EXPECT_EQ(one.hosts[0], (url_host{"h", 6543}));
}

TEST(Url, MultiHostListsNameTheBadHost) {
  refused("postgresql://u:s3cr3t-PW@h1:5432,h2:x/db", {"bad port 'x'", "host 2", "'h2:x'"});
  refused("postgresql://u:s3cr3t-PW@h1:5432,,h3/db", {"empty host 2"});
  refused("mysql://u:s3cr3t-PW@h1,/db", {"empty host 2"});
  refused("mysql://u:s3cr3t-PW@:3306,h2/db", {"empty host 1", "':3306'"});
  refused("postgresql://u:s3cr3t-PW@h1,[::1/db", {"unterminated '['", "host 2"});
  refused("postgresql://u:s3cr3t-PW@h1,::1:5432/db", {"IPv6", "host 2"});
  refused("postgresql://u:s3cr3t-PW@h1,h2:0/db", {"bad port '0'", "'h2:0'"});
}

TEST(Redaction, MultiHostUrlsHideThePassword) {
  const std::string url = "postgresql://u:s3cr3t-PW@h1:1,h2:2/db?target_session_attrs=read-write";
  auto u = parse_url(url);
  EXPECT_FALSE(contains(u.redacted(), secret));
  EXPECT_TRUE(contains(u.redacted(), "h1:1,h2:2")) << u.redacted();
  EXPECT_FALSE(contains(redact_url("mysql://u:s3cr3t-PW@[::1]:1,h2/db"), secret));
}

}  // namespace
}  // namespace dblock
