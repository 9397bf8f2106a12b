// lib/dialects/mysql8/holders.cpp — read-write locks and semaphores on MySQL 8.0
// (sql/mysql8/holders_*.sql over lib/dialects/common/families.hpp's holder_table):
// the gate is the name's row in dblock_lock_gates; fences from the
// dblock_fence_counter row through LAST_INSERT_ID() (a draw and a read).
// A grant is one statement, SELECT dblock_holders_acquire_rw / _permits (migration 0010).
#include "dialects/common/families.hpp"

namespace dblock::detail {

const holders_ops& mysql8_holders() noexcept {
  static const holder_table t{true, true};
  return t;
}

}  // namespace dblock::detail
