// lib/backends/soci/driver.cpp — the SOCI 4.0 driver: SQLite (the embedded default),
// and PostgreSQL or MySQL/MariaDB for SOCI users. Statements run as one-time queries
// (PQexecParams on PostgreSQL: one round trip), except on SQLite connections dblock opened
// itself, where run() keeps each statement prepared for the connection's lifetime
// (sqlite_statement_cache below; docs/architecture.md says why). SQLite transactions use
// BEGIN IMMEDIATE (a deferred BEGIN lets two read-then-write transactions deadlock);
// SQLite gets WAL, a busy timeout and extended result codes. Public: open_soci(),
// attach(soci::session&).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

// DBLOCK_SOCI_POSTGRESQL / DBLOCK_SOCI_MYSQL (CMakeLists.txt): SOCI's PostgreSQL and MySQL
// backends are built in when libpq / libmariadb are there; SQLite always is.
#if DBLOCK_SOCI_MYSQL
#include <soci/mysql/soci-mysql.h>
#endif
#if DBLOCK_SOCI_POSTGRESQL
#include <soci/postgresql/soci-postgresql.h>
#endif
#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>
#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backends/soci/classify.hpp"
#include "core/backend.hpp"
#include "core/dialect.hpp"
#include "core/backoff.hpp"
#include "dblock/errors.hpp"
#include "dblock/soci.hpp"

namespace dblock::detail::soci_backend {
namespace {

std::string quote_param(const std::string& v) {
  // SOCI/libpq keyword=value syntax: single quotes, backslash escapes.
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string cell_text(const soci::row& r, std::size_t i) {
  switch (r.get_properties(i).get_data_type()) {
    case soci::dt_string:
    case soci::dt_xml:
      return r.get<std::string>(i);
    case soci::dt_integer:
      return std::to_string(r.get<int>(i));
    case soci::dt_long_long:
      return std::to_string(r.get<long long>(i));
    case soci::dt_unsigned_long_long:
      return std::to_string(r.get<unsigned long long>(i));
    case soci::dt_double: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", r.get<double>(i));
      return buf;
    }
    case soci::dt_date: {
      std::tm t = r.get<std::tm>(i);
      char buf[64];
      std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &t);
      return buf;
    }
    default:
      throw internal_error("unsupported SOCI column type in column " + std::to_string(i));
  }
}

// Prepared SQLite statements of one connection: the catalog's by statement::id (an index,
// no hashing of the text on every run), others (render_statement's) by their full text.
// The compiled program is a function of the text (user identifiers are part of it,
// render_statement) and of the schema, which sqlite3_step re-checks by itself
// (SQLITE_SCHEMA: it prepares the text again). Only for connections dblock opened and
// closes: the owner finalizes the cache before the session closes (sqlite3_close refuses
// while statements remain). Between runs every statement is reset with its bindings
// cleared, so none holds a read snapshot, a lock or a pointer into the caller's values.
class sqlite_statement_cache {
 public:
  // by_id = false: a cache for one run (attached sessions), keyed by text only.
  explicit sqlite_statement_cache(sqlite_api::sqlite3* db, bool by_id = true) : db_(db), by_id_(by_id) {}
  sqlite_statement_cache(const sqlite_statement_cache&) = delete;
  sqlite_statement_cache& operator=(const sqlite_statement_cache&) = delete;
  ~sqlite_statement_cache() { clear(); }

  sqlite_api::sqlite3* db() const noexcept { return db_; }

  // The statement for `st`, prepared on first use; its placeholders checked against
  // st.order once, when prepared. Throws sqlite3_soci_error or internal_error.
  sqlite_api::sqlite3_stmt* get(const statement& st) {
    if (by_id_ && st.id != 0) {
      if (st.id < ids_.size() && ids_[st.id]) return ids_[st.id];
      if (ids_.size() <= st.id) ids_.resize(std::max<std::size_t>(st.id, catalog_size()) + 1, nullptr);
      return ids_[st.id] = prepare(st);
    }
    if (auto it = texts_.find(st.text); it != texts_.end()) return it->second;
    // A bound on memory when callers render many distinct user statements.
    if (texts_.size() >= max_entries) clear_texts();
    sqlite_api::sqlite3_stmt* s = prepare(st);
    try {
      texts_.emplace(st.text, s);
    } catch (...) {
      sqlite_api::sqlite3_finalize(s);
      throw;
    }
    return s;
  }

