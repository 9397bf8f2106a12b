// dblock/transaction.hpp — a view of a transaction that dblock runs statements in
// but never commits or rolls back: either the caller's own (dblock::within(...) in
// dblock/pqxx.hpp, dblock/mysql.hpp, dblock/soci.hpp) or one dblock opened for the
// caller with database::transact(). Row guards, fenced writes, guard.verify_in(tx)
// and idempotency run_once(tx, ...) take one, so their writes commit or roll back
// together with the caller's business rows.
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include "dblock/database.hpp"

namespace dblock {

// Obtained from within(...) or inside transact(); cheap to copy (a shared handle), so
// it is passed by value everywhere.
class transaction_ref {
 public:
  [[nodiscard]] dialect kind() const noexcept;
  // Statements sent through this view so far.
  [[nodiscard]] std::uint64_t round_trips() const noexcept;

 private:
  friend struct internal_access;  // the library's own access (not installed)
  explicit transaction_ref(database db) : db_(std::move(db)) {}
  database db_;  // the connection the transaction is open on
};

// Runs fn inside BEGIN ... COMMIT on the database's own connection (BEGIN IMMEDIATE on
// SQLite); rolls back and rethrows when fn throws. A connection lost during COMMIT
// throws commit_unknown. Use retry_transaction() for deadlock/serialization retries.
void transact(database& db, const std::function<void(transaction_ref)>& fn);

}  // namespace dblock
