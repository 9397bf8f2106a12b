// lib/core/transaction.cpp — transaction_ref and transact() (dblock/transaction.hpp).
#include "core/backend.hpp"
#include "dblock/errors.hpp"
#include "dblock/transaction.hpp"

namespace dblock {

transaction_ref::transaction_ref(std::shared_ptr<detail::backend> b) : b_(std::move(b)) {
  if (!b_) throw invalid_argument("transaction_ref needs a backend");
}
dialect transaction_ref::kind() const noexcept { return b_->kind(); }
std::uint64_t transaction_ref::round_trips() const noexcept { return b_->round_trips(); }

void transact(database& db, const std::function<void(transaction_ref)>& fn) {
  auto b = db.backend();
  b->in_transaction([&] { fn(transaction_ref(b)); });
}

}  // namespace dblock
