// lib/cli/commands.hpp — the dblock command's subcommands, one function each; main.cpp
// parses arguments (CLI11) and maps exceptions to the documented exit codes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/args.hpp"
#include "dblock/database.hpp"

namespace dblock::cli {

// Exit codes (sysexits.h numbers; documented in dblock(1) and the README).
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;       // the server refused something else
inline constexpr int exit_no_leader = 3;     // leader: nobody leads the election
inline constexpr int exit_usage = 64;        // bad usage or invalid input
inline constexpr int exit_migration = 65;    // a migration failed or an applied one was edited
inline constexpr int exit_unavailable = 69;  // database unreachable
inline constexpr int exit_lock_lost = 74;    // lock lost while the command ran
inline constexpr int exit_not_acquired = 75; // lock not acquired within --wait
inline constexpr int exit_release_failed = 76;  // exec: the command succeeded, the release failed
inline constexpr int exit_schema = 78;       // schema missing: run `dblock migrate`

struct global_options {
  std::optional<std::string> url;  // --url; else DBLOCK_URL; else the embedded SQLite default
  std::optional<std::string> pooler;  // --pooler MODE: added to the URL as ?pooler=MODE
  std::string replication = "warn";   // --replication: warn, refuse or ignore (replication_policy)
};

// --replication as the library's policy.
[[nodiscard]] replication_policy replication_of(const global_options& g);

// The URL to use and whether it is the embedded default (which migrates itself).
struct resolved_url {
  std::string url;
  bool embedded_default = false;
};
[[nodiscard]] resolved_url resolve_url(const global_options& g);

// Opens the database; the embedded SQLite default is migrated on first use.
[[nodiscard]] database connect(const global_options& g);

// Each feature file adds its subcommands here: add_<feature>_commands(app, g, reg)
// registers CLI11 subcommands and the action main() runs when one was parsed.
struct command_registry {
  std::vector<std::pair<CLI::App*, std::function<int()>>> entries;
  void add(CLI::App* sub, std::function<int()> run) { entries.emplace_back(sub, std::move(run)); }
};

void add_migrate_commands(CLI::App& app, global_options& g, command_registry& reg);  // migrate.cpp
void add_lock_commands(CLI::App& app, global_options& g, command_registry& reg);     // locks.cpp
// Notes the descriptors the command was started with (main, before anything opens one):
// `dblock exec` passes exactly those to the command it runs, never its own connections.
void remember_inherited_descriptors();  // locks.cpp
void add_reap_commands(CLI::App& app, global_options& g, command_registry& reg);     // reap.cpp
void add_idempotency_commands(CLI::App& app, global_options& g, command_registry& reg);  // idempotency.cpp

}  // namespace dblock::cli
