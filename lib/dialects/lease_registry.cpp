// lib/dialects/lease_registry.cpp — each dialect's lease-lock objects
// (lib/core/ops/lease_table.hpp), and the wait line, which is the same on every dialect:
// tickets in dblock_lock_waiters through sql/<dialect>/lock_line_*.sql (MySQL 8.0 reads the
// new ticket with a second statement), and lock_drop_handed.sql for a waiter that gives back
// a grant a release handed it.
#include "core/ops/lease_table.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

const lease_table_ops& postgresql_lease_table() noexcept;
const lease_table_ops& mysql_lease_table() noexcept;
const lease_table_ops& sqlite_lease_table() noexcept;
const lease_table_ops& mysql8_lease_table() noexcept;

const lease_table_ops& lease_table_for(dialect d) noexcept {
  switch (d) {
    case dialect::postgresql: return postgresql_lease_table();
    case dialect::mysql: return mysql_lease_table();
    case dialect::mysql8: return mysql8_lease_table();
    case dialect::sqlite: break;
  }
  return sqlite_lease_table();
}

namespace {

class table_wait_line final : public wait_line_ops {
 public:
  // separate_ticket_read: lock_line_join.sql returns no row (no INSERT ... RETURNING, MySQL
  // 8.0); lock_line_ticket.sql reads the ticket back on the same connection.
  // async_join: lock_line_join_async.sql outside a caller's transaction (PostgreSQL: a ticket
  // commits without waiting for its flush).
  // pragma_join: on SQLite, lock_line_join.sql outside a caller's transaction runs between
  // lock_line_join_unflushed.sql and lock_line_join_flushed.sql (a ticket commits without an
  // fsync).
  table_wait_line(bool separate_ticket_read, bool async_join, bool pragma_join = false)
      : separate_ticket_read_(separate_ticket_read), async_join_(async_join), pragma_join_(pragma_join) {}

  std::int64_t join(backend& b, const std::string& name, const std::string& owner, std::int64_t ttl_ms,
                    const line_grant* grant) const override {
    auto r = b.exclusive([&] {
      const std::vector<value> params =
          grant ? std::vector<value>{name, owner, ttl_ms, grant->row_ttl_ms, grant->holder, grant->delay_ms}
                : std::vector<value>{name, owner, ttl_ms, std::int64_t{0}, std::string(), std::int64_t{0}};
      // Only on a connection dblock opened (connect.sql set FULL: an attached one keeps its
      // owner's setting) in WAL mode (the prefix rule below needs it), outside a transaction.
      if (pragma_join_ && b.can_reopen() && !b.raw().in_transaction() && b.raw().write_ahead_log())
        return unflushed_join(b, params);
      auto j = async_join_ ? b.exec_unless_in_transaction("lock_line_join_async", "lock_line_join", params)
                           : b.exec("lock_line_join", params);
      return separate_ticket_read_ ? b.exec("lock_line_ticket") : j;
    });
    return rows::i64(r.rows.at(0), 0, "wait-line ticket");
  }
  bool leave(backend& b, std::int64_t ticket, const std::string& owner) const override {
    return b.exec("lock_line_leave", {ticket, owner}).affected > 0;
  }
  bool drop_handed(backend& b, const std::string& name, const std::string& owner,
                   std::int64_t ticket) const override {
    return b.exec("lock_drop_handed", {name, owner, ticket}).affected > 0;
  }
  line_position position(backend& b, const std::string& name, std::int64_t ticket) const override {
    auto r = b.exec("lock_line_position", {name, ticket});
    return {rows::i64(r.rows.at(0), 0, "wait-line position"), rows::i64(r.rows.at(0), 1, "wait-line fence")};
  }

 private:
  // Runs under the connection's mutex (join's exclusive()): no other statement of the
  // connection commits in between. The connection is set back to durable commits whatever
  // the insert did; a setback that fails (a PRAGMA takes no lock: only when SQLite is out of
  // memory) is tried again, and then the connection is discarded, so that no later commit
  // of it skips its fsync.
  static result unflushed_join(backend& b, const std::vector<value>& params) {
    auto flushed = [&] {
      for (int i = 0;; ++i) {
        try {
          (void)b.exec("lock_line_join_flushed");
          return;
        } catch (const std::exception&) {
          if (i == 1) {
            b.discard_connection();
            throw;
          }
        }
      }
    };
    (void)b.exec("lock_line_join_unflushed");
    result r;
    try {
      r = b.exec("lock_line_join", params);
    } catch (...) {
      flushed();
      throw;
    }
    flushed();
    return r;
  }

  bool separate_ticket_read_;
  bool async_join_;
  bool pragma_join_;
};

}  // namespace

const wait_line_ops& wait_line_for(dialect d) noexcept {
  static const table_wait_line returning{false, false};
  static const table_wait_line read_apart{true, false};
  static const table_wait_line unflushed{false, true};
  static const table_wait_line pragma_unflushed{false, false, true};
  if (d == dialect::sqlite) return pragma_unflushed;
  return d == dialect::mysql8 ? read_apart : d == dialect::postgresql ? unflushed : returning;
}

}  // namespace dblock::detail
