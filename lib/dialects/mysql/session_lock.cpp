// lib/dialects/mysql/session_lock.cpp — session locks as GET_LOCK, keyed by the name
// itself (session_lock_try.sql prefixes the database and hashes long names).
#include "dialects/common/families.hpp"

namespace dblock::detail {

namespace {
class mysql_session_locks_impl final : public keyed_session_locks {
  value key(std::string_view name) const override { return std::string(name); }
};
}  // namespace

const session_lock_ops& mysql_session_locks() noexcept {
  static const mysql_session_locks_impl ops;
  return ops;
}

}  // namespace dblock::detail
