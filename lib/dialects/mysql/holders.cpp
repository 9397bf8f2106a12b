// lib/dialects/mysql/holders.cpp — read-write locks and semaphores on MariaDB
// (sql/mysql/holders_*.sql over lib/dialects/common/families.hpp's holder_table):
// the gate is the name's row in dblock_lock_gates; fences from
// NEXTVAL(dblock_fence_seq).
// A grant is one statement, SELECT dblock_holders_acquire_rw / _permits (migration 0010).
#include "dialects/common/families.hpp"

namespace dblock::detail {

const holders_ops& mysql_holders() noexcept {
  static const holder_table t{false, true};
  return t;
}

}  // namespace dblock::detail
