// dblock/replication.hpp — whether the server's replication setup can lose a committed
// grant on failover, and what dblock does when it finds one (docs/operations.md,
// "Deployment topologies"). Sessions and migrations check once per database handle;
// check_replication() reads the same report on demand.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace dblock {

class database;

// What a session start or a migration does on a setup that can lose a committed grant
// (standbys replicating asynchronously, synchronous_commit = off/local/remote_write):
//   warn   - a warning line (on_warning) and the counter replication_unsafe;
//   refuse - throws unsafe_replication (after counting), nothing else happens;
//   ignore - no check (no round trip).
enum class replication_policy { warn, refuse, ignore };

struct replication_report {
  // True when a grant the client saw committed can be missing on a promoted standby
  // (or after a crash, with synchronous_commit = off).
  bool can_lose_grants = false;
  std::vector<std::string> reasons;  // one sentence per finding; empty when safe
  int standbys = 0;                  // standbys streaming from this server (PostgreSQL)
};

// Reads the server's replication settings (one round trip on PostgreSQL; MariaDB and
// SQLite report nothing at risk: dblock cannot see their replication).
[[nodiscard]] replication_report check_replication(database& db);

// Process-wide: receives each warning dblock emits, one line without a trailing newline
// (the `dblock` command prints them to stderr). Called from the thread that found the
// condition; keep it short, never throw. Pass an empty function to remove. Default: none
// (warnings are then only counted, see metrics.hpp).
void on_warning(std::function<void(const std::string& line)> cb);

}  // namespace dblock
