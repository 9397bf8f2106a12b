// lib/backends/pqxx/classify.cpp — libpqxx 6.4 exceptions to dblock errors, by type
// and SQLSTATE (libpqxx 6.4's transaction_rollback family carries no sqlstate()).
#include <pqxx/except>

#include "core/classify.hpp"
#include "dblock/errors.hpp"
#include "backends/pqxx/classify.hpp"

namespace dblock::detail::pqxx_backend {

void rethrow_classified(const std::string& context, bool during_commit) {
  auto msg = [&](const std::exception& e) {
    std::string w = e.what();
    while (!w.empty() && (w.back() == '\n' || w.back() == ' ')) w.pop_back();
    return context + ": " + w;
  };
  try {
    throw;
  } catch (const error&) {
    throw;
  } catch (const pqxx::in_doubt_error& e) {
    throw commit_unknown(msg(e) + " (the commit may or may not have happened)");
  } catch (const pqxx::broken_connection& e) {
    if (during_commit) throw commit_unknown(msg(e) + " (connection lost during COMMIT: outcome unknown)", "08006");
    throw connection_error(msg(e), "08006");
  } catch (const pqxx::deadlock_detected& e) {
    throw deadlock(msg(e), "40P01");
  } catch (const pqxx::statement_completion_unknown& e) {
    throw commit_unknown(msg(e), "40003");
  } catch (const pqxx::serialization_failure& e) {
    throw serialization_failure(msg(e), "40001");
  } catch (const pqxx::transaction_rollback& e) {
    throw serialization_failure(msg(e), "40000");
  } catch (const pqxx::sql_error& e) {
    const std::string& state = e.sqlstate();
    auto kind = classify_sqlstate(state);
    if (during_commit && kind == error_kind::connection) kind = error_kind::commit_unknown;
    throw_error(kind, msg(e), state);
  } catch (const pqxx::usage_error& e) {
    throw internal_error(msg(e));
  } catch (const std::exception& e) {
    throw database_error(msg(e));
  }
}

}  // namespace dblock::detail::pqxx_backend
