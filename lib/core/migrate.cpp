// lib/core/migrate.cpp — the migration runner: dblock's own embedded schema
// (migrations/<dialect>/NNNN_name.sql, scope "dblock") and a user's folder (own scope).
// Serialization across processes: PostgreSQL advisory lock / MySQL GET_LOCK held for
// the whole run; SQLite runs everything in one BEGIN IMMEDIATE transaction; PostgreSQL
// behind a transaction pooler takes a transaction-scoped advisory lock in each
// migration's own transaction (run_pooled); a Galera cluster, where GET_LOCK holds on
// one node only, a renewed lease row (migration_lease.hpp).
// Each migration is recorded with a SHA-256 of its bytes; an edited, already-applied
// file is refused. MySQL DDL commits implicitly: a failure stops the run, names the
// file and statement, and the migration is not recorded.
#include <algorithm>
#include <functional>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "core/backend.hpp"
#include "core/crypto.hpp"
#include "core/dialect.hpp"
#include "core/migration_lease.hpp"
#include "core/ops/migration.hpp"
#include "core/ops/replication.hpp"
#include "dblock/errors.hpp"

namespace dblock {

namespace {

struct migration_file {
  migration_info info;
  std::string text;
};

const std::regex& file_pattern() {
  static const std::regex re(R"(^([0-9]{1,9})_([A-Za-z0-9_\-]+)\.sql$)");
  return re;
}

void add_file(std::vector<migration_file>& out, const std::string& scope, const std::string& filename,
              const std::string& display, std::string text) {
  std::smatch m;
  if (!std::regex_match(filename, m, file_pattern()))
    throw invalid_argument("migration file name '" + display + "' does not match NNNN_name.sql");
  migration_file f;
  f.info.scope = scope;
  f.info.version = std::stoi(m[1].str());
  f.info.name = m[2].str();
  f.info.file = display;
  f.info.checksum = detail::sha256_hex(text);
  f.text = std::move(text);
  for (const auto& other : out)
    if (other.info.version == f.info.version)
      throw invalid_argument("migrations '" + other.info.file + "' and '" + display + "' share version " +
                             std::to_string(f.info.version));
  out.push_back(std::move(f));
}

std::vector<migration_file> embedded_migrations(dialect d) {
  std::vector<migration_file> out;
  std::string prefix = "migrations/" + std::string(detail::traits_of(d).name) + "/";
  for (std::size_t i = 0; i < detail::embedded_file_count; ++i) {
    std::string_view path = detail::embedded_files[i].path;
    if (!path.starts_with(prefix)) continue;
    add_file(out, "dblock", std::string(path.substr(prefix.size())), std::string(path), detail::embedded_files[i].text);
  }
  return out;
}

std::vector<migration_file> folder_migrations(const std::filesystem::path& dir, const std::string& scope, dialect d) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw invalid_argument("migration directory '" + dir.string() + "' does not exist");
  fs::path use = dir;
  // The dialect's own subfolder, else its family's (MySQL 8.0 runs a user's mysql/ folder).
  const char* family = detail::traits_of(detail::traits_of(d).family).name;
  if (fs::is_directory(dir / detail::traits_of(d).name, ec)) use = dir / detail::traits_of(d).name;
  else if (fs::is_directory(dir / family, ec)) use = dir / family;
  std::vector<migration_file> out;
  for (const auto& entry : fs::directory_iterator(use)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".sql") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    if (!in) throw invalid_argument("cannot read migration file '" + entry.path().string() + "'");
    std::ostringstream ss;
    ss << in.rdbuf();
    add_file(out, scope, entry.path().filename().string(), entry.path().string(), ss.str());
  }
  return out;
}

void check_scope(const std::string& scope) {
  if (scope.empty() || scope.size() > 64)
    throw invalid_argument("migration scope '" + scope + "' must be 1 to 64 bytes");
}

// Runs one file's statements; wraps failures with the file and statement.
void apply_statements(detail::backend& b, const migration_file& f) {
  auto stmts = detail::split_statements(f.text);
  for (std::size_t i = 0; i < stmts.size(); ++i) {
    try {
      b.run_script(stmts[i]);
    } catch (const error& e) {
      if (e.kind() == error_kind::connection || e.kind() == error_kind::commit_unknown) throw;
      std::string excerpt = stmts[i].substr(0, 120);
      std::replace(excerpt.begin(), excerpt.end(), '\n', ' ');
      throw migration_error("migration " + f.info.file + " failed at statement " + std::to_string(i + 1) + " (" +
                                excerpt + (stmts[i].size() > 120 ? "..." : "") + "): " + e.what() +
                                "; it was not recorded as applied",
                            e.sqlstate(), e.vendor_code());
    }
  }
}

[[noreturn]] void lock_timeout(detail::backend& b, const migrate_options& opts) {
  throw timeout_error("another process has held the migration lock for more than " +
                      std::to_string(opts.lock_wait.count()) + " ms in " + b.describe());
}

