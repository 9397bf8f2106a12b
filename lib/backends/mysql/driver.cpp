// lib/backends/mysql/driver.cpp — the MySQL Connector/C++ 1.1 driver (MySQL/MariaDB):
// server-side prepared statements cached per connection, transactions with explicit
// START TRANSACTION / COMMIT statements (Connection::commit() in 1.1.12 returns
// normally on a dead connection; a COMMIT statement throws), CLIENT_FOUND_ROWS so
// UPDATE counts matched rows, and the public open_mysql()/attach(sql::Connection*).
#include <cppconn/driver.h>
#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/resultset_metadata.h>
#include <cppconn/statement.h>

#include <cctype>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "backends/mysql/classify.hpp"
#include "core/backend.hpp"
#include "core/dialect.hpp"
#include "dblock/errors.hpp"
#include "dblock/mysql.hpp"

namespace dblock::detail::mysql_backend {
namespace {

// get_driver_instance() fills a static map without a lock: serialize it, once.
std::mutex& driver_mutex() {
  static std::mutex mu;
  return mu;
}
sql::Driver* the_driver() {
  std::lock_guard lock(driver_mutex());
  static sql::Driver* d = get_driver_instance();
  return d;
}

// True when the statement has a RETURNING clause (MariaDB INSERT/DELETE ... RETURNING):
// Connector/C++ 1.1 reports no result columns for it at prepare time, yet executeQuery()
// reads its rows. Quotes and comments are skipped.
bool has_returning(std::string_view sql) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'' || c == '"' || c == '`') {
      for (++i; i < sql.size() && sql[i] != c; ++i)
        if (sql[i] == '\\') ++i;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      while (i < sql.size() && sql[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      auto end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 1;
    } else if ((c == 'R' || c == 'r') && (i == 0 || !word(sql[i - 1])) && i + 9 <= sql.size() &&
               (i + 9 == sql.size() || !word(sql[i + 9]))) {
      std::string w(sql.substr(i, 9));
      for (auto& ch : w) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      if (w == "RETURNING") return true;
    }
  }
  return false;
}

// Each thread that talks to the client library registers itself once.
void ensure_thread_init() {
  struct registration {
    registration() { the_driver()->threadInit(); }
    ~registration() { the_driver()->threadEnd(); }
  };
  thread_local registration r;
}

class mysql_driver final : public driver {
 public:
  mysql_driver(std::unique_ptr<sql::Connection> owned, sql::Connection* conn, std::string desc,
               bool external_tx = false, std::optional<dialect> given = std::nullopt)
      : owned_(std::move(owned)), conn_(conn), desc_(std::move(desc)), external_tx_(external_tx) {
    // An attached connection with its dialect named costs no round trip here; one opened
    // from a URL always learns whether it reached a Galera node.
    if (given && !owned_) {
      kind_ = *given;
      return;
    }
    const auto server = server_info();
    set_multi_primary(server.galera);
    if (given) check_dialect_for_server(*given, server);
    kind_ = given ? *given : mysql_family_dialect(server);
  }
  ~mysql_driver() override {
    rollback();
    prepared_.clear();
  }

  dialect kind() const noexcept override { return kind_; }
  client_library client() const noexcept override { return client_library::mysql; }
  placeholder_style style() const noexcept override { return placeholder_style::question; }
  std::string describe() const override { return desc_; }

  result run(const statement& st, std::span<const value> params) override {
    ensure_thread_init();
    if (static_cast<int>(params.size()) != st.param_count)
      throw internal_error("statement " + st.name + " takes " + std::to_string(st.param_count) + " parameters, got " +
                           std::to_string(params.size()));
    try {
      auto& p = prepared_[st.name];
      if (!p.ps) {
        ++round_trips_;  // COM_STMT_PREPARE, once per connection
        p.ps.reset(conn_->prepareStatement(st.text));
        // 1.1's PreparedStatement::getUpdateCount() is unimplemented: the call is picked by
        // whether the statement has result columns (or a RETURNING clause), decided once here
        // because getMetaData() builds its metadata anew on every call.
        p.returns_rows = p.ps->getMetaData()->getColumnCount() > 0 || has_returning(st.text);
      }
      sql::PreparedStatement* ps = p.ps.get();
      for (std::size_t k = 0; k < st.order.size(); ++k) {
        const auto idx = static_cast<unsigned>(k + 1);
        const value& v = params[static_cast<std::size_t>(st.order[k])];
        if (auto* s = std::get_if<std::string>(&v)) ps->setString(idx, *s);
        else if (auto* n = std::get_if<std::int64_t>(&v)) ps->setInt64(idx, *n);
        else ps->setNull(idx, sql::DataType::VARCHAR);
      }
      ++round_trips_;
      result out;
      if (p.returns_rows) {
        std::unique_ptr<sql::ResultSet> rs(ps->executeQuery());
        read_rows(*rs, out);
      } else {
        out.affected = ps->executeUpdate();
      }
      return out;
    } catch (...) {
      // A statement prepared on a connection that died is useless after reconnect.
      prepared_.erase(st.name);
      rethrow_classified(st.name);
    }
  }

