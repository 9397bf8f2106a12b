// lib/backends/pqxx/driver.cpp — the libpqxx 6.4 driver (PostgreSQL): runs embedded
// statements as prepared statements on its own connections (exec_params on a caller's
// connection or transaction; one round trip each), transactions with pqxx::work,
// and the public open_pqxx()/attach(pqxx::connection&) entry points.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <pqxx/pqxx>

#include "core/backend.hpp"
#include "dblock/errors.hpp"
#include "dblock/pqxx.hpp"
#include "backends/pqxx/classify.hpp"

namespace dblock::detail::pqxx_backend {
namespace {

class receiver final : public pqxx::notification_receiver {
 public:
  receiver(pqxx::connection_base& c, const std::string& channel, std::vector<std::string>& inbox)
      : pqxx::notification_receiver(c, channel), inbox_(inbox) {}
  void operator()(const std::string& payload, int /*backend_pid*/) override { inbox_.push_back(payload); }

 private:
  std::vector<std::string>& inbox_;
};

class pqxx_driver final : public driver {
 public:
  pqxx_driver(std::unique_ptr<pqxx::connection> owned, pqxx::connection* conn, std::string desc)
      : owned_(std::move(owned)), conn_(conn), desc_(std::move(desc)) {
    // A descriptor of our own for interrupt(): libpq closes its own when the connection
    // fails, and that number may be reused by then. This one keeps the socket object.
    if (owned_ && owned_->sock() >= 0) cut_fd_ = ::fcntl(owned_->sock(), F_DUPFD_CLOEXEC, 0);
  }
  // Runs inside the caller's transaction; never begins, commits or rolls it back.
  explicit pqxx_driver(pqxx::transaction_base& ext) : conn_(nullptr), ext_(&ext), desc_("caller's pqxx transaction") {}
  ~pqxx_driver() override {
    rollback();
    if (cut_fd_ >= 0) ::close(cut_fd_);
  }

  dialect kind() const noexcept override { return dialect::postgresql; }
  client_library client() const noexcept override { return client_library::pqxx; }
  placeholder_style style() const noexcept override { return placeholder_style::dollar; }
  std::string describe() const override { return desc_; }

  result run(const statement& st, std::span<const value> params) override {
    if (static_cast<int>(params.size()) != st.param_count)
      throw internal_error("statement " + st.name + " takes " + std::to_string(st.param_count) + " parameters, got " +
                           std::to_string(params.size()));
    std::vector<std::string> text(params.size());
    std::vector<const char*> ptrs(params.size(), nullptr);
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (auto* s = std::get_if<std::string>(&params[i])) {
        ptrs[i] = s->c_str();
      } else if (auto* n = std::get_if<std::int64_t>(&params[i])) {
        text[i] = std::to_string(*n);
        ptrs[i] = text[i].c_str();
      }
    }
    try {
      if (const std::string* ps = prepared(st)) {
        ++round_trips_;
        pqxx::result r = tx_ ? tx_->exec_prepared(*ps, pqxx::prepare::make_dynamic_params(ptrs))
                             : pqxx::nontransaction(*conn_).exec_prepared(*ps, pqxx::prepare::make_dynamic_params(ptrs));
        return convert(r);
      }
      ++round_trips_;
      pqxx::result r = ext_ ? ext_->exec_params(st.text, pqxx::prepare::make_dynamic_params(ptrs))
                       : tx_ ? tx_->exec_params(st.text, pqxx::prepare::make_dynamic_params(ptrs))
                           : pqxx::nontransaction(*conn_).exec_params(st.text, pqxx::prepare::make_dynamic_params(ptrs));
      return convert(r);
    } catch (...) {
      rethrow_classified(st.name);
    }
  }

  void run_script(std::string_view sql) override {
    ++round_trips_;
    try {
      if (ext_) ext_->exec(std::string(sql));
      else if (tx_) tx_->exec(std::string(sql));
      else pqxx::nontransaction(*conn_).exec(std::string(sql));
    } catch (...) {
      rethrow_classified("statement");
    }
  }

