// lib/dialects/postgresql/holders.cpp — read-write locks and semaphores on PostgreSQL
// (sql/postgresql/holders_*.sql over lib/dialects/common/families.hpp's holder_table):
// the gate is a transaction-scoped advisory lock on the name;
// fences from dblock_next_fence() (timeline-aware, migration 0007).
// A grant is one statement, SELECT dblock_holders_acquire_rw / _permits (migration 0010).
#include "dialects/common/families.hpp"

namespace dblock::detail {

const holders_ops& postgresql_holders() noexcept {
  static const holder_table t{false, true};
  return t;
}

}  // namespace dblock::detail
