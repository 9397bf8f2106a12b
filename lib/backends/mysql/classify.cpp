// lib/backends/mysql/classify.cpp — sql::SQLException to dblock errors by MySQL error
// number and SQLSTATE (tables in lib/core/classify.cpp).
#include <cppconn/exception.h>

#include "backends/mysql/classify.hpp"
#include "core/classify.hpp"
#include "dblock/errors.hpp"

namespace dblock::detail::mysql_backend {

void rethrow_classified(const std::string& context, bool during_commit) {
  try {
    throw;
  } catch (const error&) {
    throw;
  } catch (const sql::SQLException& e) {
    auto kind = classify_mysql(e.getErrorCode(), e.getSQLState());
    std::string what = context + ": " + e.what() + " (MySQL error " + std::to_string(e.getErrorCode()) + ")";
    if (during_commit && kind == error_kind::connection) {
      kind = error_kind::commit_unknown;
      what += " (connection lost during COMMIT: outcome unknown)";
    }
    throw_error(kind, what, e.getSQLState(), e.getErrorCode());
  } catch (const std::exception& e) {
    throw database_error(context + ": " + e.what());
  }
}

}  // namespace dblock::detail::mysql_backend