  void run_script(std::string_view sql) override { simple(sql, "statement", false); }

  void begin() override {
    if (in_tx_ || external_tx_) throw internal_error("transaction already open");
    simple(find_embedded("sql/mysql/begin.sql"), "START TRANSACTION", false);
    in_tx_ = true;
  }

  void commit() override {
    if (external_tx_) throw internal_error("dblock never commits the caller's transaction");
    if (!in_tx_) throw internal_error("COMMIT without a transaction");
    in_tx_ = false;
    simple(find_embedded("sql/mysql/commit.sql"), "COMMIT", true);
  }

  void rollback() noexcept override {
    if (!in_tx_) return;
    in_tx_ = false;
    try {
      simple(find_embedded("sql/mysql/rollback.sql"), "ROLLBACK", false);
    } catch (...) {
      // A dead connection rolled back on the server already.
    }
  }

  bool in_transaction() const noexcept override { return in_tx_ || external_tx_; }

 private:
  void simple(std::string_view sql, const char* context, bool during_commit) {
    ensure_thread_init();
    ++round_trips_;
    try {
      std::unique_ptr<sql::Statement> s(conn_->createStatement());
      s->execute(std::string(sql));
    } catch (...) {
      rethrow_classified(context, during_commit);
    }
  }

  static void read_rows(sql::ResultSet& rs, result& out) {
    const unsigned n = rs.getMetaData()->getColumnCount();
    while (rs.next()) {
      std::vector<cell> cells;
      cells.reserve(n);
      for (unsigned i = 1; i <= n; ++i) {
        sql::SQLString s = rs.getString(i);
        if (rs.wasNull()) cells.emplace_back(std::nullopt);
        else cells.emplace_back(s.asStdString());
      }
      out.rows.push_back(std::move(cells));
    }
  }

  // The server's version and Galera membership (one round trip at connect).
  mysql_server_info server_info() {
    ensure_thread_init();
    ++round_trips_;
    try {
      std::unique_ptr<sql::Statement> s(conn_->createStatement());
      std::unique_ptr<sql::ResultSet> rs(
          s->executeQuery(get_statement(dialect::mysql, placeholder_style::question, "server_info").text));
      mysql_server_info out;
      while (rs->next()) out.add(rs->getString(1).asStdString(), rs->getString(2).asStdString());
      return out;
    } catch (...) {
      rethrow_classified("server_info");
    }
  }

