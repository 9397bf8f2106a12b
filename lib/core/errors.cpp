// lib/core/errors.cpp — the dblock::error hierarchy (include/dblock/errors.hpp).
#include "dblock/errors.hpp"

namespace dblock {

const char* to_string(error_kind k) noexcept {
  switch (k) {
    case error_kind::invalid_argument: return "invalid_argument";
    case error_kind::connection: return "connection_error";
    case error_kind::commit_unknown: return "commit_unknown";
    case error_kind::unique_violation: return "unique_violation";
    case error_kind::lock_not_available: return "lock_not_available";
    case error_kind::deadlock: return "deadlock";
    case error_kind::serialization: return "serialization_failure";
    case error_kind::schema_missing: return "schema_missing";
    case error_kind::migration: return "migration_error";
    case error_kind::timeout: return "timeout_error";
    case error_kind::lock_lost: return "lock_lost";
    case error_kind::database: return "database_error";
    case error_kind::internal: return "internal_error";
  }
  return "error";
}

error::error(error_kind kind, const std::string& what, std::string sqlstate, int vendor_code)
    : std::runtime_error(what), kind_(kind), sqlstate_(std::move(sqlstate)), vendor_code_(vendor_code) {}

bool error::retryable() const noexcept {
  switch (kind_) {
    case error_kind::connection:
    case error_kind::lock_not_available:
    case error_kind::deadlock:
    case error_kind::serialization:
    case error_kind::timeout:
      return true;
    default:
      // commit_unknown above all: the first attempt may have committed.
      return false;
  }
}

void throw_error(error_kind kind, const std::string& what, std::string sqlstate, int vendor_code) {
  switch (kind) {
    case error_kind::invalid_argument: throw invalid_argument(what, std::move(sqlstate), vendor_code);
    case error_kind::connection: throw connection_error(what, std::move(sqlstate), vendor_code);
    case error_kind::commit_unknown: throw commit_unknown(what, std::move(sqlstate), vendor_code);
    case error_kind::unique_violation: throw unique_violation(what, std::move(sqlstate), vendor_code);
    case error_kind::lock_not_available: throw lock_not_available(what, std::move(sqlstate), vendor_code);
    case error_kind::deadlock: throw deadlock(what, std::move(sqlstate), vendor_code);
    case error_kind::serialization: throw serialization_failure(what, std::move(sqlstate), vendor_code);
    case error_kind::schema_missing: throw schema_missing(what, std::move(sqlstate), vendor_code);
    case error_kind::migration: throw migration_error(what, std::move(sqlstate), vendor_code);
    case error_kind::timeout: throw timeout_error(what, std::move(sqlstate), vendor_code);
    case error_kind::lock_lost: throw lock_lost(what, std::move(sqlstate), vendor_code);
    case error_kind::database: throw database_error(what, std::move(sqlstate), vendor_code);
    case error_kind::internal: throw internal_error(what, std::move(sqlstate), vendor_code);
  }
  throw internal_error(what, std::move(sqlstate), vendor_code);
}

}  // namespace dblock
