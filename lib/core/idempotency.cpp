// lib/core/idempotency.cpp — the idempotency-key store (dblock/idempotency.hpp): input
// checks, fingerprints, and the operations over sql/<dialect>/idem_*.sql. The claim
// (begin, run_once) is one statement per dialect; every later change of a record is fenced
// by owner AND attempt AND fingerprint, so a stale worker never overwrites a newer attempt.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

#include "core/backend.hpp"
#include "core/backoff.hpp"
#include "core/crypto.hpp"
#include "core/idempotency_detail.hpp"
#include "core/ops/idempotency.hpp"
#include "core/text.hpp"
#include "dblock/errors.hpp"
#include "dblock/idempotency.hpp"
#include "dblock/metrics.hpp"

namespace dblock {

namespace detail::idem {

bool is_clean_utf8(std::string_view s) noexcept {
  if (!valid_utf8(s)) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;  // C0 controls, DEL
    // C1 controls U+0080-U+009F: C2 80 - C2 9F (C2 is a lead byte in valid UTF-8).
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f) return false;
  }
  return true;
}

std::string printable(std::string_view s, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += to_hex(s.substr(i, 1));
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

namespace {
void check_text_id(std::string_view what, std::string_view v, std::size_t max) {
  if (v.empty())
    throw invalid_argument("idempotency " + std::string(what) + " is empty; a missing " + std::string(what) +
                           " is an error, never a shared record");
  if (v.size() > max)
    throw invalid_argument("idempotency " + std::string(what) + " '" + printable(v) + "' is " +
                           std::to_string(v.size()) + " bytes; at most " + std::to_string(max) + " are allowed");
  if (!is_clean_utf8(v))
    throw invalid_argument("idempotency " + std::string(what) + " '" + printable(v) +
                           "' is not UTF-8 text without control characters");
}
}  // namespace

void check_scope(std::string_view scope) { check_text_id("scope", scope, max_scope_bytes); }
void check_key(std::string_view key) { check_text_id("key", key, max_key_bytes); }
void check_recovery_point(std::string_view point) { check_text_id("recovery point", point, max_recovery_point_bytes); }

std::string normalize_fingerprint(std::string_view fp) {
  bool ok = fp.size() == 64;
  std::string out(fp);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) ok = false;
  }
  if (!ok)
    throw invalid_argument("idempotency fingerprint '" + printable(fp) +
                           "' is not a SHA-256 digest of 64 hex digits (use dblock::fingerprint())");
  return out;
}

std::string hex_encode(std::string_view bytes) { return to_hex(bytes); }

std::string hex_decode(std::string_view hex) {
  auto nibble = [&](char c) -> unsigned {
    if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<unsigned>(c - 'A' + 10);
    throw internal_error("idempotency body from the database is not hex");
  };
  if (hex.size() % 2) throw internal_error("idempotency body from the database has an odd hex length");
  std::string out(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<char>((nibble(hex[2 * i]) << 4) | nibble(hex[2 * i + 1]));
  return out;
}

std::string canonical_fields(const std::vector<std::pair<std::string_view, std::string_view>>& fields) {
  std::string out = "dblock-fingerprint-v1\n";
  for (const auto& [name, value] : fields) {
    out += std::to_string(name.size());
    out += ':';
    out += name;
    out += std::to_string(value.size());
    out += ':';
    out += value;
  }
  return out;
}

std::string format_utc_ms(std::int64_t ms) {
  using namespace std::chrono;
  // Every refused try formats its holder's expiry, so the C++20 calendar (plain arithmetic):
  // gmtime_r + snprintf cost more than the rest of a refused try's client side, and gmtime_r
  // takes glibc's time-zone lock.
  const sys_time<milliseconds> t{milliseconds(ms)};
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const int year = static_cast<int>(ymd.year());
  const std::int64_t in_day = (t - day).count();  // [0, 86,400,000)
  if (year < 0 || year > 9999) {
    // Outside four-digit years: gmtime_r and printf's form (a sign, more digits).
    std::int64_t secs = ms / 1000, frac = ms % 1000;
    if (frac < 0) {
      frac += 1000;
      --secs;
    }
    const auto tt = static_cast<std::time_t>(secs);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(frac));
    return buf;
  }
  char buf[] = "0000-00-00T00:00:00.000Z";
  auto put = [&buf](std::size_t at, std::int64_t v, int width) {
    for (int i = width - 1; i >= 0; --i, v /= 10) buf[at + static_cast<std::size_t>(i)] = static_cast<char>('0' + v % 10);
  };
  put(0, year, 4);
  put(5, static_cast<unsigned>(ymd.month()), 2);
  put(8, static_cast<unsigned>(ymd.day()), 2);
  put(11, in_day / 3'600'000, 2);
  put(14, in_day / 60'000 % 60, 2);
  put(17, in_day / 1000 % 60, 2);
  put(20, in_day % 1000, 3);
  return std::string(buf, 24);
}

}  // namespace detail::idem

