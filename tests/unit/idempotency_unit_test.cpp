// tests/unit/idempotency_unit_test.cpp — the database-free parts of the idempotency store:
// fingerprints (SHA-256, canonical field encoding), key/scope/recovery-point validation,
// fingerprint normalization, hex coding of bodies, UTC formatting, and the reading of
// MySQL 8.0's one-text claim answer.
#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <random>

#include "core/idempotency_detail.hpp"
#include "core/ops/idempotency.hpp"
#include "dblock/errors.hpp"
#include "dblock/idempotency.hpp"

namespace dblock {
namespace {

namespace idem = detail::idem;

TEST(IdempotencyFingerprint, IsPlainSha256OfTheCanonicalBytes) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(fingerprint(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(fingerprint("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(fingerprint(std::string("a\0b", 3)).size(), 64u);
  EXPECT_NE(fingerprint(std::string("a\0b", 3)), fingerprint("a"));
}

TEST(IdempotencyFingerprint, FieldEncodingIsUnambiguousAndOrdered) {
  EXPECT_EQ(idem::canonical_fields({{"amount", "1000"}, {"currency", "EUR"}}),
            "dblock-fingerprint-v1\n6:amount4:10008:currency3:EUR");
  EXPECT_EQ(idem::canonical_fields({}), "dblock-fingerprint-v1\n");
  // Moving bytes between names and values, or between fields, changes the fingerprint.
  EXPECT_NE(fingerprint_fields({{"ab", "c"}}), fingerprint_fields({{"a", "bc"}}));
  EXPECT_NE(fingerprint_fields({{"a", "b"}, {"c", "d"}}), fingerprint_fields({{"a", "b:c"}, {"", "d"}}));
  EXPECT_NE(fingerprint_fields({{"a", ""}, {"b", ""}}), fingerprint_fields({{"a", "1:b0:"}}));
  // Order matters; so do empty fields.
  EXPECT_NE(fingerprint_fields({{"a", "1"}, {"b", "2"}}), fingerprint_fields({{"b", "2"}, {"a", "1"}}));
  EXPECT_NE(fingerprint_fields({{"a", "1"}}), fingerprint_fields({{"a", "1"}, {"b", ""}}));
  // Deterministic, and both overloads agree.
  const std::vector<std::pair<std::string, std::string>> v{{"amount", "1000"}, {"note", std::string("\0\xff", 2)}};
  EXPECT_EQ(fingerprint_fields(v), fingerprint_fields({{"amount", "1000"}, {"note", std::string_view("\0\xff", 2)}}));
  EXPECT_EQ(fingerprint_fields(v),
            fingerprint("dblock-fingerprint-v1\n6:amount4:10004:note2:" + std::string("\0\xff", 2)));
  // Not the same as hashing the concatenation.
  EXPECT_NE(fingerprint_fields({{"amount", "1000"}}), fingerprint("amount1000"));
}

TEST(IdempotencyFingerprint, NormalizedToLowerCaseAndCheckedForShape) {
  const auto fp = fingerprint("abc");
  std::string upper = fp;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(idem::normalize_fingerprint(upper), fp);
  EXPECT_THROW((void)idem::normalize_fingerprint(""), invalid_argument);
  EXPECT_THROW((void)idem::normalize_fingerprint(fp.substr(1)), invalid_argument);
  EXPECT_THROW((void)idem::normalize_fingerprint(fp + "0"), invalid_argument);
  EXPECT_THROW((void)idem::normalize_fingerprint(fp.substr(1) + "g"), invalid_argument);
  try {
    (void)idem::normalize_fingerprint("sha1:abc");
    FAIL();
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'sha1:abc'"), std::string::npos) << e.what();
  }
}

TEST(IdempotencyInput, KeysAndScopesAreBoundedUtf8WithoutControls) {
  EXPECT_NO_THROW(idem::check_key("k"));
  EXPECT_NO_THROW(idem::check_key(std::string(255, 'k')));
  EXPECT_NO_THROW(idem::check_key("f47ac10b-58cc-4372-a567-0e02b2c3d479"));
  EXPECT_NO_THROW(idem::check_key("commande-\xc3\xa9t\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x92\xb3"));
  EXPECT_NO_THROW(idem::check_scope(std::string(64, 's')));
  EXPECT_THROW(idem::check_key(""), invalid_argument);
  EXPECT_THROW(idem::check_key(std::string(256, 'k')), invalid_argument);
  EXPECT_THROW(idem::check_scope(""), invalid_argument);
  EXPECT_THROW(idem::check_scope(std::string(65, 's')), invalid_argument);
  EXPECT_THROW(idem::check_recovery_point(""), invalid_argument);
  EXPECT_THROW(idem::check_recovery_point(std::string(256, 'p')), invalid_argument);
  for (const std::string& bad : {std::string("a\0b", 3), std::string("tab\there"), std::string("del\x7f"),
                                std::string("\xff"), std::string("\xc0\xaf"), std::string("\xe0\x80\xaf"),
                                std::string("\xed\xa0\x80"), std::string("\xf4\x90\x80\x80"), std::string("\xc2\x85"),
                                std::string("\xe2\x82"), std::string("\x80")}) {
    EXPECT_FALSE(idem::is_clean_utf8(bad)) << idem::printable(bad);
    EXPECT_THROW(idem::check_key(bad), invalid_argument) << idem::printable(bad);
  }
  EXPECT_TRUE(idem::is_clean_utf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF
  EXPECT_TRUE(idem::is_clean_utf8("\xc2\xa0"));          // U+00A0, not a C1 control
  try {
    idem::check_key(std::string(300, 'x'));
    FAIL();
  } catch (const invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("300 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("at most 255"), std::string::npos) << m;
  }
  try {
    idem::check_key("");
    FAIL();
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("never a shared record"), std::string::npos) << e.what();
  }
}

TEST(IdempotencyInput, MessagesShowBadBytesEscaped) {
  EXPECT_EQ(idem::printable(std::string("a\0\xff\\b", 5)), "a\\x00\\xff\\x5cb");
  EXPECT_EQ(idem::printable(std::string(100, 'x'), 4), "xxxx...");
}

TEST(IdempotencyBodies, HexRoundTripsEveryByte) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  const auto hex = idem::hex_encode(all);
  EXPECT_EQ(hex.size(), 512u);
  EXPECT_EQ(hex.substr(0, 8), "00010203");
  EXPECT_EQ(hex.substr(504), "fcfdfeff");
  EXPECT_EQ(idem::hex_decode(hex), all);
  EXPECT_EQ(idem::hex_decode("00FFaB"), std::string("\0\xff\xab", 3));  // MariaDB HEX() is upper case
  EXPECT_EQ(idem::hex_decode(""), "");
  EXPECT_THROW((void)idem::hex_decode("abc"), internal_error);
  EXPECT_THROW((void)idem::hex_decode("zz"), internal_error);
}

TEST(IdempotencyFormat, UtcMillisecondsAsIso8601) {
  EXPECT_EQ(idem::format_utc_ms(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(idem::format_utc_ms(1700000000123), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(idem::format_utc_ms(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(idem::format_utc_ms(951782400000), "2000-02-29T00:00:00.000Z");  // a 400-year leap day
  EXPECT_EQ(idem::format_utc_ms(253402300799999), "9999-12-31T23:59:59.999Z");
  EXPECT_EQ(idem::format_utc_ms(253402300800000), "10000-01-01T00:00:00.000Z");
  EXPECT_EQ(idem::format_utc_ms(-62167219200000), "0000-01-01T00:00:00.000Z");
}

// The arithmetic formatting agrees with gmtime_r + strftime over every day boundary
// from 1900 to 2200 and over random instants in years 0 to 9999.
TEST(IdempotencyFormat, AgreesWithGmtime) {
  auto reference = [](std::int64_t ms) {
    std::int64_t secs = ms / 1000, frac = ms % 1000;
    if (frac < 0) frac += 1000, --secs;
    const auto t = static_cast<std::time_t>(secs);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(frac));
    return std::string(buf);
  };
  int mismatches = 0;
  for (std::int64_t day = -25567; day <= 84006; ++day)
    for (std::int64_t ms : {day * 86400000, day * 86400000 - 1, day * 86400000 + 43200123})
      if (idem::format_utc_ms(ms) != reference(ms) && ++mismatches < 5)
        ADD_FAILURE() << ms << ": " << idem::format_utc_ms(ms) << " != " << reference(ms);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> any(-62167219200000, 253402300799999);
  for (int i = 0; i < 200000; ++i) {
    const auto ms = any(rng);
    if (idem::format_utc_ms(ms) != reference(ms) && ++mismatches < 5)
      ADD_FAILURE() << ms << ": " << idem::format_utc_ms(ms) << " != " << reference(ms);
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(IdempotencyNames, OutcomesAndStatusesHaveStableNames) {
  EXPECT_STREQ(to_string(idempotency_outcome::started), "started");
  EXPECT_STREQ(to_string(idempotency_outcome::replay), "replay");
  EXPECT_STREQ(to_string(idempotency_outcome::in_progress), "in_progress");
  EXPECT_STREQ(to_string(idempotency_outcome::mismatch), "mismatch");
  EXPECT_STREQ(to_string(idempotency_status::completed), "completed");
  EXPECT_STREQ(to_string(finish_status::not_owner), "not_owner");
}

}  // namespace
}  // namespace dblock

// MySQL 8.0's claim answers one text (migration 0011's stored function); it reads into the
// same claim row as every other dialect's columns.
namespace dblock {
namespace {

namespace claim_text {
detail::result text_row(std::optional<std::string> text) {
  detail::result r;
  r.rows.push_back({std::move(text)});
  return r;
}
}  // namespace claim_text

TEST(IdempotencyClaimText, ReadsEveryOutcome) {
  const auto& ops = detail::idempotency_for(dialect::mysql8);
  using claim_text::text_row;
  auto started = ops.claim(text_row("started in_progress 3 - 0 - +charged ch_1  twice"), {});
  ASSERT_TRUE(started);
  EXPECT_EQ(started->outcome, idempotency_outcome::started);
  EXPECT_EQ(started->attempt, 3);
  EXPECT_EQ(started->recovery_point, std::optional<std::string>("charged ch_1  twice"));  // spaces kept
  EXPECT_FALSE(started->code);
  EXPECT_FALSE(started->body_hex);

  auto replay = ops.claim(text_row("replay failed 1 502 0 x00FF -"), {});
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->outcome, idempotency_outcome::replay);
  EXPECT_TRUE(replay->failed);
  EXPECT_EQ(replay->code, std::optional<int>(502));
  EXPECT_EQ(replay->body_hex, std::optional<std::string>("00FF"));
  EXPECT_FALSE(replay->recovery_point);

  auto empty_body = ops.claim(text_row("replay completed 2 204 0 x +p"), {});
  ASSERT_TRUE(empty_body);
  EXPECT_EQ(empty_body->body_hex, std::optional<std::string>(""));  // an empty body, not none
  EXPECT_EQ(empty_body->recovery_point, std::optional<std::string>("p"));

  auto busy = ops.claim(text_row("in_progress in_progress 1 - 29750 - -"), {});
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->outcome, idempotency_outcome::in_progress);
  EXPECT_EQ(busy->retry_after_ms, 29750);

  auto other = ops.claim(text_row("mismatch completed 1 - 0 - -"), {});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->outcome, idempotency_outcome::mismatch);
  EXPECT_FALSE(other->body_hex);  // a mismatch never carries the stored body

  EXPECT_FALSE(ops.claim(detail::result{}, {}));  // no row: the caller claims again
  EXPECT_FALSE(ops.claim(text_row(std::nullopt), {}));
  EXPECT_THROW((void)ops.claim(text_row("replay completed 1"), {}), internal_error);
  EXPECT_THROW((void)ops.claim(text_row("replay completed 1 200 0 7B -"), {}), internal_error);
  EXPECT_THROW((void)ops.claim(text_row("done completed 1 200 0 x7B -"), {}), internal_error);
}

// MariaDB's claim returns the record's own columns; the outcome is decided in the library.
namespace claim_raw {
constexpr const char* mine = "0123456789abcdef0123456789abcdef";
constexpr const char* fp = "aa00000000000000000000000000000000000000000000000000000000000000";
constexpr const char* other_fp = "bb00000000000000000000000000000000000000000000000000000000000000";
detail::claim_sent sent() { return {fp, mine}; }
// owner, fingerprint, status, attempt, recovery_point, response_code, body hex, lease_left_us,
// expired
detail::result raw_row(detail::cell owner, std::string fingerprint, std::string status, std::string attempt,
                       detail::cell rp, detail::cell code, detail::cell body, detail::cell left_us,
                       std::string expired = "0") {
  detail::result r;
  r.rows.push_back({std::move(owner), std::move(fingerprint), std::move(status), std::move(attempt), std::move(rp),
                    std::move(code), std::move(body), std::move(left_us), std::move(expired)});
  return r;
}
}  // namespace claim_raw

TEST(IdempotencyClaimRaw, DecidesEveryOutcomeFromTheRecord) {
  const auto& ops = detail::idempotency_for(dialect::mysql);
  using namespace claim_raw;
  const std::string theirs = "ffffffffffffffffffffffffffffffff";

  auto started = ops.claim(raw_row(mine, fp, "in_progress", "3", "charged", {}, {}, "30000000"), sent());
  ASSERT_TRUE(started);
  EXPECT_EQ(started->outcome, idempotency_outcome::started);
  EXPECT_EQ(started->attempt, 3);
  EXPECT_EQ(started->recovery_point, std::optional<std::string>("charged"));
  EXPECT_EQ(started->retry_after_ms, 0);  // our own lease is no reason to wait

  auto replay = ops.claim(raw_row(theirs, fp, "failed", "1", {}, "502", "00FF", {}), sent());
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->outcome, idempotency_outcome::replay);
  EXPECT_TRUE(replay->failed);
  EXPECT_EQ(replay->code, std::optional<int>(502));
  EXPECT_EQ(replay->body_hex, std::optional<std::string>("00FF"));

  auto finished = ops.claim(raw_row({}, fp, "completed", "2", {}, "204", "", {}), sent());  // owner cleared
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->outcome, idempotency_outcome::replay);
  EXPECT_EQ(finished->body_hex, std::optional<std::string>(""));  // an empty body, not none

  auto busy = ops.claim(raw_row(theirs, fp, "in_progress", "1", {}, {}, {}, "29749001"), sent());
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->outcome, idempotency_outcome::in_progress);
  EXPECT_EQ(busy->retry_after_ms, 29750);  // rounded up
  auto lapsing = ops.claim(raw_row(theirs, fp, "in_progress", "1", {}, {}, {}, "-5"), sent());
  ASSERT_TRUE(lapsing);
  EXPECT_EQ(lapsing->retry_after_ms, 0);

  auto other = ops.claim(raw_row(theirs, other_fp, "completed", "1", {}, "200", "7B", {}), sent());
  ASSERT_TRUE(other);
  EXPECT_EQ(other->outcome, idempotency_outcome::mismatch);
  EXPECT_FALSE(other->body_hex);  // a mismatch never carries the stored body
  EXPECT_FALSE(other->code);
  auto other_busy = ops.claim(raw_row(theirs, other_fp, "in_progress", "1", {}, {}, {}, "1000"), sent());
  ASSERT_TRUE(other_busy);
  EXPECT_EQ(other_busy->outcome, idempotency_outcome::mismatch);
  EXPECT_EQ(other_busy->retry_after_ms, 1);

  auto gone = ops.claim(raw_row(theirs, fp, "completed", "4", {}, "200", "7B", {}, "1"), sent());
  ASSERT_TRUE(gone);
  EXPECT_TRUE(gone->expired);  // past its retention: the caller drops it and claims again
  EXPECT_FALSE(other->expired);

  EXPECT_FALSE(ops.claim(detail::result{}, sent()));  // no row: the caller claims again
  EXPECT_THROW((void)ops.claim(raw_row(theirs, fp, "done", "1", {}, {}, {}, {}), sent()), internal_error);
  detail::result short_row;
  short_row.rows.push_back({detail::cell("started")});
  EXPECT_THROW((void)ops.claim(short_row, sent()), internal_error);
}

// SQLite reads the record before it claims (so a replay writes nothing); the read's columns
// are judged by the same rule, and an attempt of this request whose lease ran out is left to
// the claim.
TEST(IdempotencyPeek, SqliteDecidesFromTheRecordRead) {
  const auto& ops = detail::idempotency_for(dialect::sqlite);
  ASSERT_TRUE(ops.peeks_before_claim());
  // same_fingerprint, status, attempt, recovery_point, response_code, body hex, lease_left_ms
  auto read = [](std::string same, std::string status, detail::cell code, detail::cell body, detail::cell left) {
    detail::result r;
    r.rows.push_back({std::move(same), std::move(status), detail::cell("2"), detail::cell("shipped"), std::move(code),
                      std::move(body), std::move(left)});
    return r;
  };
  auto replay = ops.peek(read("1", "completed", "201", "7B7D", {}));
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->outcome, idempotency_outcome::replay);
  EXPECT_FALSE(replay->failed);
  EXPECT_EQ(replay->attempt, 2);
  EXPECT_EQ(replay->code, std::optional<int>(201));
  EXPECT_EQ(replay->body_hex, std::optional<std::string>("7B7D"));
  EXPECT_EQ(replay->recovery_point, std::optional<std::string>("shipped"));

  auto busy = ops.peek(read("1", "in_progress", {}, {}, "1500"));
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->outcome, idempotency_outcome::in_progress);
  EXPECT_EQ(busy->retry_after_ms, 1500);

  EXPECT_FALSE(ops.peek(read("1", "in_progress", {}, {}, "0")));  // lease ran out: the claim takes over
  EXPECT_FALSE(ops.peek(read("1", "in_progress", {}, {}, {})));   // reopened (no lease): likewise

  auto other = ops.peek(read("0", "failed", "502", "00", {}));
  ASSERT_TRUE(other);
  EXPECT_EQ(other->outcome, idempotency_outcome::mismatch);
  EXPECT_FALSE(other->code);  // a mismatch never carries the stored response
  EXPECT_FALSE(other->body_hex);
  auto other_lapsed = ops.peek(read("0", "in_progress", {}, {}, "-3"));
  ASSERT_TRUE(other_lapsed);
  EXPECT_EQ(other_lapsed->outcome, idempotency_outcome::mismatch);
  EXPECT_EQ(other_lapsed->retry_after_ms, 0);

  EXPECT_FALSE(ops.peek(detail::result{}));  // a new key: claim it
  EXPECT_THROW((void)ops.peek(read("1", "done", {}, {}, {})), internal_error);
}

}  // namespace
}  // namespace dblock
