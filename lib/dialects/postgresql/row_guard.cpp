// lib/dialects/postgresql/row_guard.cpp — row guards on PostgreSQL: NOWAIT or a bounded
// lock_timeout inside a savepoint (so 55P03 leaves the caller's transaction usable), and
// insert_or_lock as ON CONFLICT DO NOTHING followed by a locking read.
#include "dblock/errors.hpp"
#include "dialects/common/families.hpp"

namespace dblock::detail {

namespace {
class pg_row_guards_impl final : public locking_row_guards {
  row_lock_result guarded(backend& b, const statement& lock_st, const std::vector<value>& params,
                          std::optional<std::chrono::milliseconds> bounded) const override {
    b.exec("row_guard_savepoint");
    std::optional<std::string> previous;
    result r;
    try {
      if (bounded) {
        auto s = b.exec("lock_timeout_set", {std::to_string(bounded->count()) + "ms"});
        previous = s.rows.at(0).at(0).value_or("0");
      }
      r = b.exec_statement(lock_st, params);
    } catch (const lock_not_available&) {
      b.exec("row_guard_rollback");  // also undoes the SET LOCAL lock_timeout
      b.exec("row_guard_release");
      return {lock_outcome::busy, 0};
    }
    b.exec("row_guard_release");
    if (previous) b.exec("lock_timeout_restore", {*previous});
    return rows_found(r);
  }

  insert_outcome insert_or_lock(backend& b, const identifier_slots& ids, const statement& ins,
                                const std::vector<value>& params, std::string_view,
                                std::string_view) const override {
    const statement& lock_st = user_statement(b, "row_lock", {ids[0], ids[1]});
    const std::vector<value> key_only{params.at(0)};
    // ON CONFLICT DO NOTHING waits for a concurrent inserter of the same key and then
    // either inserts (it rolled back) or does nothing (it committed). In READ
    // COMMITTED the row can still vanish before we lock it (deleted and committed in
    // between): insert again, a few times.
    for (int round = 0; round < 3; ++round) {
      if (b.exec_statement(ins, params).affected > 0) return insert_outcome::inserted;
      if (!b.exec_statement(lock_st, key_only).rows.empty()) return insert_outcome::existing;
    }
    throw serialization_failure("insert_or_lock: the row with this key was deleted between insert and lock, three "
                                "times; run the transaction again");
  }
};
}  // namespace

const row_guard_ops& postgresql_row_guards() noexcept {
  static const pg_row_guards_impl ops;
  return ops;
}

}  // namespace dblock::detail