  // Finalizes the statement of `st` (after a failed run: it is never reused).
  void drop(const statement& st) noexcept {
    if (by_id_ && st.id != 0) {
      if (st.id < ids_.size() && ids_[st.id]) {
        sqlite_api::sqlite3_finalize(ids_[st.id]);
        ids_[st.id] = nullptr;
      }
      return;
    }
    if (auto it = texts_.find(st.text); it != texts_.end()) {
      sqlite_api::sqlite3_finalize(it->second);
      texts_.erase(it);
    }
  }

  void clear() noexcept {
    for (auto& s : ids_) {
      sqlite_api::sqlite3_finalize(s);  // a no-op for nullptr
      s = nullptr;
    }
    clear_texts();
  }

 private:
  sqlite_api::sqlite3_stmt* prepare(const statement& st) {
    sqlite_api::sqlite3_stmt* s = nullptr;
    const int rc = sqlite_api::sqlite3_prepare_v3(db_, st.text.c_str(), static_cast<int>(st.text.size() + 1),
                                                  SQLITE_PREPARE_PERSISTENT, &s, nullptr);
    if (rc != SQLITE_OK) {
      sqlite_api::sqlite3_finalize(s);
      throw soci::sqlite3_soci_error(std::string("prepare: ") + sqlite_api::sqlite3_errmsg(db_), rc);
    }
    if (!s) throw soci::sqlite3_soci_error("prepare: empty statement", SQLITE_MISUSE);
    if (const int have = sqlite_api::sqlite3_bind_parameter_count(s); have != static_cast<int>(st.order.size())) {
      sqlite_api::sqlite3_finalize(s);
      throw internal_error("statement " + st.name + " has " + std::to_string(have) + " placeholders, expected " +
                           std::to_string(st.order.size()));
    }
    return s;
  }

  void clear_texts() noexcept {
    for (auto& [text, s] : texts_) sqlite_api::sqlite3_finalize(s);
    texts_.clear();
  }

  static constexpr std::size_t max_entries = 128;
  sqlite_api::sqlite3* db_;
  bool by_id_;
  std::vector<sqlite_api::sqlite3_stmt*> ids_;  // by statement::id; nullptr = not prepared
  std::unordered_map<std::string, sqlite_api::sqlite3_stmt*> texts_;
};

class soci_driver final : public driver {
 public:
  soci_driver(std::unique_ptr<soci::session> owned, soci::session* sess, dialect d, std::string desc,
              bool external_tx = false)
      : owned_(std::move(owned)), sess_(sess), kind_(d), desc_(std::move(desc)), external_tx_(external_tx) {}
  ~soci_driver() override {
    rollback();
    cache_.reset();  // finalized before owned_ closes the connection
    if (cut_fd_ >= 0) ::close(cut_fd_);
  }

  dialect kind() const noexcept override { return kind_; }
  client_library client() const noexcept override { return client_library::soci; }

  // shutdown(2) of the client library's socket through our duplicate descriptor (see
  // remember_socket): the blocked call returns with a lost connection. SQLite has none.
  void interrupt() noexcept override {
    if (cut_fd_ >= 0) ::shutdown(cut_fd_, SHUT_RDWR);
  }

  // Keeps a descriptor of our own for the session's socket, taken right after connecting:
  // the client library closes (and may free) its own when the connection fails, so reading
  // it later from another thread would race with that. static_cast: the session was opened
  // here with the factory of kind_ (SOCI exports no typeinfo for its backends).
  void remember_socket() {
    if (!owned_) return;
    int fd = -1;
#if DBLOCK_SOCI_POSTGRESQL
    if (kind_ == dialect::postgresql) {
      if (auto* be = static_cast<soci::postgresql_session_backend*>(owned_->get_backend()); be && be->conn_)
        fd = PQsocket(be->conn_);
    }
#endif
#if DBLOCK_SOCI_MYSQL
    if (traits_of(kind_).family == dialect::mysql) {
      if (auto* be = static_cast<soci::mysql_session_backend*>(owned_->get_backend()); be && be->conn_)
        fd = static_cast<int>(mysql_get_socket(be->conn_));
    }
#endif
    if (fd >= 0) cut_fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  }
  placeholder_style style() const noexcept override { return placeholder_style::named; }
  std::string describe() const override { return desc_; }

