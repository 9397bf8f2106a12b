// lib/dialects/postgresql/optimistic.cpp — version-checked and fenced writes on PostgreSQL:
// the affected count of a fenced write is the matched rows, so no check read is needed.
#include "dialects/common/families.hpp"

namespace dblock::detail {

const optimistic_ops& postgresql_optimistic() noexcept {
  static const versioned_reads ops;
  return ops;
}

}  // namespace dblock::detail