namespace {

namespace idem = detail::idem;
using detail::value;

constexpr int claim_retries = 5;  // a claim that saw no row (PostgreSQL snapshot race) or a deadlock

const char* status_text(idempotency_status s) noexcept { return to_string(s); }

void check_body(const idempotency_options& o, const std::string& body) {
  if (body.size() > o.max_body_bytes)
    throw invalid_argument("idempotency response body of " + std::to_string(body.size()) +
                           " bytes is over the limit of " + std::to_string(o.max_body_bytes) +
                           " bytes (idempotency_options::max_body_bytes)");
}

void check_attempt(const idempotency_attempt& a) {
  idem::check_scope(a.scope);
  idem::check_key(a.key);
  (void)idem::normalize_fingerprint(a.fingerprint);
  if (a.owner.size() != 32 || a.number < 1)
    throw invalid_argument("idempotency attempt for key '" + idem::printable(a.key) +
                           "' is not one returned by begin() as started");
}

// The fence every change of a record after the claim carries: $1..$5.
std::vector<value> fence(const idempotency_attempt& a) {
  return {a.scope, a.key, a.owner, a.number, a.fingerprint};
}

finish_status by_affected(const detail::result& r) {
  return r.affected >= 1 ? finish_status::recorded : finish_status::not_owner;
}

using detail::claim_row;

// One claim statement. nullopt: no row (PostgreSQL: the conflicting row was committed after
// the statement's snapshot; the caller runs it again). `owner` is the new attempt's token,
// drawn here when first needed: a replay answered by the read before the claim (SQLite)
// needs none (tokens come from a per-thread pool that RAND_bytes refills, core/crypto.hpp).
std::optional<claim_row> claim_once(detail::backend& b, const std::string& scope, const std::string& key,
                                    const std::string& fp, std::string& owner, const idempotency_options& o) {
  const auto& ops = detail::idempotency_for(b.kind());
  std::optional<claim_row> row;
  if (ops.peeks_before_claim()) row = ops.peek(b.exec("idem_peek", {scope, key, fp}));
  if (!row) {
    if (owner.empty()) owner = detail::random_hex(16);
    std::vector<value> params{scope, key, fp, owner, static_cast<std::int64_t>(o.lease.count()),
                              static_cast<std::int64_t>(o.retention.count())};
    row = ops.claim(ops.run_claim(b, params), {fp, owner});
  }
  if (!row) return std::nullopt;
  if (row->expired) {  // counts as absent: drop it, and the caller's next claim inserts the key
    (void)b.exec("idem_drop_expired", {scope, key});
    return std::nullopt;
  }
  const claim_row& c = *row;
  switch (c.outcome) {  // metrics: one event per claim statement
    case idempotency_outcome::started:
      detail::count(c.attempt > 1 ? counter::idem_takeover : counter::idem_first);
      break;
    case idempotency_outcome::replay: detail::count(counter::idem_replay); break;
    case idempotency_outcome::in_progress: detail::count(counter::idem_in_progress); break;
    case idempotency_outcome::mismatch: detail::count(counter::idem_mismatch); break;
  }
  return c;
}

bool retryable_here(const error& e, detail::backend& b) {
  // Outside a transaction a deadlock victim or a serialization failure lost only this one
  // statement: run it again. (A lock wait that ran out already waited its timeout: report it.)
  if (b.raw().in_transaction()) return false;
  return e.kind() == error_kind::deadlock || e.kind() == error_kind::serialization;
}

// `owner`: empty, or the token drawn by an earlier try of this claim (see claim_once).
claim_row claim(detail::backend& b, const std::string& scope, const std::string& key, const std::string& fp,
                std::string& owner, const idempotency_options& o) {
  for (int i = 0;; ++i) {
    try {
      if (auto c = claim_once(b, scope, key, fp, owner, o)) return *c;
      if (i + 1 >= claim_retries)
        throw internal_error("idempotency claim of key '" + idem::printable(key) + "' found no row " +
                             std::to_string(claim_retries) + " times");
    } catch (const error& e) {
      if (i + 1 >= claim_retries || !retryable_here(e, b)) throw;
    }
  }
}

}  // namespace

