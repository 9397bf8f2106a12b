// dblock/idempotency.hpp — idempotency keys for orders and payments: the store that
// Stripe's idempotency keys, AWS Powertools' idempotency utility and the IETF
// Idempotency-Key draft describe, kept in the application's own database
// (table dblock_idempotency, migration 0002). The exact SQL per dialect is in
// sql/<dialect>/idem_*.sql and in docs/idempotency.md.
//
//   dblock::idempotency_store store(db);
//   auto fp = dblock::fingerprint_fields({{"amount", "1000"}, {"currency", "EUR"}});
//   auto r = store.begin("payments", key, fp);
//   switch (r.outcome) {
//     case dblock::idempotency_outcome::started:     // you own attempt r.attempt.number
//       ... do the work, store.checkpoint(r.attempt, "charged") after each external call ...
//       (void)store.complete(r.attempt, {201, body});
//       break;
//     case dblock::idempotency_outcome::replay:      // r.response: the first answer, byte-exact
//     case dblock::idempotency_outcome::in_progress: // another attempt holds a live lease: r.retry_after
//     case dblock::idempotency_outcome::mismatch:    // same key, different request
//   }
//
// Expected outcomes are values; bad input throws dblock::invalid_argument (naming the bad
// value, before anything is sent), and database failures throw the other dblock::error
// subclasses. All times (leases, retention) are computed and compared by the server.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dblock/database.hpp"
#include "dblock/transaction.hpp"

namespace dblock {

struct idempotency_options {
  // Lease of an in-progress attempt (server clock): a crashed worker's attempt is taken
  // over once it runs out; checkpoint() and extend() renew it. 1 ms to `retention`.
  // Default: 30 s.
  std::chrono::milliseconds lease{30'000};
  // How long a record lives after its last change; an expired record counts as absent.
  // Default: 24 h.
  std::chrono::milliseconds retention{std::chrono::hours(24)};
  // Largest response body complete()/fail() accept (invalid_argument beyond). At most
  // 64 MiB. Default: 1 MiB.
  std::size_t max_body_bytes = 1u << 20;
  // Terminal failures are stored and replayed (true) or deleted, freeing the key (false).
  // Default: true.
  bool store_failures = true;
  // How long begin() polls a key whose attempt is in progress before it returns
  // in_progress (0: at once). Default: 0.
  std::chrono::milliseconds wait{0};
};

enum class idempotency_outcome {
  started,      // you own attempt N: do the work, then complete() or fail()
  replay,       // finished earlier: the stored response (and whether it was a failure)
  in_progress,  // another attempt holds a live lease: retry after `retry_after`
  mismatch,     // the key was used for a different request (fingerprint differs)
};
[[nodiscard]] const char* to_string(idempotency_outcome o) noexcept;

enum class idempotency_status { in_progress, completed, failed };
[[nodiscard]] const char* to_string(idempotency_status s) noexcept;

// A stored response: a status code (HTTP or your own) and a body, byte-exact.
struct idempotent_response {
  int code = 0;
  std::string body;
  friend bool operator==(const idempotent_response&, const idempotent_response&) = default;
};

// The attempt you own after begin() returned started. Pass it to checkpoint(), extend(),
// complete() and fail(); they change the record only while this owner and attempt
// number are still the current ones (fencing).
struct idempotency_attempt {
  std::string scope;
  std::string key;
  std::string fingerprint;
  std::string owner;        // random 128-bit token of this attempt, hex
  std::int64_t number = 0;  // 1 for the first attempt, N+1 after a takeover
};

struct [[nodiscard]] begin_result {
  idempotency_outcome outcome = idempotency_outcome::in_progress;
  // started: yours (number = attempt N). Other outcomes: scope/key/fingerprint of the
  // request and the record's current attempt number; owner empty.
  idempotency_attempt attempt;
  // started after a takeover or a retryable failure: the last checkpoint reached by an
  // earlier attempt (resume from there instead of repeating an external call).
  std::optional<std::string> recovery_point;
  // replay: the stored response; `failed` when it was stored by fail(terminal).
  idempotent_response response;
  bool failed = false;
  // in_progress: time left on the other attempt's lease (server clock).
  std::chrono::milliseconds retry_after{0};

