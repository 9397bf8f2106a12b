// lib/dialects/sqlite/holders.cpp — read-write locks and semaphores on SQLite
// (sql/sqlite/holders_*.sql over lib/dialects/common/families.hpp's holder_table):
// BEGIN IMMEDIATE is the gate; fences from the dblock_fence counter; a grant stays a
// transaction of steps (in the process, a statement costs no round trip).
#include "dialects/common/families.hpp"

namespace dblock::detail {

const holders_ops& sqlite_holders() noexcept {
  static const holder_table t{false, false};
  return t;
}

}  // namespace dblock::detail