const char* to_string(idempotency_outcome o) noexcept {
  switch (o) {
    case idempotency_outcome::started: return "started";
    case idempotency_outcome::replay: return "replay";
    case idempotency_outcome::in_progress: return "in_progress";
    case idempotency_outcome::mismatch: return "mismatch";
  }
  return "unknown";
}

const char* to_string(idempotency_status s) noexcept {
  switch (s) {
    case idempotency_status::in_progress: return "in_progress";
    case idempotency_status::completed: return "completed";
    case idempotency_status::failed: return "failed";
  }
  return "unknown";
}

const char* to_string(finish_status s) noexcept {
  switch (s) {
    case finish_status::recorded: return "recorded";
    case finish_status::not_owner: return "not_owner";
  }
  return "unknown";
}

std::string fingerprint(std::string_view canonical_request) { return detail::sha256_hex(canonical_request); }

std::string fingerprint_fields(std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
  return detail::sha256_hex(idem::canonical_fields({fields.begin(), fields.end()}));
}

std::string fingerprint_fields(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::vector<std::pair<std::string_view, std::string_view>> views;
  views.reserve(fields.size());
  for (const auto& [n, v] : fields) views.emplace_back(n, v);
  return detail::sha256_hex(idem::canonical_fields(views));
}

idempotency_store::idempotency_store(database db, idempotency_options opts) : db_(std::move(db)), opts_(opts) {
  using std::chrono::milliseconds;
  if (opts_.lease < milliseconds(1))
    throw invalid_argument("idempotency lease of " + std::to_string(opts_.lease.count()) + " ms must be at least 1 ms");
  if (opts_.retention < opts_.lease)
    throw invalid_argument("idempotency retention of " + std::to_string(opts_.retention.count()) +
                           " ms is shorter than the lease of " + std::to_string(opts_.lease.count()) + " ms");
  if (opts_.retention > milliseconds(std::chrono::hours(24 * 365 * 100)))
    throw invalid_argument("idempotency retention of " + std::to_string(opts_.retention.count()) +
                           " ms is more than 100 years");
  if (opts_.max_body_bytes < 1 || opts_.max_body_bytes > idem::max_body_limit)
    throw invalid_argument("idempotency max_body_bytes of " + std::to_string(opts_.max_body_bytes) +
                           " must be between 1 and " + std::to_string(idem::max_body_limit));
  if (opts_.wait < milliseconds(0))
    throw invalid_argument("idempotency wait of " + std::to_string(opts_.wait.count()) + " ms is negative");
}

