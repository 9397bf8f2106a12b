// lib/cli/main.cpp — entry point of the dblock command: CLI11 parsing, and the one
// place where exceptions become one stderr line "dblock: ..." and an exit code.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.hpp"
#include "dblock/errors.hpp"
#include "dblock/replication.hpp"
#include "dblock/version.hpp"

namespace {

int report(const std::string& msg, int code) {
  std::string line = msg;
  for (auto& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::cerr << "dblock: " << line << std::endl;
  return code;
}

int exit_code_for(const dblock::error& e) {
  using dblock::error_kind;
  namespace c = dblock::cli;
  switch (e.kind()) {
    case error_kind::invalid_argument: return c::exit_usage;
    case error_kind::connection: return c::exit_unavailable;
    case error_kind::schema_missing: return c::exit_schema;
    case error_kind::migration: return c::exit_migration;
    case error_kind::lock_lost: return c::exit_lock_lost;
    case error_kind::timeout: return c::exit_not_acquired;
    default: return c::exit_failure;
  }
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = dblock::cli;
  cli::remember_inherited_descriptors();
  // Library warnings (a replication setup that can lose grants) as stderr lines.
  dblock::on_warning([](const std::string& line) { report(line, 0); });
  CLI::App app{"dblock: leased locks, fencing tokens and idempotency keys on your SQL database"};
  app.name("dblock");
  app.set_version_flag("--version", "dblock " DBLOCK_VERSION);
  app.require_subcommand(1);

  cli::global_options g;
  app.add_option("--url", g.url,
                 "Database URL: postgresql://, mysql://, sqlite:PATH, soci+postgresql://, soci+mysql:// "
                 "(default: $DBLOCK_URL, else sqlite:dblock.db)");
  app.add_option("--pooler", g.pooler,
                 "transaction: PostgreSQL is reached through a pooler in transaction pooling mode "
                 "(PgBouncer); the same as ?pooler=transaction in the URL");
  app.add_option("--replication", g.replication,
                 "warn (default): a warning on stderr when PostgreSQL's replication can lose a committed grant "
                 "on failover; refuse: fail instead; ignore: do not check")
      ->check(CLI::IsMember({"warn", "refuse", "ignore"}));

  // One line per feature file (lib/cli/<feature>.cpp).
  cli::command_registry reg;
  cli::add_migrate_commands(app, g, reg);
  cli::add_lock_commands(app, g, reg);
  cli::add_reap_commands(app, g, reg);
  cli::add_idempotency_commands(app, g, reg);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return report(std::string(e.what()) + " (see dblock --help)", cli::exit_usage);
  }

  try {
    for (auto& [sub, run] : reg.entries)
      if (sub->parsed()) return run();
    return report("no command given (see dblock --help)", cli::exit_usage);
  } catch (const dblock::error& e) {
    return report(e.what(), exit_code_for(e));
  } catch (const std::exception& e) {
    return report(e.what(), cli::exit_failure);
  }
}
