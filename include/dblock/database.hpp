// dblock/database.hpp — a handle on one database connection that dblock's
// primitives run on. Obtain one with dblock::open(url) (dblock/open.hpp), or wrap
// a connection you already hold with dblock::attach(...) (dblock/pqxx.hpp,
// dblock/mysql.hpp, dblock/soci.hpp). Copies share the same connection; calls on
// one database are serialized by an internal mutex.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dblock/replication.hpp"
#include "dblock/url.hpp"

namespace dblock {

// Where the lock tables (dblock_locks, dblock_lock_waiters, dblock_lock_holders) keep
// their rows on PostgreSQL. docs/locks.md, "Unlogged lock tables", says what each gives up.
enum class lock_table_mode {
  keep,      // leave them as they are (a new schema is logged)
  logged,    // written to the WAL: a grant survives a crash and reaches standbys
  unlogged,  // PostgreSQL only: no WAL, no commit flush; a server crash, restart after a
             // crash or failover frees every lock; fences still keep increasing
};

// Options for running migrations.
struct migrate_options {
  // How long to wait for the migration lock held by another deploy. Default 60 s.
  std::chrono::milliseconds lock_wait{60'000};
  // On a Galera cluster the migration lock is a lease row (GET_LOCK holds on one node only),
  // renewed every third of this while the run lasts: a migrator that died keeps later ones
  // waiting at most this long. At least 3 s. Default 30 s. Unused elsewhere.
  std::chrono::milliseconds cluster_lock_ttl{30'000};
  // After migrating: does the server's replication risk losing a committed grant on
  // failover (replication.hpp)? Default: replication_policy::warn.
  replication_policy replication = replication_policy::warn;
  // After the schema steps, under the same migration lock: switch the lock tables to
  // logged or unlogged (lock_table_mode). Default keep. unlogged on another database than
  // PostgreSQL is refused with invalid_argument before anything runs. A switch rewrites the
  // three tables under an exclusive table lock: lock traffic waits for it.
  lock_table_mode lock_tables = lock_table_mode::keep;
};

struct migration_info {
  std::string scope;    // "dblock" for dblock's own schema, or the user's scope
  int version = 0;      // NNNN from NNNN_name.sql
  std::string name;     // file name without the number and .sql
  std::string file;     // file the migration came from
  std::string checksum; // SHA-256 of the file's bytes, hex
};

struct migrate_result {
  std::vector<migration_info> applied;  // applied by this call, in order
  std::size_t already_applied = 0;      // found recorded and unchanged
};

class database {
 public:
  ~database();
  database(const database&) = default;
  database& operator=(const database&) = default;
  database(database&&) noexcept = default;
  database& operator=(database&&) noexcept = default;

  [[nodiscard]] dialect kind() const noexcept;
  [[nodiscard]] client_library client() const noexcept;
  // Where this connection goes, password redacted ("attached pqxx connection" if attached).
  [[nodiscard]] std::string describe() const;

  // Applies dblock's own pending migrations (scope "dblock"). Safe to run from many
  // processes at once: they serialize on a session lock and each migration runs once.
  migrate_result migrate(const migrate_options& opts = {});
  // Applies a user's folder of NNNN_name.sql files under its own scope. If DIR has a
  // subfolder named after the dialect (postgresql/, mysql/, sqlite/), that is used.
  migrate_result migrate_dir(const std::filesystem::path& dir, const std::string& scope,
                             const migrate_options& opts = {});
  // Migrations recorded as applied in this database, for a scope.
  [[nodiscard]] std::vector<migration_info> applied_migrations(const std::string& scope);
  // Throws schema_missing when dblock's tables are absent.
  void require_schema();
  // One round trip; throws connection_error when the server is unreachable.
  void ping();

  // Statements sent to the server on this connection so far (BEGIN/COMMIT included).
  [[nodiscard]] std::uint64_t round_trips() const noexcept;


 private:
  friend struct internal_access;  // the library's own access (not installed)
  struct impl;
  explicit database(std::shared_ptr<impl> p);
  std::shared_ptr<impl> impl_;
};

}  // namespace dblock