  [[nodiscard]] bool started() const noexcept { return outcome == idempotency_outcome::started; }
};

// Result of complete(), fail(), checkpoint(), extend().
enum class finish_status {
  recorded,   // the record changed as asked
  not_owner,  // this attempt no longer owns the key (taken over, finished, or expired): nothing changed
};
[[nodiscard]] const char* to_string(finish_status s) noexcept;

enum class failure_kind {
  retryable,  // the key is reopened: the next begin() starts attempt N+1 at once, with the recovery point
  terminal,   // the request failed for good: stored and replayed, or deleted (idempotency_options::store_failures)
};

struct [[nodiscard]] run_once_result {
  // started = fn ran now in your transaction (the record commits with it); replay,
  // in_progress, mismatch as for begin() (fn did not run).
  idempotency_outcome outcome = idempotency_outcome::in_progress;
  idempotent_response response;  // started: fn's response; replay: the stored one
  bool failed = false;           // replay of a stored terminal failure
  std::int64_t attempt = 0;
  std::chrono::milliseconds retry_after{0};
};

// One record, as the operators' view (`dblock idempotency show/list`) sees it.
struct idempotency_record {
  std::string scope;
  std::string key;
  std::string fingerprint;
  idempotency_status status = idempotency_status::in_progress;
  std::optional<std::string> owner;  // owner token of the current/last attempt; none when reopened
  std::int64_t attempt = 0;
  std::optional<std::string> recovery_point;
  std::optional<int> response_code;
  std::optional<std::string> response_body;  // get(): byte-exact; list(): not loaded
  std::size_t body_bytes = 0;
  // Server times, milliseconds since the Unix epoch (UTC).
  std::int64_t created_at_ms = 0;
  std::int64_t updated_at_ms = 0;
  std::int64_t expires_at_ms = 0;
  std::optional<std::int64_t> lease_expires_at_ms;  // in_progress with a live or lapsed lease
  // in_progress: time left on the lease (0 = lapsed or reopened: the next begin() takes over).
  std::optional<std::chrono::milliseconds> lease_remaining;
  bool expired = false;  // past retention: every call treats it as absent
};

struct idempotency_filter {
  std::optional<idempotency_status> status;
  std::optional<std::string> scope;
  bool include_expired = false;
  std::size_t limit = 100;  // at least 1, at most 100000
};

class idempotency_store {
 public:
  // Throws invalid_argument for inconsistent options (see idempotency_options).
  explicit idempotency_store(database db, idempotency_options opts = {});

  [[nodiscard]] const idempotency_options& options() const noexcept { return opts_; }
  [[nodiscard]] database& db() noexcept { return db_; }

  // Claims `key` in `scope` for the request whose fingerprint is given (64 hex digits,
  // see fingerprint()). One round trip for a new key and for a replay (all dialects).
  // Scope: 1..64 bytes, key: 1..255 bytes, both UTF-8 without control characters.
  begin_result begin(std::string_view scope, std::string_view key, std::string_view fingerprint);

  // Records a recovery point (1..255 bytes of UTF-8) and renews the lease. One round trip.
  [[nodiscard]] finish_status checkpoint(const idempotency_attempt& a, std::string_view recovery_point);
  // Renews the lease of a long attempt. One round trip.
  [[nodiscard]] finish_status extend(const idempotency_attempt& a);
  // Stores the response; later begin() calls replay it. One round trip.
  [[nodiscard]] finish_status complete(const idempotency_attempt& a, const idempotent_response& response);
  // retryable: reopens the key (the response is ignored). terminal: stores `response`
  // as a failed record, or deletes the record when store_failures is false. One round trip.
  [[nodiscard]] finish_status fail(const idempotency_attempt& a, failure_kind kind,
                                   const idempotent_response& response = {});

  // Exactly once with the business write: claims the key inside the caller's open
  // transaction `tx`, runs fn(tx) when the claim is ours, and records fn's response in
  // the same transaction, so the business rows and the record commit or roll back
  // together. A concurrent duplicate blocks on the claimed row until that transaction
  // ends, then replays (or runs, after a rollback). If fn throws, the exception
  // propagates and the caller must roll back. No waiting (`wait` is ignored): an attempt
  // started with begin() elsewhere yields in_progress. Round trips: claim + record
  // (2 when fn runs, 1 for a replay), plus fn's own.
  run_once_result run_once(transaction_ref tx, std::string_view scope, std::string_view key,
                           std::string_view fingerprint,
                           const std::function<idempotent_response(transaction_ref)>& fn);

  // The record of (scope, key); std::nullopt when absent or (unless include_expired)
  // past its retention. Body loaded.
  [[nodiscard]] std::optional<idempotency_record> get(std::string_view scope, std::string_view key,
                                                      bool include_expired = false);
  // Records, most recently changed first, without bodies.
  [[nodiscard]] std::vector<idempotency_record> list(const idempotency_filter& filter = {});

 private:
  database db_;
  idempotency_options opts_;
};

// SHA-256 of the canonical request bytes, as 64 lower-case hex digits.
[[nodiscard]] std::string fingerprint(std::string_view canonical_request);
// SHA-256 over an ordered list of (name, value) fields, encoded unambiguously:
//   "dblock-fingerprint-v1\n" then, per field, "<len(name)>:<name><len(value)>:<value>"
// (lengths in decimal bytes), so ("ab","c") and ("a","bc") differ, and order matters.
[[nodiscard]] std::string fingerprint_fields(std::initializer_list<std::pair<std::string_view, std::string_view>> fields);
[[nodiscard]] std::string fingerprint_fields(const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace dblock
