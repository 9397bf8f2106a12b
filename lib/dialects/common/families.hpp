// lib/dialects/common/families.hpp — what several dialects share in the statement families
// of lib/core/ops/: base classes the per-dialect files (lib/dialects/<dialect>/) derive
// from, so each behaviour is written once. Internal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/ops/election.hpp"
#include "core/ops/idempotency.hpp"
#include "core/ops/holders.hpp"
#include "core/ops/lease_table.hpp"
#include "core/ops/migration.hpp"
#include "core/ops/optimistic.hpp"
#include "core/ops/replication.hpp"
#include "core/ops/reaper.hpp"
#include "core/ops/row_guard.hpp"
#include "core/ops/session_lock.hpp"

namespace dblock::detail {

// The lock-table reads every dialect writes alike: lock_verify.sql (a row = still ours) and
// lock_list.sql (name, holder, holds, fence, expires_at, expires_in_ms, lock_delay_ms).
class lease_table_reads : public lease_table_ops {
 public:
  bool verify(backend& b, const std::string& name, const std::string& owner, std::int64_t fence) const override;
  std::vector<lock_info> list(backend& b) const override;
};

// Session locks keyed by a value derived from the name (session_lock_*.sql answer 1 or 0).
class keyed_session_locks : public session_lock_ops {
 public:
  bool try_lock(backend& b, std::string_view name) const override;
  bool release(backend& b, std::string_view name) const override;
  bool held(backend& b, std::string_view name) const override;

