// lib/dialects/postgresql/session_lock.cpp — session locks as advisory locks, keyed by the
// first 8 bytes of the name's SHA-256 (advisory-lock keys are bigint).
#include "core/crypto.hpp"
#include "dialects/common/families.hpp"

namespace dblock::detail {

namespace {
class pg_session_locks_impl final : public keyed_session_locks {
  value key(std::string_view name) const override { return sha256_int64(name); }
};
}  // namespace

const session_lock_ops& postgresql_session_locks() noexcept {
  static const pg_session_locks_impl ops;
  return ops;
}

}  // namespace dblock::detail
