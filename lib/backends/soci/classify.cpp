// lib/backends/soci/classify.cpp — SOCI errors to dblock errors through the typed
// backend errors (get_error_category() is not portable in SOCI 4.0: duplicate keys are
// "unknown" on MySQL and SQLite): SQLSTATE on PostgreSQL, the MySQL error number, the
// SQLite extended result code.
#if DBLOCK_SOCI_MYSQL
#include <soci/mysql/soci-mysql.h>
#endif
#if DBLOCK_SOCI_POSTGRESQL
#include <soci/postgresql/soci-postgresql.h>
#endif
#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>

#include "backends/soci/classify.hpp"
#include "core/classify.hpp"
#include "dblock/errors.hpp"

namespace dblock::detail::soci_backend {

namespace {
[[noreturn]] void raise(error_kind kind, std::string what, std::string state, int code, bool during_commit) {
  if (during_commit && kind == error_kind::connection) {
    kind = error_kind::commit_unknown;
    what += " (connection lost during COMMIT: outcome unknown)";
  }
  throw_error(kind, what, std::move(state), code);
}
std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '.')) s.pop_back();
  return s;
}
}  // namespace

void rethrow_classified(const std::string& context, bool during_commit) {
  try {
    throw;
  } catch (const error&) {
    throw;
#if DBLOCK_SOCI_POSTGRESQL
  } catch (const soci::postgresql_soci_error& e) {
    std::string state = e.sqlstate();
    raise(classify_sqlstate(state), context + ": " + trimmed(e.get_error_message()), state, 0, during_commit);
#endif
#if DBLOCK_SOCI_MYSQL
  } catch (const soci::mysql_soci_error& e) {
    int code = static_cast<int>(e.err_num_);
    raise(classify_mysql(code, ""), context + ": " + trimmed(e.get_error_message()) + " (MySQL error " +
                                        std::to_string(code) + ")",
          "", code, during_commit);
#endif
  } catch (const soci::sqlite3_soci_error& e) {
    raise(classify_sqlite(e.result()), context + ": " + trimmed(e.get_error_message()) + " (SQLite result " +
                                           std::to_string(e.result()) + ")",
          "", e.result(), during_commit);
  } catch (const soci::soci_error& e) {
    auto kind = e.get_error_category() == soci::soci_error::connection_error ? error_kind::connection
                                                                            : error_kind::database;
    raise(kind, context + ": " + trimmed(e.get_error_message()), "", 0, during_commit);
  } catch (const std::exception& e) {
    throw database_error(context + ": " + e.what());
  }
}

}  // namespace dblock::detail::soci_backend