  result run(const statement& st, std::span<const value> params) override {
    if (static_cast<int>(params.size()) != st.param_count)
      throw internal_error("statement " + st.name + " takes " + std::to_string(st.param_count) + " parameters, got " +
                           std::to_string(params.size()));
    if (cache_) return run_cached(*cache_, st, params);
    if (kind_ == dialect::sqlite) {
      // An attached SQLite session: the same C-API path, but prepared for this run only, so
      // nothing outlives the call (the owner may close or reconnect the session at any time).
      // Not SOCI's row path: SOCI 4.0 reads INTEGER-declared columns as a 32-bit int.
      sqlite_statement_cache once(sqlite_conn(), false);
      return run_cached(once, st, params);
    }
    const std::size_t n = st.order.size();
    // SOCI binds references: storage must not move while the statement lives.
    std::vector<std::string> strs(n);
    std::vector<long long> ints(n);
    std::vector<soci::indicator> inds(n, soci::i_ok);
    ++round_trips_;
    try {
      soci::statement stmt(*sess_);
      for (std::size_t k = 0; k < n; ++k) {
        const value& v = params[static_cast<std::size_t>(st.order[k])];
        if (auto* s = std::get_if<std::string>(&v)) {
          strs[k] = *s;
          stmt.exchange(soci::use(strs[k], inds[k]));
        } else if (auto* i = std::get_if<std::int64_t>(&v)) {
          ints[k] = *i;
          stmt.exchange(soci::use(ints[k], inds[k]));
        } else {
          inds[k] = soci::i_null;
          stmt.exchange(soci::use(strs[k], inds[k]));
        }
      }
      soci::row row;
      stmt.exchange(soci::into(row));
      stmt.alloc();
      stmt.prepare(st.text, soci::details::st_one_time_query);
      stmt.define_and_bind();
      result out;
      bool got = stmt.execute(true);
      out.affected = stmt.get_affected_rows();
      while (got) {
        std::vector<cell> cells;
        cells.reserve(row.size());
        for (std::size_t i = 0; i < row.size(); ++i) {
          if (row.get_indicator(i) == soci::i_null) cells.emplace_back(std::nullopt);
          else cells.emplace_back(cell_text(row, i));
        }
        out.rows.push_back(std::move(cells));
        got = stmt.fetch();
      }
      return out;
    } catch (...) {
      rethrow_classified(st.name);
    }
  }

  void run_script(std::string_view sql) override { simple(sql, "statement", false); }

  // SQLite connections dblock opened (and will close) only: see sqlite_statement_cache.
  void enable_statement_cache() { cache_ = std::make_unique<sqlite_statement_cache>(sqlite_conn()); }

  void begin() override {
    if (in_tx_ || external_tx_) throw internal_error("transaction already open");
    simple(text("begin"), "BEGIN", false);
    in_tx_ = true;
  }
  void commit() override {
    if (external_tx_) throw internal_error("dblock never commits the caller's transaction");
    if (!in_tx_) throw internal_error("COMMIT without a transaction");
    in_tx_ = false;
    try {
      simple(text("commit"), "COMMIT", true);
    } catch (...) {
      // A COMMIT that fails on SQLite (a deferred foreign key left dangling, SQLITE_BUSY)
      // leaves the transaction open: end it, or this connection stays inside it, holding
      // the write lock every other writer waits for, and its next BEGIN fails.
      if (kind_ == dialect::sqlite && !sqlite3_get_autocommit(sqlite_conn())) {
        try {
          simple(text("rollback"), "ROLLBACK", false);
        } catch (...) {
          // Nothing better to do: the COMMIT error below is what the caller must see.
        }
      }
      throw;
    }
  }
  void rollback() noexcept override {
    if (!in_tx_) return;
    in_tx_ = false;
    try {
      simple(text("rollback"), "ROLLBACK", false);
    } catch (...) {
      // A dead connection rolled back on the server already.
    }
  }
  bool in_transaction() const noexcept override { return in_tx_ || external_tx_; }

  std::string database_file() const override {
    if (kind_ != dialect::sqlite) return {};
    const char* f = sqlite3_db_filename(sqlite_conn(), "main");
    return f ? f : "";
  }

