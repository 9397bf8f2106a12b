// lib/dialects/registry.cpp — maps the dialect enum to each dialect's objects: the one
// place that switches on it (lib/core asks the objects).
#include "core/dialect.hpp"
#include "core/ops/holders.hpp"
#include "core/ops/election.hpp"
#include "core/ops/idempotency.hpp"
#include "core/ops/liveness.hpp"
#include "core/ops/migration.hpp"
#include "core/ops/optimistic.hpp"
#include "core/ops/reaper.hpp"
#include "core/ops/replication.hpp"
#include "core/ops/row_guard.hpp"
#include "core/ops/session_lock.hpp"
#include "dblock/errors.hpp"

namespace dblock::detail {

namespace {
// The one switch: each dialect's object of one kind.
template <typename T>
const T& pick(dialect d, const T& postgresql, const T& mysql, const T& sqlite, const T& mysql8) noexcept {
  switch (d) {
    case dialect::postgresql: return postgresql;
    case dialect::mysql: return mysql;
    case dialect::mysql8: return mysql8;
    case dialect::sqlite: break;
  }
  return sqlite;
}
}  // namespace

const dialect_traits& postgresql_traits() noexcept;
const dialect_traits& mysql_traits() noexcept;
const dialect_traits& sqlite_traits() noexcept;
const dialect_traits& mysql8_traits() noexcept;

const dialect_traits& traits_of(dialect d) noexcept {
  return pick(d, postgresql_traits(), mysql_traits(), sqlite_traits(), mysql8_traits());
}

void mysql_server_info::add(std::string_view variable, std::string_view value) {
  if (variable == "version") version = std::string(value);
  if (variable == "wsrep_on") galera = value == "ON" || value == "1";
}

dialect mysql_family_dialect(const mysql_server_info& server) noexcept {
  return server.version.find("MariaDB") != std::string::npos && !server.galera ? dialect::mysql : dialect::mysql8;
}

void check_dialect_for_server(dialect given, const mysql_server_info& server) {
  if (given == dialect::mysql && server.galera)
    throw invalid_argument(
        "?dialect=mysql: this server is a node of a Galera cluster (wsrep_on = ON), where MariaDB's "
        "sequence-based fences are refused; leave ?dialect out or use ?dialect=mysql8 (fences from a "
        "replicated counter row)");
}

// --- statement families other than leases (lib/core/ops/, lib/dialects/<dialect>/) ---

const session_lock_ops& postgresql_session_locks() noexcept;
const session_lock_ops& mysql_session_locks() noexcept;
const session_lock_ops& sqlite_session_locks() noexcept;
const session_lock_ops& mysql8_session_locks() noexcept;
const session_lock_ops& session_locks_for(dialect d) noexcept {
  return pick(d, postgresql_session_locks(), mysql_session_locks(), sqlite_session_locks(), mysql8_session_locks());
}

const liveness_ops& postgresql_liveness_ops() noexcept;
const liveness_ops& mysql_liveness_ops() noexcept;
const liveness_ops& sqlite_liveness_ops() noexcept;
const liveness_ops& mysql8_liveness_ops() noexcept;
const liveness_ops& liveness_for(dialect d) noexcept {
  return pick(d, postgresql_liveness_ops(), mysql_liveness_ops(), sqlite_liveness_ops(), mysql8_liveness_ops());
}

const migration_ops& postgresql_migrations() noexcept;
const migration_ops& mysql_migrations() noexcept;
const migration_ops& sqlite_migrations() noexcept;
const migration_ops& mysql8_migrations() noexcept;
const migration_ops& migrations_for(dialect d) noexcept {
  return pick(d, postgresql_migrations(), mysql_migrations(), sqlite_migrations(), mysql8_migrations());
}

const reaper_ops& postgresql_reaper() noexcept;
const reaper_ops& mysql_reaper() noexcept;
const reaper_ops& sqlite_reaper() noexcept;
const reaper_ops& mysql8_reaper() noexcept;
const reaper_ops& reaper_for(dialect d) noexcept { return pick(d, postgresql_reaper(), mysql_reaper(), sqlite_reaper(), mysql8_reaper()); }

const row_guard_ops& postgresql_row_guards() noexcept;
const row_guard_ops& mysql_row_guards() noexcept;
const row_guard_ops& sqlite_row_guards() noexcept;
const row_guard_ops& mysql8_row_guards() noexcept;
const row_guard_ops& row_guards_for(dialect d) noexcept {
  return pick(d, postgresql_row_guards(), mysql_row_guards(), sqlite_row_guards(), mysql8_row_guards());
}

const optimistic_ops& postgresql_optimistic() noexcept;
const optimistic_ops& mysql_optimistic() noexcept;
const optimistic_ops& sqlite_optimistic() noexcept;
const optimistic_ops& mysql8_optimistic() noexcept;
const optimistic_ops& optimistic_for(dialect d) noexcept {
  return pick(d, postgresql_optimistic(), mysql_optimistic(), sqlite_optimistic(), mysql8_optimistic());
}

const replication_ops& postgresql_replication() noexcept;
const replication_ops& mysql_replication() noexcept;
const replication_ops& sqlite_replication() noexcept;
const replication_ops& mysql8_replication() noexcept;
const replication_ops& replication_for(dialect d) noexcept {
  return pick(d, postgresql_replication(), mysql_replication(), sqlite_replication(), mysql8_replication());
}

const holders_ops& postgresql_holders() noexcept;
const holders_ops& mysql_holders() noexcept;
const holders_ops& sqlite_holders() noexcept;
const holders_ops& mysql8_holders() noexcept;
const holders_ops& holders_for(dialect d) noexcept {
  return pick(d, postgresql_holders(), mysql_holders(), sqlite_holders(), mysql8_holders());
}

// --- end of statement families other than leases ---

const idempotency_ops& postgresql_idempotency() noexcept;
const idempotency_ops& mysql_idempotency() noexcept;
const idempotency_ops& sqlite_idempotency() noexcept;
const idempotency_ops& mysql8_idempotency() noexcept;
const idempotency_ops& idempotency_for(dialect d) noexcept {
  return pick(d, postgresql_idempotency(), mysql_idempotency(), sqlite_idempotency(), mysql8_idempotency());
}

const election_ops& postgresql_elections() noexcept;
const election_ops& mysql_elections() noexcept;
const election_ops& sqlite_elections() noexcept;
const election_ops& mysql8_elections() noexcept;
const election_ops& elections_for(dialect d) noexcept {
  return pick(d, postgresql_elections(), mysql_elections(), sqlite_elections(), mysql8_elections());
}

}  // namespace dblock::detail
