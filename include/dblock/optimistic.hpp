// dblock/optimistic.hpp — conditional writes that need no lock held across round trips:
//
//   update_if_version   optimistic concurrency with a version column:
//                       UPDATE t SET c = ?, version = version + 1 WHERE key = ? AND version = ?
//   optimistic_update   read, compute, update_if_version; on conflict re-read and retry
//                       under a retry_policy
//   fenced_write        the same shape with a fencing-token column (Chubby's sequencer):
//                       UPDATE t SET c = ?, fence = token WHERE key = ? AND (fence IS NULL OR fence <= token)
//                       so a lock holder that lost its lease (smaller token) is refused
//                       by the resource itself.
//
// "Conflict" and "rejected" are values, not exceptions. Table and column names are
// validated and quoted; values are bound. Up to 4 columns per write (one reviewed SQL
// file per column count: sql/<dialect>/versioned_update_N.sql, fenced_update_N.sql).
// Each write takes a transaction_ref (inside the caller's transaction) or a database
// (the statement commits on its own). Exact SQL per dialect: docs/row-guards.md.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dblock/database.hpp"
#include "dblock/retry.hpp"
#include "dblock/transaction.hpp"
#include "dblock/value.hpp"

namespace dblock {

// A table with an integer version column. The version must be NOT NULL.
struct versioned_table {
  std::string table;                     // optionally schema-qualified: "shop.accounts"
  std::string key_column;                // identifies one row (a unique column)
  std::string version_column = "version";
};

// A row as read for an optimistic update: its version and the requested columns as
// text (std::nullopt for SQL NULL; numbers in decimal).
struct versioned_row {
  std::int64_t version = 0;
  std::vector<std::optional<std::string>> values;
};

// One round trip, no lock. Empty when no row has this key. At most 4 columns.
[[nodiscard]] std::optional<versioned_row> read_versioned(transaction_ref tx, const versioned_table& t,
                                                          const value& key,
                                                          const std::vector<std::string>& columns = {});
[[nodiscard]] std::optional<versioned_row> read_versioned(database& db, const versioned_table& t, const value& key,
                                                          const std::vector<std::string>& columns = {});

struct update_result {
  bool applied = false;      // false: the version moved on (or the row is gone): a conflict
  std::int64_t version = 0;  // when applied: the row's new version (expected + 1)
  explicit operator bool() const noexcept { return applied; }
};

// Sets `set` (1 to 4 columns, none of them the version or key column) and bumps the
// version, only if the row still has `expected_version`. One round trip.
[[nodiscard]] update_result update_if_version(transaction_ref tx, const versioned_table& t, const value& key,
                                              std::int64_t expected_version, const column_values& set);
[[nodiscard]] update_result update_if_version(database& db, const versioned_table& t, const value& key,
                                              std::int64_t expected_version, const column_values& set);

enum class optimistic_outcome {
  applied,    // written
  not_found,  // no row has this key
  declined,   // the callback returned no values: nothing written
  conflict,   // every attempt lost to a concurrent writer (policy.max_attempts reached)
};
[[nodiscard]] const char* to_string(optimistic_outcome o) noexcept;

struct optimistic_result {
  optimistic_outcome outcome = optimistic_outcome::conflict;
  int attempts = 0;          // reads made
  int conflicts = 0;         // updates refused because the version had moved on
  std::int64_t version = 0;  // applied: the new version; otherwise the last version read
  explicit operator bool() const noexcept { return outcome == optimistic_outcome::applied; }
};

// Given the current row, returns the new values of `columns` (same order, same count),
// or std::nullopt to write nothing. Called once per attempt: keep it free of side effects.
using optimistic_fn = std::function<std::optional<std::vector<value>>(const versioned_row& current)>;

// The read-modify-write loop: read_versioned(columns) -> fn -> update_if_version; on a
// conflict sleep (policy backoff, full jitter) and start over with a fresh read, up to
// policy.max_attempts. Each statement commits on its own (no transaction is held across
// the loop, so a re-read sees the latest row on every isolation level). For a hot row
// raise max_attempts: optimistic updates trade waiting for retries.
[[nodiscard]] optimistic_result optimistic_update(database& db, const versioned_table& t, const value& key,
                                                  const std::vector<std::string>& columns, const optimistic_fn& fn,
                                                  const retry_policy& policy = {});

// A table with a fencing-token column (an integer; NULL = never written under a lock).
struct fenced_table {
  std::string table;
  std::string key_column;
  std::string fence_column = "fence";
};

struct fenced_result {
  bool applied = false;  // false: a larger token already wrote this row (stale holder), or no such row
  explicit operator bool() const noexcept { return applied; }
};

// Sets `set` (1 to 4 columns) and records `token` in the fence column, only if the row's
// fence is NULL or <= token: the same holder may write again, a holder with an older
// token (e.g. dblock::lease::fence() of a lease that expired and was taken over) is
// rejected. One round trip (MariaDB on a caller's connection without CLIENT_FOUND_ROWS:
// one more when nothing changed, to tell "same values" from "rejected").
[[nodiscard]] fenced_result fenced_write(transaction_ref tx, const fenced_table& t, const value& key,
                                         std::int64_t token, const column_values& set);
[[nodiscard]] fenced_result fenced_write(database& db, const fenced_table& t, const value& key, std::int64_t token,
                                         const column_values& set);

}  // namespace dblock