  bool write_ahead_log() override {
    if (kind_ != dialect::sqlite) return false;
    if (!wal_) {
      sqlite_api::sqlite3_stmt* st = nullptr;
      bool wal = false;
      if (sqlite3_prepare_v2(sqlite_conn(), "PRAGMA journal_mode", -1, &st, nullptr) == SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW) {
        const auto* mode = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        wal = mode && std::string_view(mode) == "wal";
      }
      sqlite3_finalize(st);
      wal_ = wal;  // connect.sql set it once; nothing in dblock changes it later
    }
    return *wal_;
  }

  void set_busy_timeout(std::chrono::milliseconds wait) override {
    if (kind_ != dialect::sqlite) return;
    busy_wait_ = wait;
    sqlite3_busy_handler(sqlite_conn(), &soci_driver::on_busy, this);
  }

  // SQLite's own busy timeout sleeps 1, 2, 5, 10, 15, 20, 25 ... 100 ms between looks, so a
  // writer that loses the race a few times looks again tens of ms after the lock came
  // free; behind a strict wait line everyone waits for that one writer. dblock's
  // statements hold the write lock well under a millisecond: look again soon (full jitter,
  // 100 us doubling to 2 ms) until busy_wait_ has passed since the first refusal.
  static int on_busy(void* self, int count) {
    auto* d = static_cast<soci_driver*>(self);
    const auto now = std::chrono::steady_clock::now();
    if (count == 0) {
      d->busy_since_ = now;
      d->busy_backoff_.reset();
    }
    return sleep_before(d->busy_backoff_, d->busy_since_ + d->busy_wait_) ? 1 : 0;
  }

  // SQLite connection set-up from sql/sqlite/connect.sql (WAL, synchronous, ...).
  // Switching a new file to WAL takes a write lock while holding a read lock, and when
  // several connections open the same new file at once (eight `dblock migrate`
  // processes, say) SQLite answers SQLITE_BUSY at once instead of calling the busy
  // handler (it could deadlock): retry each statement, with jitter, for up to `wait`.
  void configure_sqlite(std::chrono::milliseconds wait) {
    auto* be = static_cast<soci::sqlite3_session_backend*>(sess_->get_backend());
    sqlite3_extended_result_codes(be->conn_, 1);
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (const auto& s : split_statements(text("connect"))) {
      // Full jitter, 2 ms doubling to 100 ms, per statement; never past `wait`.
      backoff bo({.initial = std::chrono::milliseconds(2), .max = std::chrono::milliseconds(100)});
      for (;;) {
        try {
          simple(s, "connect", false);
          break;
        } catch (const lock_not_available&) {
          if (!sleep_before(bo, deadline)) throw;
        }
      }
    }
  }

