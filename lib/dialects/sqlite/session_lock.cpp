// lib/dialects/sqlite/session_lock.cpp — SQLite has no session locks
// (dialect_traits::session_locks is false: dblock::session_lock is a lease there), so
// reaching these is a bug.
#include "core/ops/session_lock.hpp"
#include "dblock/errors.hpp"

namespace dblock::detail {

namespace {
class sqlite_session_locks_impl final : public session_lock_ops {
  [[noreturn]] static void none() { throw internal_error("SQLite has no session locks"); }
  bool try_lock(backend&, std::string_view) const override { none(); }
  bool release(backend&, std::string_view) const override { none(); }
  bool held(backend&, std::string_view) const override { none(); }
};
}  // namespace

const session_lock_ops& sqlite_session_locks() noexcept {
  static const sqlite_session_locks_impl ops;
  return ops;
}

}  // namespace dblock::detail
