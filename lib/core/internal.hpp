// lib/core/internal.hpp — what the library needs of its public classes' insides
// (leveldb's *_internal.h): the backend behind a dblock::database or transaction_ref,
// building those handles from a backend, and metrics recording.
// Nothing here is installed; the public headers name only the opaque database::impl
// and the friend internal_access.
#pragma once

#include <cstdint>
#include <memory>

#include "dblock/database.hpp"
#include "dblock/metrics.hpp"
#include "dblock/transaction.hpp"
#include "dblock/url.hpp"

namespace dblock {

namespace detail {
class backend;
}

struct database::impl {
  std::shared_ptr<detail::backend> b;
};

struct internal_access {
  static const std::shared_ptr<detail::backend>& backend_of(const database& db) noexcept { return db.impl_->b; }
  static const std::shared_ptr<detail::backend>& backend_of(const transaction_ref& tx) noexcept {
    return backend_of(tx.db_);
  }
  static database make_database(std::shared_ptr<detail::backend> b);
  static transaction_ref make_transaction_ref(std::shared_ptr<detail::backend> b) {
    return transaction_ref(make_database(std::move(b)));
  }
  static transaction_ref make_transaction_ref(const database& db) { return transaction_ref(db); }
};

namespace detail {

// The backend a database handle or a transaction view runs its statements on.
[[nodiscard]] inline const std::shared_ptr<backend>& backend_of(const database& db) noexcept {
  return internal_access::backend_of(db);
}
[[nodiscard]] inline const std::shared_ptr<backend>& backend_of(const transaction_ref& tx) noexcept {
  return internal_access::backend_of(tx);
}
// A handle on b (throws invalid_argument when b is empty).
[[nodiscard]] inline database make_database(std::shared_ptr<backend> b) {
  return internal_access::make_database(std::move(b));
}
// A transaction view of b: its statements run in whatever transaction b's connection is in.
[[nodiscard]] inline transaction_ref make_transaction_ref(std::shared_ptr<backend> b) {
  return internal_access::make_transaction_ref(std::move(b));
}
// The same on a database's own connection.
[[nodiscard]] inline transaction_ref make_transaction_ref(const database& db) {
  return internal_access::make_transaction_ref(db);
}

// Metrics recording (lib/core/metrics.cpp).
void count(counter c, std::uint64_t amount = 1) noexcept;
void observe_wait(double seconds) noexcept;

}  // namespace detail

}  // namespace dblock