begin_result idempotency_store::begin(std::string_view scope, std::string_view key, std::string_view fp_in) {
  idem::check_scope(scope);
  idem::check_key(key);
  const std::string fp = idem::normalize_fingerprint(fp_in);
  auto& b = *detail::backend_of(db_);

  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + opts_.wait;
  std::optional<detail::backoff> bo;  // made on the first wait only

  for (;;) {
    // A fresh owner token per claim (drawn by claim_once when the claim statement runs): a
    // token is never reused, so "owner = mine" in the claim's result means exactly "this
    // statement took the key".
    std::string owner;
    const claim_row c = claim(b, std::string(scope), std::string(key), fp, owner, opts_);

    begin_result r;
    r.outcome = c.outcome;
    r.attempt.scope = std::string(scope);
    r.attempt.key = std::string(key);
    r.attempt.fingerprint = fp;
    r.attempt.number = c.attempt;
    switch (c.outcome) {
      case idempotency_outcome::started:
        r.attempt.owner = owner;
        r.recovery_point = c.recovery_point;
        return r;
      case idempotency_outcome::replay:
        r.response.code = c.code.value_or(0);
        r.response.body = c.body_hex ? idem::hex_decode(*c.body_hex) : std::string();
        r.failed = c.failed;
        return r;
      case idempotency_outcome::mismatch:
        return r;
      case idempotency_outcome::in_progress:
        r.retry_after = std::chrono::milliseconds(std::max<std::int64_t>(0, c.retry_after_ms));
        break;
    }
    // In progress: wait (bounded) for the other attempt to finish or its lease to lapse.
    const auto now = clock::now();
    if (opts_.wait.count() == 0 || now >= deadline) return r;
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now);
    // Full jitter, 2 ms doubling to 250 ms; never past the deadline, and wake up right
    // after the holder's lease lapses so a takeover is not delayed.
    if (!bo) bo.emplace(detail::backoff_policy{.initial = std::chrono::milliseconds(2), .max = std::chrono::milliseconds(250)});
    std::this_thread::sleep_for(bo->next(std::min<std::chrono::microseconds>(left, r.retry_after + std::chrono::milliseconds(1))));
  }
}

finish_status idempotency_store::checkpoint(const idempotency_attempt& a, std::string_view recovery_point) {
  check_attempt(a);
  idem::check_recovery_point(recovery_point);
  auto p = fence(a);
  p.emplace_back(std::string(recovery_point));
  p.emplace_back(static_cast<std::int64_t>(opts_.lease.count()));
  return by_affected(detail::backend_of(db_)->exec("idem_checkpoint", p));
}

finish_status idempotency_store::extend(const idempotency_attempt& a) {
  check_attempt(a);
  auto p = fence(a);
  p.emplace_back(nullptr);
  p.emplace_back(static_cast<std::int64_t>(opts_.lease.count()));
  return by_affected(detail::backend_of(db_)->exec("idem_checkpoint", p));
}

finish_status idempotency_store::complete(const idempotency_attempt& a, const idempotent_response& response) {
  check_attempt(a);
  check_body(opts_, response.body);
  auto p = fence(a);
  p.emplace_back(std::string(status_text(idempotency_status::completed)));
  p.emplace_back(static_cast<std::int64_t>(response.code));
  p.emplace_back(idem::hex_encode(response.body));
  p.emplace_back(static_cast<std::int64_t>(opts_.retention.count()));
  return by_affected(detail::backend_of(db_)->exec("idem_finish", p));
}

finish_status idempotency_store::fail(const idempotency_attempt& a, failure_kind kind,
                                      const idempotent_response& response) {
  check_attempt(a);
  if (kind == failure_kind::retryable) return by_affected(detail::backend_of(db_)->exec("idem_reopen", fence(a)));
  if (!opts_.store_failures) return by_affected(detail::backend_of(db_)->exec("idem_abandon", fence(a)));
  check_body(opts_, response.body);
  auto p = fence(a);
  p.emplace_back(std::string(status_text(idempotency_status::failed)));
  p.emplace_back(static_cast<std::int64_t>(response.code));
  p.emplace_back(idem::hex_encode(response.body));
  p.emplace_back(static_cast<std::int64_t>(opts_.retention.count()));
  return by_affected(detail::backend_of(db_)->exec("idem_finish", p));
}