 private:
  // run() on a cached statement: the same bindings as the SOCI path (int64, text, NULL by
  // position; each :aN occurs once, so occurrence k is parameter k + 1), the same
  // affected count (sqlite3_changes after the first step, as SOCI reads it) and the
  // SQLite result code in a sqlite3_soci_error, so classification is unchanged. Cells
  // are SQLite's text of each value (SOCI's for text and expression columns; for
  // INTEGER-declared columns SOCI 4.0 reads a 32-bit int, this reads all 64 bits).
  result run_cached(sqlite_statement_cache& cache, const statement& st, std::span<const value> params) {
    const std::size_t n = st.order.size();
    ++round_trips_;
    try {
      sqlite_api::sqlite3_stmt* s = cache.get(st);
      try {
        for (std::size_t k = 0; k < n; ++k) {
          const value& v = params[static_cast<std::size_t>(st.order[k])];
          const int pos = static_cast<int>(k) + 1;
          int rc;
          // SQLITE_STATIC: `params` outlives this call and the bindings are cleared below.
          if (auto* str = std::get_if<std::string>(&v))
            rc = sqlite_api::sqlite3_bind_text(s, pos, str->data(), static_cast<int>(str->size()), SQLITE_STATIC);
          else if (auto* i = std::get_if<std::int64_t>(&v))
            rc = sqlite_api::sqlite3_bind_int64(s, pos, *i);
          else
            rc = sqlite_api::sqlite3_bind_null(s, pos);
          if (rc != SQLITE_OK)
            throw soci::sqlite3_soci_error(std::string("bind: ") + sqlite_api::sqlite3_errmsg(cache.db()), rc);
        }
        result out;
        int rc = sqlite_api::sqlite3_step(s);
        if (rc == SQLITE_ROW || rc == SQLITE_DONE) out.affected = sqlite_api::sqlite3_changes(cache.db());
        const int cols = sqlite_api::sqlite3_column_count(s);
        while (rc == SQLITE_ROW) {
          std::vector<cell> cells;
          cells.reserve(static_cast<std::size_t>(cols));
          for (int i = 0; i < cols; ++i) {
            const int type = sqlite_api::sqlite3_column_type(s, i);
            if (type == SQLITE_NULL) {
              cells.emplace_back(std::nullopt);
              continue;
            }
            if (type == SQLITE_INTEGER) {
              // The same decimal text SQLite would make, without its conversion: that one
              // allocates (under SQLite's memory mutex) and takes two more API calls.
              char buf[24];
              const auto end = std::to_chars(buf, buf + sizeof buf, sqlite_api::sqlite3_column_int64(s, i)).ptr;
              cells.emplace_back(std::in_place, buf, end);
              continue;
            }
            const auto* t = sqlite_api::sqlite3_column_text(s, i);  // before _bytes, as SQLite asks
            if (!t) throw soci::sqlite3_soci_error("out of memory reading a column", SQLITE_NOMEM);
            cells.emplace_back(std::string(reinterpret_cast<const char*>(t),
                                           static_cast<std::size_t>(sqlite_api::sqlite3_column_bytes(s, i))));
          }
          out.rows.push_back(std::move(cells));
          rc = sqlite_api::sqlite3_step(s);
        }
        if (rc != SQLITE_DONE) throw soci::sqlite3_soci_error(sqlite_api::sqlite3_errmsg(cache.db()), rc);
        // Ends the statement's read/write of the database and drops the pointers into `params`.
        sqlite_api::sqlite3_reset(s);
        sqlite_api::sqlite3_clear_bindings(s);
        return out;
      } catch (...) {
        cache.drop(st);  // a statement that failed is finalized, never reused
        throw;
      }
    } catch (...) {
      rethrow_classified(st.name);
    }
  }

  sqlite_api::sqlite3* sqlite_conn() const { return static_cast<soci::sqlite3_session_backend*>(sess_->get_backend())->conn_; }

  std::string_view text(const char* name) const {
    std::string path = "sql/" + std::string(dialect_dir(kind_)) + "/" + name + ".sql";
    const char* t = find_embedded(path);
    if (!t) throw internal_error("no embedded statement " + path);
    return t;
  }

  void simple(std::string_view sql, const char* context, bool during_commit) {
    ++round_trips_;
    try {
      // Without comments: SOCI scans the text for ':name' placeholders and knows no comments.
      sess_->once << rewrite_placeholders(context, sql, placeholder_style::named).text;
    } catch (...) {
      rethrow_classified(context, during_commit);
    }
  }

