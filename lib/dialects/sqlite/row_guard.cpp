// lib/dialects/sqlite/row_guard.cpp — row guards on SQLite: no row locks, BEGIN IMMEDIATE
// already holds the writer lock (see dblock/row_guard.hpp), so lock_row is a plain read
// and insert_or_lock an INSERT ... ON CONFLICT DO NOTHING.
#include "dblock/errors.hpp"
#include "core/ops/row_guard.hpp"

namespace dblock::detail {

namespace {
class sqlite_row_guards_impl final : public row_guard_ops {
  bool row_locks() const noexcept override { return false; }
  row_lock_result guarded(backend&, const statement&, const std::vector<value>&,
                          std::optional<std::chrono::milliseconds>) const override {
    throw internal_error("SQLite has no row locks to wait for");
  }
  std::int64_t count(backend&, const statement&, const std::vector<value>&) const override {
    throw internal_error("SQLite has no row locks to count around");
  }
  insert_outcome insert_or_lock(backend& b, const identifier_slots&, const statement& ins,
                                const std::vector<value>& params, std::string_view,
                                std::string_view) const override {
    return b.exec_statement(ins, params).affected > 0 ? insert_outcome::inserted : insert_outcome::existing;
  }
};
}  // namespace

const row_guard_ops& sqlite_row_guards() noexcept {
  static const sqlite_row_guards_impl ops;
  return ops;
}

}  // namespace dblock::detail