  std::unique_ptr<sql::Connection> owned_;
  sql::Connection* conn_;
  dialect kind_ = dialect::mysql;
  std::string desc_;
  struct prepared {
    std::unique_ptr<sql::PreparedStatement> ps;
    bool returns_rows = false;  // executeQuery() rather than executeUpdate()
  };
  std::map<std::string, prepared> prepared_;
  bool in_tx_ = false;
  bool external_tx_ = false;  // the caller's transaction: never begun, committed or rolled back here
};

// One attempt on one host of the URL's list.
std::unique_ptr<driver> connect_one(const connection_url& u, const url_host& h, const open_options& opts) {
  ensure_thread_init();
  sql::ConnectOptionsMap o;
  // Connector/C++ wants an IPv6 address in brackets in its tcp:// host name.
  const std::string host = h.host.empty() ? std::string("127.0.0.1")
                           : h.host.find(':') != std::string::npos ? "[" + h.host + "]"
                                                                   : h.host;
  o["hostName"] = sql::SQLString("tcp://" + host + ":" + std::to_string(h.port.value_or(3306)));
  o["userName"] = sql::SQLString(u.user);
  o["password"] = sql::SQLString(u.password.value_or(""));
  o["schema"] = sql::SQLString(u.database);
  o["CLIENT_FOUND_ROWS"] = true;  // UPDATE reports matched rows, not changed rows
  o["OPT_RECONNECT"] = false;     // a silent reconnect would hide a lost transaction
  o["OPT_CONNECT_TIMEOUT"] = static_cast<int>(std::max<long long>(1, opts.connect_timeout.count()));
  o["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
  // A statement sent into a silent network fails after this instead of waiting forever
  // (open_options::network_timeout). Connector/C++ gives no access to its socket, so
  // these timeouts are also what bounds a renewal on the watchdog's connection.
  const int io_timeout = mysql_io_timeout_seconds(opts);
  o["OPT_READ_TIMEOUT"] = io_timeout;
  o["OPT_WRITE_TIMEOUT"] = io_timeout;
  // Names the connection (performance_schema.session_connect_attrs) like application_name.
  o["OPT_CONNECT_ATTR_ADD"] = std::map<sql::SQLString, sql::SQLString>{{"program_name", connection_name(opts)}};
  std::unique_ptr<sql::Connection> c;
  {
    std::lock_guard lock(driver_mutex());
    c.reset(get_driver_instance()->connect(o));
  }
  auto* raw = c.get();
  return std::make_unique<mysql_driver>(std::move(c), raw, u.redacted(), false,
                                        u.dialect_given ? std::optional<dialect>(u.kind) : std::nullopt);
}

// The hosts are tried in order. A host that could not be reached (client error numbers,
// 2000 and up) passes on to the next; a server that answered and refused (bad password,
// unknown database) ends the attempt, as libpq does.
std::unique_ptr<driver> connect(const connection_url& u, const open_options& opts) {
  std::string tried;
  for (std::size_t i = 0; i < u.hosts.size(); ++i) {
    try {
      return connect_one(u, u.hosts[i], opts);
    } catch (...) {
      try {
        rethrow_classified("cannot connect to " + u.redacted());
      } catch (const error& e) {
        if (e.kind() == error_kind::schema_missing || e.kind() == error_kind::invalid_argument) throw;
        const bool unreachable = e.vendor_code() >= 2000 || e.vendor_code() == 0;
        if (i + 1 == u.hosts.size() || !unreachable) {
          if (tried.empty()) throw connection_error(e.what(), e.sqlstate(), e.vendor_code());
          throw connection_error(std::string(e.what()) + " (after " + tried + ")", e.sqlstate(), e.vendor_code());
        }
        if (!tried.empty()) tried += ", ";
        tried += "host " + std::to_string(i + 1) + " unreachable: error " + std::to_string(e.vendor_code());
      }
    }
  }
  throw internal_error("URL without a host");
}

}  // namespace
}  // namespace dblock::detail::mysql_backend

namespace dblock {

database open_mysql(std::string_view url, const open_options& opts) {
  auto u = parse_url(url);
  if (detail::traits_of(u.kind).family != dialect::mysql || u.client != client_library::mysql)
    throw invalid_argument("open_mysql needs a mysql:// URL, got scheme '" + u.scheme + "'");
  auto first = detail::mysql_backend::connect(u, opts);
  return detail::make_database(std::make_shared<detail::backend>(
      std::move(first), [u](const open_options& o) { return detail::mysql_backend::connect(u, o); }, opts));
}

database attach(sql::Connection* conn) {
  if (!conn) throw invalid_argument("attach(sql::Connection*): null connection");
  return detail::make_database(std::make_shared<detail::backend>(
      std::make_unique<detail::mysql_backend::mysql_driver>(nullptr, conn, "attached Connector/C++ connection")));
}

database attach(sql::Connection* conn, dialect d) {
  if (!conn) throw invalid_argument("attach(sql::Connection*): null connection");
  if (detail::traits_of(d).family != dialect::mysql)
    throw invalid_argument(std::string("attach(sql::Connection*): dialect '") + to_string(d) + "' is not a MySQL dialect");
  return detail::make_database(std::make_shared<detail::backend>(std::make_unique<detail::mysql_backend::mysql_driver>(
      nullptr, conn, "attached Connector/C++ connection", false, d)));
}

transaction_ref within(sql::Connection* conn) {
  if (!conn) throw invalid_argument("within(sql::Connection*): null connection");
  return detail::make_transaction_ref(std::make_shared<detail::backend>(std::make_unique<detail::mysql_backend::mysql_driver>(
      nullptr, conn, "caller's Connector/C++ transaction", true)));
}

}  // namespace dblock