  std::unique_ptr<soci::session> owned_;
  soci::session* sess_;
  int cut_fd_ = -1;  // duplicate of the socket, for interrupt()
  std::unique_ptr<sqlite_statement_cache> cache_;  // set on owned SQLite connections only
  dialect kind_;
  std::string desc_;
  bool in_tx_ = false;
  bool external_tx_ = false;  // the caller's transaction: never begun, committed or rolled back here
  // SQLite busy handler (on_busy): the wait, when the current wait began, its backoff.
  std::optional<bool> wal_;  // write_ahead_log(), read once
  std::chrono::milliseconds busy_wait_{30'000};
  std::chrono::steady_clock::time_point busy_since_;
  backoff busy_backoff_{{.initial = std::chrono::microseconds(100), .max = std::chrono::microseconds(2000)}};
};

// The server's version and Galera membership (one round trip at connect).
mysql_server_info mysql_server(soci::session& sess) {
  mysql_server_info out;
  try {
    soci::rowset<soci::row> rs = sess.prepare << get_statement(dialect::mysql, placeholder_style::named, "server_info").text;
    for (const auto& r : rs) out.add(r.get<std::string>(0), r.get<std::string>(1));
  } catch (...) {
    rethrow_classified("server_info");
  }
  return out;
}

std::unique_ptr<driver> connect(const connection_url& u, const open_options& opts) {
  const soci::backend_factory* factory = nullptr;
  std::string cs;
  const auto timeout = std::to_string(std::max<long long>(1, opts.connect_timeout.count()));
  switch (u.kind) {
    case dialect::sqlite: {
      factory = &soci::sqlite3;
      auto it = u.options.find("timeout");
      // SOCI's sqlite3 parser keeps single quotes and splits on spaces: double-quote
      // only a path with whitespace, and refuse a double quote inside the path.
      if (u.database.find('"') != std::string::npos)
        throw invalid_argument("SQLite path '" + u.database + "' contains a double quote");
      cs = "db=" + (u.database.find_first_of(" \t") == std::string::npos ? u.database : '"' + u.database + '"') +
           " timeout=" + (it != u.options.end() ? it->second : std::string("30"));
      break;
    }
    case dialect::postgresql:
#if DBLOCK_SOCI_POSTGRESQL
      factory = &soci::postgresql;
#else
      throw invalid_argument("this build of dblock's SOCI backend has no PostgreSQL support (libpq was not found)");
#endif
      cs = "dbname=" + quote_param(u.database);
      for (const auto& [key, value] : libpq_timeouts(opts))
        cs += " " + key + "=" + (u.options.count(key) ? quote_param(u.options.at(key)) : value);
      // The URL's application_name wins; SOCI passes the string on to libpq.
      cs += " application_name=" +
            quote_param(u.options.count("application_name") ? u.options.at("application_name") : connection_name(opts));
      // libpq's lists: host=h1,h2 port=p1,p2 (an empty port is the default one).
      if (u.hosts.size() > 1 || !u.host.empty()) {
        std::string hosts, ports;
        bool any_port = false;
        for (std::size_t i = 0; i < u.hosts.size(); ++i) {
          if (i > 0) hosts += ',', ports += ',';
          hosts += u.hosts[i].host;
          if (u.hosts[i].port) ports += std::to_string(*u.hosts[i].port), any_port = true;
        }
        cs += " host=" + quote_param(hosts);
        if (any_port) cs += " port=" + quote_param(ports);
      }
      if (u.options.count("target_session_attrs"))
        cs += " target_session_attrs=" + quote_param(u.options.at("target_session_attrs"));
      if (!u.user.empty()) cs += " user=" + quote_param(u.user);
      if (u.password) cs += " password=" + quote_param(*u.password);
      break;
    case dialect::mysql:
    case dialect::mysql8:
#if DBLOCK_SOCI_MYSQL
      factory = &soci::mysql;
#else
      throw invalid_argument("this build of dblock's SOCI backend has no MySQL support (libmariadb was not found)");
#endif
      // The host and port are added per attempt below (the URL's hosts, in order).
      cs = "db=" + quote_param(u.database) + " connect_timeout=" + timeout + " charset=utf8mb4";
      // Bounds a statement sent into a silent network (open_options::network_timeout).
      cs += " read_timeout=" + std::to_string(mysql_io_timeout_seconds(opts)) +
            " write_timeout=" + std::to_string(mysql_io_timeout_seconds(opts));
      // No program_name: SOCI 4.0's MySQL backend has no option for connection
      // attributes and connects inside its constructor (open_options::application_name).
      if (!u.user.empty()) cs += " user=" + quote_param(u.user);
      if (u.password) cs += " password=" + quote_param(*u.password);
      break;
  }
  std::unique_ptr<soci::session> s;
  // MySQL: the hosts are tried in order; one that could not be reached (client error
  // numbers, 2000 and up) passes on to the next, a server that refused ends the attempt.
  // libpq walks its own host list, so other dialects make one attempt.
  const bool mysql_family = traits_of(u.kind).family == dialect::mysql;
  const std::size_t attempts = mysql_family ? u.hosts.size() : 1;
  std::string tried;
  for (std::size_t i = 0; i < attempts && !s; ++i) {
    std::string full = cs;
    if (mysql_family) {
      const auto& h = u.hosts[i];
      full += " host=" + quote_param(h.host.empty() ? "127.0.0.1" : h.host) +
              " port=" + std::to_string(h.port.value_or(3306));
    }
    try {
      s = std::make_unique<soci::session>(*factory, full);
    } catch (...) {
      try {
        rethrow_classified("cannot connect to " + u.redacted());
      } catch (const error& e) {
        if (e.kind() == error_kind::schema_missing || e.kind() == error_kind::invalid_argument) throw;
        const bool unreachable = e.vendor_code() >= 2000 || e.vendor_code() == 0;
        if (i + 1 == attempts || !unreachable) {
          if (tried.empty()) throw connection_error(e.what(), e.sqlstate(), e.vendor_code());
          throw connection_error(std::string(e.what()) + " (after " + tried + ")", e.sqlstate(), e.vendor_code());
        }
        if (!tried.empty()) tried += ", ";
        tried += "host " + std::to_string(i + 1) + " unreachable: error " + std::to_string(e.vendor_code());
      }
    }
  }
  auto* raw = s.get();
  dialect kind = u.kind;
  std::optional<bool> galera;
  if (mysql_family) {
    const auto server = mysql_server(*raw);
    galera = server.galera;
    if (u.dialect_given) check_dialect_for_server(u.kind, server);
    else kind = mysql_family_dialect(server);
  }
  auto d = std::make_unique<soci_driver>(std::move(s), raw, kind, u.redacted());
  if (galera) d->set_multi_primary(*galera);
  d->set_pooled(u.pooler == pooler_mode::transaction);
  d->remember_socket();
  if (u.kind == dialect::sqlite) {
    // The busy wait of `?timeout=N` (seconds, default 30), with dblock's finer busy handler.
    auto it = u.options.find("timeout");
    long long seconds = 30;
    if (it != u.options.end()) {
      const auto& t = it->second;
      if (std::from_chars(t.data(), t.data() + t.size(), seconds).ec != std::errc() || seconds < 0)
        throw invalid_argument("SQLite busy timeout '" + t + "' is not a whole number of seconds (?timeout=N)");
    }
    d->set_busy_timeout(std::chrono::seconds(seconds));
    d->configure_sqlite(opts.connect_timeout);
    d->enable_statement_cache();
  }
  return d;
}

}  // namespace
}  // namespace dblock::detail::soci_backend