void check_unchanged(const migration_file& f, const migration_info& recorded) {
  if (recorded.checksum != f.info.checksum)
    throw migration_error("migration " + f.info.file + " was edited after it was applied (recorded sha256 " +
                          recorded.checksum.substr(0, 12) + "..., file now " + f.info.checksum.substr(0, 12) +
                          "...); add a new migration instead");
}

// Behind a transaction pooler no lock may outlive a transaction, so the run's session
// lock becomes one transaction per step, each taking the migration lock first (a
// transaction-scoped advisory lock) and reading the history under it: the history
// table's creation, then every file with its history row. A concurrent migrator waits
// at each step and then finds the file recorded. Each file still commits on its own.
migrate_result run_pooled(detail::backend& b, const std::vector<migration_file>& files, const std::string& scope,
                          const migrate_options& opts, const std::function<void()>& after) {
  const auto deadline = std::chrono::steady_clock::now() + opts.lock_wait;
  migrate_result res;
  b.in_transaction([&] {
    if (!b.migration_lock_in_transaction(deadline)) lock_timeout(b, opts);
    b.ensure_history_table();
  });
  for (const auto& f : files) {
    b.in_transaction([&] {
      if (!b.migration_lock_in_transaction(deadline)) lock_timeout(b, opts);
      for (const auto& m : b.applied(scope)) {
        if (m.version != f.info.version) continue;
        check_unchanged(f, m);
        ++res.already_applied;
        return;
      }
      apply_statements(b, f);
      b.record_migration(f.info);
      res.applied.push_back(f.info);
    });
  }
  if (after)
    b.in_transaction([&] {
      if (!b.migration_lock_in_transaction(deadline)) lock_timeout(b, opts);
      after();
    });
  return res;
}

// `after` (may be empty) runs once the files are applied, under the same migration lock.
migrate_result run(detail::backend& b, std::vector<migration_file> files, const std::string& scope,
                   const migrate_options& opts, const std::function<void()>& after = {}) {
  std::sort(files.begin(), files.end(),
            [](const migration_file& a, const migration_file& c) { return a.info.version < c.info.version; });
  if (b.pooled()) return run_pooled(b, files, scope, opts, after);
  const auto& ops = detail::migrations_for(b.kind());
  migrate_result res;
  std::unique_ptr<detail::migration_lease> lease;  // Galera's migration lock
  auto body = [&] {
    b.ensure_history_table();
    std::map<int, migration_info> done;
    for (auto& m : b.applied(scope)) done[m.version] = m;
    for (const auto& f : files) {
      if (auto it = done.find(f.info.version); it != done.end()) {
        check_unchanged(f, it->second);
        ++res.already_applied;
        continue;
      }
      if (lease) lease->check("migration " + f.info.file + " was not applied");
      if (ops.transactional_ddl()) {
        // The file and its history row commit together.
        b.in_transaction([&] {
          apply_statements(b, f);
          b.record_migration(f.info);
        });
      } else {
        apply_statements(b, f);  // SQLite: inside the run's transaction; MySQL: autocommitted DDL
        if (lease) lease->check("migration " + f.info.file + " ran but was not recorded as applied");
        b.record_migration(f.info);
      }
      res.applied.push_back(f.info);
    }
    if (after) {
      if (lease) lease->check("the lock tables were not switched");
      after();
    }
  };

  if (ops.one_transaction()) {
    b.in_transaction(body);  // BEGIN IMMEDIATE: other migrators wait on the busy timeout
    return res;
  }
  if (b.multi_primary()) {
    lease = std::make_unique<detail::migration_lease>(b, opts.lock_wait, opts.cluster_lock_ttl);
    body();
    lease->release();
    return res;
  }
  if (!b.migration_lock(opts.lock_wait)) lock_timeout(b, opts);
  try {
    body();
  } catch (...) {
    b.migration_unlock();
    throw;
  }
  b.migration_unlock();
  return res;
}

}  // namespace

migrate_result database::migrate(const migrate_options& opts) {
  const auto& ops = detail::migrations_for(kind());
  if (opts.lock_tables == lock_table_mode::unlogged && !ops.unlogged_lock_tables())
    throw invalid_argument(std::string("unlogged lock tables exist only on PostgreSQL, not on ") + to_string(kind()) +
                           " (" + describe() + ")");
  std::function<void()> after;
  if (opts.lock_tables != lock_table_mode::keep) after = [&] { ops.set_lock_tables(*impl_->b, opts.lock_tables); };
  auto res = run(*impl_->b, embedded_migrations(kind()), "dblock", opts, after);
  // After the schema work: a refusal must not leave a half-migrated schema behind, and a
  // deploy learns of the risk where it is looked at.
  if (opts.replication != replication_policy::ignore) {
    (void)impl_->b->first_replication_check();  // this handle's sessions need not warn again
    detail::check_replication_now(*impl_->b, opts.replication, "migrate");
  }
  return res;
}

migrate_result database::migrate_dir(const std::filesystem::path& dir, const std::string& scope,
                                     const migrate_options& opts) {
  check_scope(scope);
  if (scope == "dblock") throw invalid_argument("migration scope 'dblock' is reserved for dblock's own schema");
  return run(*impl_->b, folder_migrations(dir, scope, kind()), scope, opts);
}

}  // namespace dblock
