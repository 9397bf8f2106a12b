// lib/cli/commands.cpp — what the dblock subcommands share: URL resolution and connecting
// (see commands.hpp); each subcommand lives in its own lib/cli/<feature>.cpp.
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
  // The embedded default migrates itself; any other database must have been migrated
  // (schema_missing -> exit 78 with "run `dblock migrate`").
  if (r.embedded_default) db.migrate();
  else db.require_schema();
  return db;
}

}  // namespace dblock::cli
