// lib/dialects/mysql/row_guard.cpp — row guards on MySQL/MariaDB: NOWAIT, or a bounded
// wait through the session's innodb_lock_wait_timeout; insert_or_lock reads back through
// insert_or_lock_result.sql whether the upsert inserted.
#include "dblock/errors.hpp"
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

namespace {
class mysql_row_guards_impl final : public locking_row_guards {
  row_lock_result guarded(backend& b, const statement& lock_st, const std::vector<value>& params,
                          std::optional<std::chrono::milliseconds> bounded) const override {
    bool timeout_set = false;
    if (bounded) {
      const auto secs = std::max<std::int64_t>(1, std::chrono::ceil<std::chrono::seconds>(*bounded).count());
      b.exec("lock_wait_timeout_set", {secs});
      timeout_set = true;
    }
    auto restore = [&] {
      if (timeout_set) {
        timeout_set = false;
        b.exec("lock_wait_timeout_restore");
      }
    };
    result r;
    try {
      r = b.exec_statement(lock_st, params);
    } catch (const lock_not_available& e) {
      restore();
      // 1205 (lock wait timeout; MariaDB's NOWAIT too) undoes only the statement, unless the
      // server runs with innodb_rollback_on_timeout: then the transaction is gone and
      // "busy" would invite the caller to go on writing outside it.
      if (e.vendor_code() == 1205 && rows::first_is(b.exec("rollback_on_timeout"), "1"))
        throw lock_not_available(std::string(e.what()) +
                                     " (innodb_rollback_on_timeout is ON: the server rolled back the whole "
                                     "transaction; run it again)",
                                 e.sqlstate(), e.vendor_code());
      return {lock_outcome::busy, 0};
    } catch (...) {
      try {
        restore();
      } catch (...) {
        // The first error is the one to report (a dead connection fails both).
      }
      throw;
    }
    restore();
    return rows_found(r);
  }

  insert_outcome insert_or_lock(backend& b, const identifier_slots&, const statement& ins,
                                const std::vector<value>& params, std::string_view table,
                                std::string_view key_column) const override {
    b.exec("insert_or_lock_reset");
    b.exec_statement(ins, params);
    switch (rows::first_int(b.exec("insert_or_lock_result", {params.at(0)}), "insert_or_lock result")) {
      case 0: return insert_outcome::inserted;
      case 1: return insert_outcome::existing;
      default:
        throw unique_violation("insert_or_lock: the row collided with an existing row on another unique index of " +
                                   std::string(table) + " (not on " + std::string(key_column) + ")",
                               "23000", 1062);
    }
  }
};
}  // namespace

const row_guard_ops& mysql_row_guards() noexcept {
  static const mysql_row_guards_impl ops;
  return ops;
}

}  // namespace dblock::detail