  void begin() override {
    if (tx_ || ext_) throw internal_error("transaction already open");
    ++round_trips_;
    try {
      tx_ = std::make_unique<pqxx::work>(*conn_);
    } catch (...) {
      rethrow_classified("BEGIN");
    }
  }

  void commit() override {
    if (ext_) throw internal_error("dblock never commits the caller's transaction");
    if (!tx_) throw internal_error("COMMIT without a transaction");
    auto tx = std::move(tx_);
    ++round_trips_;
    try {
      tx->commit();
    } catch (...) {
      rethrow_classified("COMMIT", true);
    }
  }

  void rollback() noexcept override {
    if (!tx_) return;
    auto tx = std::move(tx_);
    ++round_trips_;
    try {
      tx->abort();
    } catch (...) {
      // Broken connection: the server rolls back by itself.
    }
  }

  bool in_transaction() const noexcept override { return tx_ || ext_; }

  // shutdown(2) of the socket (through our duplicate descriptor): libpq's blocked poll()
  // wakes with end-of-file and reports a lost connection. Only on a connection we own.
  void interrupt() noexcept override {
    if (cut_fd_ >= 0) ::shutdown(cut_fd_, SHUT_RDWR);
  }

  // Not behind a transaction pooler: the subscription would stay on a shared server connection.
  bool can_listen() const noexcept override { return conn_ != nullptr && !pooled_; }

  // libpqxx sends LISTEN "<channel>" itself when a receiver is registered, and again
  // after it reconnects a broken connection. A channel already listened to is left as it
  // is: a second receiver would deliver every notification twice.
  void listen(const std::string& channel) override {
    if (!conn_) throw internal_error("cannot LISTEN inside the caller's transaction");
    for (const auto& r : receivers_)
      if (r->channel() == channel) return;
    try {
      receivers_.push_back(std::make_unique<receiver>(*conn_, channel, inbox_));
    } catch (...) {
      rethrow_classified("LISTEN " + channel);
    }
  }

  // libpqxx sends UNLISTEN when the last receiver of a channel goes.
  void unlisten_all() override {
    try {
      receivers_.clear();
    } catch (...) {
      rethrow_classified("UNLISTEN");
    }
    inbox_.clear();
  }