run_once_result idempotency_store::run_once(transaction_ref tx, std::string_view scope, std::string_view key,
                                            std::string_view fp_in,
                                            const std::function<idempotent_response(transaction_ref)>& fn) {
  idem::check_scope(scope);
  idem::check_key(key);
  const std::string fp = idem::normalize_fingerprint(fp_in);
  if (!fn) throw invalid_argument("idempotency run_once needs a function to run");
  auto& b = *detail::backend_of(tx);
  if (!b.raw().in_transaction())
    throw invalid_argument("idempotency run_once needs an open transaction (dblock::transact or dblock::within)");

  std::string owner;  // drawn by claim_once when the claim statement runs
  const claim_row c = claim(b, std::string(scope), std::string(key), fp, owner, opts_);
  run_once_result r;
  r.outcome = c.outcome;
  r.attempt = c.attempt;
  switch (c.outcome) {
    case idempotency_outcome::started: {
      r.response = fn(tx);
      check_body(opts_, r.response.body);  // throws: the caller rolls back, nothing is recorded
      idempotency_attempt a{std::string(scope), std::string(key), fp, owner, c.attempt};
      auto p = fence(a);
      p.emplace_back(std::string(status_text(idempotency_status::completed)));
      p.emplace_back(static_cast<std::int64_t>(r.response.code));
      p.emplace_back(idem::hex_encode(r.response.body));
      p.emplace_back(static_cast<std::int64_t>(opts_.retention.count()));
      if (b.exec("idem_finish", p).affected < 1)
        throw internal_error("idempotency run_once lost the row it claimed in this transaction (key '" +
                             idem::printable(key) + "')");
      return r;
    }
    case idempotency_outcome::replay:
      r.response.code = c.code.value_or(0);
      r.response.body = c.body_hex ? idem::hex_decode(*c.body_hex) : std::string();
      r.failed = c.failed;
      return r;
    case idempotency_outcome::in_progress:
      r.retry_after = std::chrono::milliseconds(std::max<std::int64_t>(0, c.retry_after_ms));
      return r;
    case idempotency_outcome::mismatch:
      return r;
  }
  return r;
}

std::optional<idempotency_record> idempotency_store::get(std::string_view scope, std::string_view key,
                                                         bool include_expired) {
  idem::check_scope(scope);
  idem::check_key(key);
  auto r = detail::backend_of(db_)->exec("idem_get", {std::string(scope), std::string(key)});
  if (r.rows.empty()) return std::nullopt;
  auto rec = detail::idempotency_for(detail::backend_of(db_)->kind()).record(r.rows.front(), true);
  if (rec.expired && !include_expired) return std::nullopt;
  return rec;
}

std::vector<idempotency_record> idempotency_store::list(const idempotency_filter& f) {
  if (f.scope) idem::check_scope(*f.scope);
  if (f.limit < 1 || f.limit > 100000)
    throw invalid_argument("idempotency list limit " + std::to_string(f.limit) + " must be between 1 and 100000");
  auto r = detail::backend_of(db_)->exec(
      "idem_list", {std::string(f.status ? to_string(*f.status) : ""), f.scope.value_or(std::string()),
                    static_cast<std::int64_t>(f.include_expired ? 1 : 0), static_cast<std::int64_t>(f.limit)});
  std::vector<idempotency_record> out;
  out.reserve(r.rows.size());
  const auto& rows = detail::idempotency_for(detail::backend_of(db_)->kind());
  for (const auto& row : r.rows) out.push_back(rows.record(row, false));
  return out;
}

}  // namespace dblock
