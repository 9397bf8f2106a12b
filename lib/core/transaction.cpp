// lib/core/transaction.cpp — transaction_ref and transact() (dblock/transaction.hpp).
#include "core/backend.hpp"
#include "dblock/errors.hpp"
#include "dblock/transaction.hpp"

namespace dblock {

dialect transaction_ref::kind() const noexcept { return db_.kind(); }
std::uint64_t transaction_ref::round_trips() const noexcept { return db_.round_trips(); }

void transact(database& db, const std::function<void(transaction_ref)>& fn) {
  detail::backend_of(db)->in_transaction([&] { fn(detail::make_transaction_ref(db)); });
}

}  // namespace dblock