  // libpqxx's await_notification() cannot be woken early, so the socket is polled here
  // beside wake_fd; get_notifs() then reads what arrived (it also delivers notifications
  // libpq had already buffered while reading a statement's result).
  std::vector<std::string> await_notifications(std::chrono::milliseconds timeout, int wake_fd) override {
    try {
      if (conn_->get_notifs() == 0) {
        if (conn_->sock() < 0) throw pqxx::broken_connection("the connection is closed");
        pollfd fds[2] = {{conn_->sock(), POLLIN, 0}, {wake_fd, POLLIN, 0}};
        const int n = ::poll(fds, wake_fd >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
        if (n > 0 && fds[0].revents != 0) conn_->get_notifs();
      }
    } catch (...) {
      rethrow_classified("waiting for notifications");
    }
    std::vector<std::string> out;
    out.swap(inbox_);
    return out;
  }

 private:
  // On a connection dblock opened itself, each distinct statement text is prepared once
  // (a named server-side statement "dblock_<n>"; the PREPARE is one more round trip,
  // counted) and then run with exec_prepared: no parse and plan per call. Planning
  // lock_acquire's CTE costs several times what running it does (docs/performance.md).
  // The caller's transaction and attached connections keep exec_params: dblock leaves
  // no prepared statements on a connection it does not own. Nor behind a transaction
  // pooler (pooled_): a named statement would be another client's on the next
  // transaction's server connection; exec_params uses the unnamed statement.
  const std::string* prepared(const statement& st) {
    if (!owned_ || ext_ || pooled_) return nullptr;
    auto [it, fresh] = prepared_.try_emplace(st.text);
    auto& [name, ready] = it->second;
    if (fresh) {
      name = "dblock_" + std::to_string(++prepared_count_);
      conn_->prepare(name, st.text);
    }
    if (!ready) {
      ++round_trips_;
      conn_->prepare_now(name);  // throws (classified by run) and stays not ready on failure
      ready = true;
    }
    return &name;
  }

  static result convert(const pqxx::result& r) {
    result out;
    out.affected = static_cast<std::int64_t>(r.affected_rows());
    out.rows.reserve(r.size());
    for (const auto& row : r) {
      std::vector<cell> cells;
      cells.reserve(row.size());
      for (const auto& f : row) {
        if (f.is_null()) cells.emplace_back(std::nullopt);
        else cells.emplace_back(std::string(f.c_str(), f.size()));
      }
      out.rows.push_back(std::move(cells));
    }
    return out;
  }

  std::unique_ptr<pqxx::connection> owned_;
  pqxx::connection* conn_;
  int cut_fd_ = -1;  // duplicate of the socket, for interrupt()
  pqxx::transaction_base* ext_ = nullptr;
  std::vector<std::string> inbox_;
  std::vector<std::unique_ptr<receiver>> receivers_;
  std::unique_ptr<pqxx::work> tx_;
  std::string desc_;
  std::map<std::string, std::pair<std::string, bool>> prepared_;  // text -> (name, prepared on the server)
  int prepared_count_ = 0;
};

std::unique_ptr<driver> connect(const connection_url& u, const open_options& opts) {
  // libpq reads connect_timeout, keepalives, tcp_user_timeout and application_name from
  // the URL; add ours (open_options) for each one the user did not set. `pooler` is
  // dblock's and libpq would refuse it.
  std::string conninfo = url_without_option(u.original, "pooler");
  if (u.scheme == "soci+postgresql" || u.scheme == "soci+postgres") conninfo = conninfo.substr(5);
  auto add = [&](const std::string& key, const std::string& value) {
    if (!u.options.count(key)) conninfo += (conninfo.find('?') == std::string::npos ? "?" : "&") + key + "=" + value;
  };
  for (const auto& [key, value] : libpq_timeouts(opts)) add(key, value);
  add("application_name", percent_encode(connection_name(opts)));
  try {
    auto c = std::make_unique<pqxx::connection>(conninfo);
    auto* raw = c.get();
    auto d = std::make_unique<pqxx_driver>(std::move(c), raw, u.redacted());
    d->set_pooled(u.pooler == pooler_mode::transaction);
    return d;
  } catch (...) {
    try {
      rethrow_classified("cannot connect to " + u.redacted());
    } catch (const error& e) {
      // Connecting failures are all "unreachable" to the caller (exit code 69),
      // except a database that does not exist.
      if (e.kind() == error_kind::schema_missing) throw;
      throw connection_error(e.what(), e.sqlstate(), e.vendor_code());
    }
  }
}

}  // namespace
}  // namespace dblock::detail::pqxx_backend

namespace dblock {

database open_pqxx(std::string_view url, const open_options& opts) {
  auto u = parse_url(url);
  if (u.kind != dialect::postgresql || (u.client != client_library::pqxx))
    throw invalid_argument("open_pqxx needs a postgresql:// URL, got scheme '" + u.scheme + "'");
  auto first = detail::pqxx_backend::connect(u, opts);
  return detail::make_database(std::make_shared<detail::backend>(
      std::move(first), [u](const open_options& o) { return detail::pqxx_backend::connect(u, o); }, opts));
}

database attach(pqxx::connection& conn) {
  return detail::make_database(std::make_shared<detail::backend>(
      std::make_unique<detail::pqxx_backend::pqxx_driver>(nullptr, &conn, "attached pqxx connection")));
}

transaction_ref within(pqxx::transaction_base& tx) {
  return detail::make_transaction_ref(
      std::make_shared<detail::backend>(std::make_unique<detail::pqxx_backend::pqxx_driver>(tx)));
}

}  // namespace dblock
