// lib/cli/migrate.cpp — `dblock migrate [--dir DIR] [--scope NAME] [--lock-tables MODE]`:
// dblock's own schema (and the lock tables' logged/unlogged switch), then the user's folder
// of NNNN_name.sql files under its own history scope.
#include <iostream>

#include "cli/commands.hpp"
#include "dblock/open.hpp"

namespace dblock::cli {

namespace {
struct migrate_args {
  std::optional<std::string> dir;
  std::string scope = "app";
  std::optional<std::string> lock_tables;  // "logged" or "unlogged" (CLI11 checks)
};

int run_migrate(const global_options& g, const migrate_args& a) {
  auto db = open(resolve_url(g).url);
  migrate_options mo;
  mo.replication = replication_of(g);
  if (a.lock_tables) mo.lock_tables = *a.lock_tables == "unlogged" ? lock_table_mode::unlogged : lock_table_mode::logged;
  auto own = db.migrate(mo);
  for (const auto& m : own.applied) std::cout << "applied " << m.scope << " " << m.file << "\n";
  std::size_t total_new = own.applied.size(), total_old = own.already_applied;
  if (a.dir) {
    auto user = db.migrate_dir(*a.dir, a.scope);
    for (const auto& m : user.applied) std::cout << "applied " << m.scope << " " << m.file << "\n";
    total_new += user.applied.size();
    total_old += user.already_applied;
  }
  if (a.lock_tables) std::cout << "lock tables: " << *a.lock_tables << "\n";
  std::cout << "migrations: " << total_new << " applied, " << total_old << " already applied (" << db.describe()
            << ")\n";
  return exit_ok;
}
}  // namespace

void add_migrate_commands(CLI::App& app, global_options& g, command_registry& reg) {
  auto args = std::make_shared<migrate_args>();
  auto* sub = app.add_subcommand("migrate", "Apply dblock's schema, then the migrations in --dir");
  sub->add_option("--dir", args->dir, "A folder of NNNN_name.sql migrations of your own")->check(CLI::ExistingDirectory);
  sub->add_option("--scope", args->scope, "History scope for --dir migrations")->capture_default_str();
  sub->add_option("--lock-tables", args->lock_tables,
                  "Switch the lock tables to logged or unlogged (PostgreSQL; unlogged: no WAL, a crash frees every lock)")
      ->check(CLI::IsMember({"logged", "unlogged"}));
  reg.add(sub, [&g, args] { return run_migrate(g, *args); });
}

}  // namespace dblock::cli
