// lib/core/database.cpp — the backend operations (backend.hpp) written once over a
// driver, and the public dblock::database handle that forwards to them.

#include <unistd.h>

#include <cctype>
#include <utility>

#include "core/backend.hpp"
#include "core/dialect.hpp"
#include "core/ops/migration.hpp"
#include "dblock/errors.hpp"

namespace dblock::detail {

backend::backend(std::unique_ptr<driver> d, driver_factory reopen, open_options opts)
    : driver_(std::move(d)),
      reopen_(std::move(reopen)),
      opts_(std::move(opts)),
      kind_(driver_->kind()),
      client_(driver_->client()),
      pooled_(driver_->pooled()) {}

backend::~backend() = default;

std::string backend::describe() const { return driver_->describe(); }

std::uint64_t backend::round_trips() const noexcept {
  std::lock_guard lock(mu_);
  return retired_round_trips_ + driver_->round_trips();
}

// A connection this backend opened itself and lost is replaced before the next
// statement (never in the middle of a transaction, never for an attached connection):
// Connector/C++ and SOCI do not reconnect by themselves, and a silent reconnect inside
// a transaction would hide the loss. The failed statement itself is not retried.
void backend::revive() {
  if (!broken_ || !reopen_ || driver_->in_transaction()) return;
  auto fresh = reopen_(opts_);
  std::unique_ptr<driver> old;
  {
    std::lock_guard swap(swap_mu_);
    retired_round_trips_ += driver_->round_trips();
    old = std::exchange(driver_, std::move(fresh));
  }
  broken_ = false;
  ++connection_number_;
}

std::uint64_t backend::connection_number() const noexcept {
  std::lock_guard lock(mu_);
  return connection_number_;
}

template <typename F>
auto backend::guarded(F&& f) -> decltype(f()) {
  revive();
  try {
    return f();
  } catch (const error& e) {
    if ((e.kind() == error_kind::connection || e.kind() == error_kind::commit_unknown) && !driver_->in_transaction())
      broken_ = true;
    throw;
  }
}

void backend::with_driver(const std::function<void(driver&)>& fn) {
  std::lock_guard lock(mu_);
  guarded([&] { fn(*driver_); });
}

std::shared_ptr<backend> backend::reopen() const {
  if (!reopen_) throw invalid_argument("this database wraps an attached connection; dblock cannot open another one");
  return reopen(opts_);
}

std::shared_ptr<backend> backend::reopen(const open_options& opts) const {
  if (!reopen_) throw invalid_argument("this database wraps an attached connection; dblock cannot open another one");
  return std::make_shared<backend>(reopen_(opts), reopen_, opts);
}

namespace {
void check_timeouts(const open_options& opts) {
  if (opts.network_timeout < std::chrono::seconds(1))
    throw invalid_argument("network_timeout " + std::to_string(opts.network_timeout.count()) +
                           " ms is too short (at least 1000 ms)");
  if (opts.connect_timeout < std::chrono::seconds(1))
    throw invalid_argument("connect_timeout " + std::to_string(opts.connect_timeout.count()) +
                           " s is too short (at least 1 s)");
}
}  // namespace

std::vector<std::pair<std::string, std::string>> libpq_timeouts(const open_options& opts) {
  check_timeouts(opts);
  const long long ms = opts.network_timeout.count();
  const long long s = (ms + 999) / 1000;
  // Silent for network_timeout / 2, then 3 unanswered probes network_timeout / 6 apart:
  // a dead peer is noticed about network_timeout after the last byte it sent.
  return {{"connect_timeout", std::to_string(opts.connect_timeout.count())},
          {"keepalives", "1"},
          {"keepalives_idle", std::to_string(std::max(1LL, s / 2))},
          {"keepalives_interval", std::to_string(std::max(1LL, s / 6))},
          {"keepalives_count", "3"},
          {"tcp_user_timeout", std::to_string(ms)}};
}

std::string connection_name(const open_options& opts) {
  std::string name = opts.application_name;
  if (name.empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    name = "dblock " + std::string(host) + ":" + std::to_string(::getpid());
  }
  if (name.size() > 63) {
    std::size_t n = 63;
    // Do not end inside a UTF-8 sequence: back up over continuation bytes.
    while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;
    name.resize(n);
  }
  return name;
}

std::string percent_encode(std::string_view s) {
  static const char digits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

int mysql_io_timeout_seconds(const open_options& opts) {
  check_timeouts(opts);
  return static_cast<int>((opts.network_timeout.count() + 999) / 1000);
}

void backend::interrupt() noexcept {
  std::lock_guard swap(swap_mu_);
  driver_->interrupt();
}

result backend::exec_locked(std::string_view name, std::span<const value> params) {
  return guarded([&] { return driver_->run(get_statement(kind_, driver_->style(), name), params); });
}

result backend::exec(std::string_view name, std::span<const value> params) {
  std::lock_guard lock(mu_);
  return exec_locked(name, params);
}

result backend::exec(std::string_view name, std::initializer_list<value> params) {
  return exec(name, std::span<const value>(params.begin(), params.size()));
}

result backend::exec_unless_in_transaction(std::string_view outside, std::string_view inside,
                                           std::span<const value> params) {
  std::lock_guard lock(mu_);
  return exec_locked(driver_->in_transaction() ? inside : outside, params);
}

result backend::exec_statement(const statement& st, std::span<const value> params) {
  std::lock_guard lock(mu_);
  return guarded([&] { return driver_->run(st, params); });
}

void backend::in_transaction(const std::function<void()>& fn) {
  std::lock_guard lock(mu_);
  if (driver_->in_transaction()) throw internal_error("nested transaction on one dblock connection");
  guarded([&] { driver_->begin(); });
  try {
    fn();
  } catch (const error& e) {
    driver_->rollback();
    if (e.kind() == error_kind::connection) broken_ = true;
    throw;
  } catch (...) {
    driver_->rollback();
    throw;
  }
  guarded([&] { driver_->commit(); });
}

void backend::ping() { exec("ping"); }

bool backend::multi_primary() {
  std::lock_guard lock(mu_);
  if (multi_primary_) return *multi_primary_;
  if (traits_of(kind_).family != dialect::mysql) return *(multi_primary_ = false);
  if (auto known = driver_->multi_primary()) return *(multi_primary_ = known);
  mysql_server_info info;
  for (const auto& row : exec_statement(get_statement(dialect::mysql, driver_->style(), "server_info")).rows)
    info.add(row.at(0).value_or(""), row.at(1).value_or(""));
  return *(multi_primary_ = info.galera);
}

void backend::set_busy_timeout(std::chrono::milliseconds wait) {
  std::lock_guard lock(mu_);
  driver_->set_busy_timeout(wait);
}

void backend::run_script(std::string_view sql) {
  std::lock_guard lock(mu_);
  guarded([&] { driver_->run_script(sql); });
}

bool backend::schema_present() {
  const auto& ops = migrations_for(kind_);
  if (!ops.history_present(*this)) return false;
  auto have = ops.applied(*this, "dblock");
  std::size_t want = 0;
  std::string prefix = "migrations/" + std::string(traits_of(kind_).name) + "/";
  for (std::size_t i = 0; i < embedded_file_count; ++i)
    if (std::string_view(embedded_files[i].path).starts_with(prefix)) ++want;
  return have.size() >= want;
}

bool backend::migration_lock_in_transaction(std::chrono::steady_clock::time_point deadline) {
  return migrations_for(kind_).lock_in_transaction(*this, deadline);
}

bool backend::migration_lock(std::chrono::milliseconds wait) { return migrations_for(kind_).lock(*this, wait); }

void backend::migration_unlock() noexcept { migrations_for(kind_).unlock(*this); }

void backend::ensure_history_table() {
  if (migrations_for(kind_).history_present(*this)) return;
  // The history table is the runner's bootstrap, so it lives in sql/ not migrations/.
  for (const auto& s : split_statements(find_embedded(
           ("sql/" + std::string(traits_of(kind_).name) + "/history_create.sql").c_str())))
    run_script(s);
}

std::vector<migration_info> backend::applied(const std::string& scope) { return migrations_for(kind_).applied(*this, scope); }

void backend::record_migration(const migration_info& m) {
  exec("history_insert", {m.scope, static_cast<std::int64_t>(m.version), m.name, m.checksum});
}

}  // namespace dblock::detail

namespace dblock {

database::database(std::shared_ptr<impl> p) : impl_(std::move(p)) {}

database internal_access::make_database(std::shared_ptr<detail::backend> b) {
  if (!b) throw invalid_argument("dblock::database needs a connection");
  return database(std::make_shared<database::impl>(database::impl{std::move(b)}));
}
database::~database() = default;

dialect database::kind() const noexcept { return impl_->b->kind(); }
client_library database::client() const noexcept { return impl_->b->client(); }
std::string database::describe() const { return impl_->b->describe(); }
std::uint64_t database::round_trips() const noexcept { return impl_->b->round_trips(); }
void database::ping() { impl_->b->ping(); }

void database::require_schema() {
  bool ok = false;
  try {
    ok = impl_->b->schema_present();
  } catch (const schema_missing&) {
    ok = false;
  }
  if (!ok)
    throw schema_missing("dblock schema is missing or incomplete in " + describe() + "; run `dblock migrate`");
}

std::vector<migration_info> database::applied_migrations(const std::string& scope) {
  if (!detail::migrations_for(kind()).history_present(*impl_->b)) return {};
  return impl_->b->applied(scope);
}

}  // namespace dblock
