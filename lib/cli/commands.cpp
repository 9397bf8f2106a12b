// lib/cli/commands.cpp — implementations of the dblock subcommands (see commands.hpp).
// stdout carries results only; diagnostics go to stderr via main.cpp.
#include <cstdlib>
#include <iostream>

#include "cli/commands.hpp"
#include "dblock/errors.hpp"
#include "dblock/open.hpp"

namespace dblock::cli {

resolved_url resolve_url(const global_options& g) {
  if (g.url) return {*g.url, false};
  if (const char* env = std::getenv("DBLOCK_URL"); env && *env) return {env, false};
  return {std::string(default_url), true};
}

database connect(const global_options& g) {
  auto r = resolve_url(g);
  auto db = open(r.url);
  if (r.embedded_default) db.migrate();
  return db;
}

int run_migrate(const global_options& g, const migrate_args& a) {
  auto db = open(resolve_url(g).url);
  auto own = db.migrate();
  for (const auto& m : own.applied) std::cout << "applied " << m.scope << " " << m.file << "\n";
  std::size_t total_new = own.applied.size(), total_old = own.already_applied;
  if (a.dir) {
    auto user = db.migrate_dir(*a.dir, a.scope);
    for (const auto& m : user.applied) std::cout << "applied " << m.scope << " " << m.file << "\n";
    total_new += user.applied.size();
    total_old += user.already_applied;
  }
  std::cout << "migrations: " << total_new << " applied, " << total_old << " already applied (" << db.describe()
            << ")\n";
  return exit_ok;
}

}  // namespace dblock::cli
