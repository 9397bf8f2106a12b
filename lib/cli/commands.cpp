// lib/cli/commands.cpp — what the dblock subcommands share: URL resolution and connecting
// (see commands.hpp); each subcommand lives in its own lib/cli/<feature>.cpp.
// stdout carries results only; diagnostics go to stderr via main.cpp.
#include <cstdlib>
#include <iostream>

#include "cli/commands.hpp"
#include "core/backend.hpp"
#include "dblock/errors.hpp"
#include "dblock/open.hpp"

namespace dblock::cli {

namespace {
// --pooler is the URL's ?pooler= option (it overrides one already there); the URL parser
// checks the value and the scheme, so the message is the same either way.
std::string with_pooler(std::string url, const global_options& g) {
  if (!g.pooler) return url;
  url = detail::url_without_option(url, "pooler");
  return url + (url.find('?') == std::string::npos ? "?" : "&") + "pooler=" + detail::percent_encode(*g.pooler);
}
}  // namespace

resolved_url resolve_url(const global_options& g) {
  if (g.url) return {with_pooler(*g.url, g), false};
  if (const char* env = std::getenv("DBLOCK_URL"); env && *env) return {with_pooler(env, g), false};
  return {with_pooler(std::string(default_url), g), true};
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

replication_policy replication_of(const global_options& g) {
  if (g.replication == "refuse") return replication_policy::refuse;
  if (g.replication == "ignore") return replication_policy::ignore;
  return replication_policy::warn;
}

}  // namespace dblock::cli