namespace dblock {

database open_soci(std::string_view url, const open_options& opts) {
  auto u = parse_url(url);
  if (u.client != client_library::soci)
    throw invalid_argument("open_soci needs a sqlite:, soci+postgresql:// or soci+mysql:// URL, got scheme '" +
                           u.scheme + "'");
  auto first = detail::soci_backend::connect(u, opts);
  return detail::make_database(std::make_shared<detail::backend>(
      std::move(first), [u](const open_options& o) { return detail::soci_backend::connect(u, o); }, opts));
}

namespace {
dialect dialect_of(soci::session& sess) {
  const std::string name = sess.get_backend_name();
  if (name == "sqlite3") return dialect::sqlite;
  if (name == "postgresql") return dialect::postgresql;
  if (name == "mysql") return detail::mysql_family_dialect(detail::soci_backend::mysql_server(sess));
  throw invalid_argument("unsupported SOCI backend '" + name + "' (expected sqlite3, postgresql or mysql)");
}
}  // namespace

database attach(soci::session& sess) {
  return detail::make_database(std::make_shared<detail::backend>(std::make_unique<detail::soci_backend::soci_driver>(
      nullptr, &sess, dialect_of(sess), "attached SOCI " + sess.get_backend_name() + " session")));
}

database attach(soci::session& sess, dialect d) {
  if (sess.get_backend_name() != "mysql" || detail::traits_of(d).family != dialect::mysql)
    throw invalid_argument(std::string("attach(soci::session&, dialect): dialect '") + to_string(d) +
                           "' on a '" + sess.get_backend_name() + "' session (a dialect is chosen for MySQL sessions only)");
  return detail::make_database(std::make_shared<detail::backend>(std::make_unique<detail::soci_backend::soci_driver>(
      nullptr, &sess, d, "attached SOCI " + sess.get_backend_name() + " session")));
}

transaction_ref within(soci::session& sess) {
  return detail::make_transaction_ref(std::make_shared<detail::backend>(std::make_unique<detail::soci_backend::soci_driver>(
      nullptr, &sess, dialect_of(sess), "caller's SOCI " + sess.get_backend_name() + " transaction", true)));
}

}  // namespace dblock