 protected:
  [[nodiscard]] virtual value key(std::string_view name) const = 0;
};

// The history table, and the run serialized by the session lock "dblock:migrate".
class session_locked_migrations : public migration_ops {
 public:
  bool one_transaction() const noexcept override { return false; }
  bool lock(backend& b, std::chrono::milliseconds wait) const override;
  void unlock(backend& b) const noexcept override;
  bool lock_in_transaction(backend& b, std::chrono::steady_clock::time_point deadline) const override;
  bool history_present(backend& b) const override;
  std::vector<migration_info> applied(backend& b, const std::string& scope) const override;
  void prepare_lease(backend& b) const override;
  bool take_lease(backend& b, std::string_view owner, std::chrono::milliseconds ttl) const override;
  void release_lease(backend& b, std::string_view owner) const override;
};

// Reap statements that report what they deleted as the affected count; nothing to
// configure, no pacing bounds of their own.
class counted_reaper : public reaper_ops {
 public:
  std::uint64_t deleted(const result& r) const override;
  void configure_session(backend&, bool) const override {}
  void bound_pacing(reap_pacing&) const noexcept override {}
};

// Row locks with a plain row_count.sql.
class locking_row_guards : public row_guard_ops {
 public:
  bool row_locks() const noexcept override { return true; }
  std::int64_t count(backend& b, const statement& count_st, const std::vector<value>& params) const override;
};

// versioned_read_<n>.sql: the version first, then the columns asked for.
class versioned_reads : public optimistic_ops {
 public:
  std::optional<versioned_row> read_versioned(backend& b, const statement& st, const value& key, std::string_view table,
                                              std::string_view version_column) const override;
  bool needs_fenced_check() const noexcept override { return false; }
  bool fenced_check(backend& b, const statement& check, const value& key, std::int64_t token) const override;
};

// The idempotency statements' columns: idem_claim.sql (outcome, status, attempt,
// recovery_point, response_code, body hex, retry_after_ms; MariaDB's claim returns the record's
// own columns instead, read by lib/dialects/mysql/idempotency.cpp) and idem_get.sql /
// idem_list.sql (the record, its body hex last in idem_get), the same on every dialect.
class idempotency_rows : public idempotency_ops {
 public:
  std::optional<claim_row> claim(const result& r, const claim_sent& sent) const override;
  idempotency_record record(const std::vector<cell>& row, bool with_body) const override;
};

// A record as a claim or a read before it found it, for the dialects whose statement returns
// the record's own columns (MariaDB's claim, SQLite's read before its claim) and leaves the
// outcome to the library. PostgreSQL's and MySQL 8.0's claims apply the same rule in SQL.
struct record_seen {
  bool ours = false;        // owner is the token this claim sent: the claim started an attempt
  bool same = false;        // the record's fingerprint is this request's
  std::string_view status;  // in_progress, completed or failed
  std::int64_t attempt = 0;
  std::optional<std::string> recovery_point;
  std::optional<int> code;
  std::optional<std::string> body_hex;
  std::int64_t lease_left_ms = 0;  // time left on the record's attempt lease (<= 0: none left)
};

// The claim's outcome rule: started when ours; else mismatch when the fingerprint differs;
// else in progress; else a replay of the completed or failed record. The stored response goes
// to a replay only (the same request); an attempt of someone else still in progress reports
// the time left on its lease. `what` names the statement in the error for an unknown status.
[[nodiscard]] claim_row judge_record(record_seen r, std::string_view what);

// MySQL 8.0: the claim is SELECT dblock_idem_claim(...) (migration 0011), one text
// "outcome status attempt code retry_after_ms body recovery_point" (code '-' or a number;
// body '-' or 'x' + hex; recovery point last, '-' or '+' + text), read here into the columns
// above.
class idempotency_claim_text : public idempotency_rows {
 public:
  std::optional<claim_row> claim(const result& r, const claim_sent& sent) const override;
};

// The lease-table statements MariaDB and MySQL 8.0 share (sql/mysql*/lock_state.sql,
// lock_probe.sql, lock_release.sql, lock_decrement.sql, lock_renew.sql, lock_line_renew.sql,
// lock_owned.sql): a refusal names the holder, the grant does not consume a ticket, a release
// waits for its flush, and the renewal counts matched rows (CLIENT_FOUND_ROWS), reading names
// only when fewer matched. Each dialect writes its own acquire.
// A waiter's try looks before it writes (lock_handed.sql): a grant a release handed its
// ticket, or the refusal by another owner's live row; nothing when the upsert must decide.
[[nodiscard]] std::optional<grant_outcome> waiter_look(backend& b, const std::string& name, const std::string& owner,
                                                       std::int64_t ticket);
// MariaDB and MySQL 8.0: the waiter's look (waiter_look), and a handed grant made durable
// before the waiter acts on it (InnoDB shows commits before their redo is flushed): a grant
// handed under the releaser's server lock by a wait for that lock (lock_handed_wait.sql),
// else, or when that wait runs out, a confirming write (lock_handed_confirm.sql). Nothing
// when the upsert must decide.
[[nodiscard]] std::optional<grant_outcome> waiter_look_durable(backend& b, const std::string& name,
                                                               const std::string& owner, std::int64_t ticket);

class mysql_family_table : public lease_table_reads {
 public:
  bool refusal_names_holder() const noexcept override { return true; }
  bool grant_consumes_ticket() const noexcept override { return false; }
  bool async_release() const noexcept override { return false; }
  std::optional<lock_info> holder(backend& b, const std::string& name) const override;
  std::optional<lock_info> probe(backend& b, const std::string& name, const std::string& owner) const override;
  release_outcome release(backend& b, const std::string& name, const std::string& owner, std::int64_t fence,
                          bool final_hold, bool no_flush, bool to_line, handed_grant* grant) const override;
  void end_hand_off(backend& b, const std::string& name) const noexcept override;
  std::vector<std::string> renew(backend& b, const std::string& owner, std::int64_t ttl_ms,
                                 const std::vector<std::string>& local, bool waiting) const override;
};

// Where nothing dblock can read tells whether a committed grant can be lost on failover
// (MariaDB, MySQL 8.0, SQLite): an empty report, no round trip.
class no_replication_check : public replication_ops {
 public:
  replication_report check(backend&) const override { return {}; }
};

// Read-write locks and semaphores over sql/<dialect>/holders_*.sql, the same columns on every
// dialect. separate_fence_read: holders_fence.sql draws the value into LAST_INSERT_ID() and
// holders_fence_read.sql reads it (MySQL 8.0, no sequences); elsewhere holders_fence.sql
// returns it. one_statement: the dialect has migration 0010's grant functions
// (holders_acquire_rw.sql, holders_acquire_permits.sql: one text, parsed here).
class holder_table final : public holders_ops {
 public:
  holder_table(bool separate_fence_read, bool one_statement)
      : separate_fence_read_(separate_fence_read), one_statement_(one_statement) {}
  bool one_statement_grants() const noexcept override { return one_statement_; }
  one_statement_outcome acquire_rw(backend& b, const one_statement_request& r) const override;
  one_statement_outcome acquire_permits(backend& b, const one_statement_request& r) const override;
  void gate(backend& b, const std::string& name) const override;
  std::vector<holder_row> live(backend& b, const std::string& name) const override;
  std::int64_t line_ahead(backend& b, const std::string& name, std::int64_t bound) const override;
  std::int64_t draw_fence(backend& b) const override;
  void insert(backend& b, const holder_grant& g) const override;
  bool reenter(backend& b, const std::string& name, const std::string& owner, bool write, std::int64_t fence,
               std::int64_t row_ttl_ms) const override;
  bool release(backend& b, const std::string& name, const std::string& owner, std::int64_t slot,
               std::int64_t fence) const override;
  bool decrement(backend& b, const std::string& name, const std::string& owner, std::int64_t fence,
                 bool write) const override;
  bool verify(backend& b, const std::string& name, const std::string& owner, std::int64_t slot,
              std::int64_t fence) const override;
  std::vector<holder_info> list(backend& b) const override;

 private:
  bool separate_fence_read_;
  bool one_statement_;
};

// The renewal's answer as session keys: a row's name, or holder_key(name, slot) when the
// statement's second column (the slot) is not NULL.
[[nodiscard]] std::vector<std::string> renewed_keys(const result& r);

// The election statements, the same columns on every dialect: elect_set.sql (a row back, or
// on MariaDB/MySQL 8.0 a matched row, = stored), elect_leader.sql (value, fence, holder,
// expires_in_ms), elect_list.sql (name and the same), elect_clear.sql.
class table_elections : public election_ops {
 public:
  // set_counts_rows: elect_set.sql returns no row (no INSERT ... RETURNING); its matched count says.
  explicit table_elections(bool set_counts_rows) : set_counts_rows_(set_counts_rows) {}
  bool set(backend& b, const std::string& name, const std::string& owner, std::int64_t fence,
           const std::string& value) const override;
  std::optional<leader_info> leader(backend& b, const std::string& name) const override;
  std::vector<leader_info> list(backend& b) const override;
  void clear(backend& b, const std::string& name, const std::string& owner, std::int64_t fence) const override;

 private:
  bool set_counts_rows_;
};

}  // namespace dblock::detail
