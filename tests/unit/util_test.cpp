// tests/unit/util_test.cpp — the command's durations (cli/args.hpp), identifier
// validation (dblock/util.hpp) and quoting (core/catalog.hpp), and the OpenSSL helpers
// (core/crypto.hpp).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <thread>
#include <vector>

#include "cli/args.hpp"
#include "core/catalog.hpp"
#include "core/crypto.hpp"
#include "dblock/errors.hpp"
#include "dblock/util.hpp"

namespace dblock {
namespace {

using cli::parse_duration;
using std::chrono::milliseconds;

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

TEST(Duration, UnitsAndBareSeconds) {
  EXPECT_EQ(parse_duration("250ms"), milliseconds(250));
  EXPECT_EQ(parse_duration("30s"), milliseconds(30'000));
  EXPECT_EQ(parse_duration("5m"), milliseconds(300'000));
  EXPECT_EQ(parse_duration("1h"), milliseconds(3'600'000));
  EXPECT_EQ(parse_duration("2"), milliseconds(2'000));
  EXPECT_EQ(parse_duration("1.5s"), milliseconds(1'500));
  EXPECT_EQ(parse_duration("0.25"), milliseconds(250));
  EXPECT_EQ(parse_duration("1ms"), milliseconds(1));
  EXPECT_EQ(parse_duration("24h"), milliseconds(86'400'000));
  // Zero is a valid duration (`dblock exec --wait 0`: do not wait).
  EXPECT_EQ(parse_duration("0"), milliseconds(0));
  EXPECT_EQ(parse_duration("0ms"), milliseconds(0));
}

TEST(Duration, InvalidValuesAreNamed) {
  for (const char* bad : {"", "abc", "-1s", "-5", "5x", "ms", "s", "5 s", " 5s", "5S", "5sec", "1e20h", "inf", "nan",
                          "NaN", "-0.5", "+5s", "5s5"}) {
    SCOPED_TRACE(bad);
    try {
      (void)parse_duration(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), std::string("'") + bad + "'")) << e.what();
      EXPECT_TRUE(contains(e.what(), "250ms")) << "the message shows the accepted forms: " << e.what();
    }
  }
}

TEST(Identifier, Valid) {
  for (const char* ok : {"a", "_", "_x", "dblock_locks", "T1", "abc_123", "app.dblock_locks", "_s._t",
                         "a23456789012345678901234567890123456789012345678901234567890123"}) {
    SCOPED_TRACE(ok);
    EXPECT_TRUE(is_valid_identifier(ok));
  }
}

TEST(Identifier, InvalidIncludingInjectionAttempts) {
  const std::string too_long(64, 'a');
  const std::string nul("ab\0c", 4);
  for (std::string_view bad : {std::string_view(""), std::string_view("1abc"), std::string_view("a-b"),
                               std::string_view("a b"), std::string_view(too_long), std::string_view("a.b.c"),
                               std::string_view(".a"), std::string_view("a."), std::string_view("."),
                               std::string_view("x; DROP TABLE dblock_locks; --"), std::string_view("a\"b"),
                               std::string_view("a\"; DROP TABLE t; --"), std::string_view("a`b"),
                               std::string_view("a`; DROP TABLE t; -- "), std::string_view("x'--"),
                               std::string_view("a/*c*/"), std::string_view("t\n"), std::string_view("caf\xc3\xa9"),
                               std::string_view(nul), std::string_view("a$1"), std::string_view("\"quoted\"")}) {
    SCOPED_TRACE(std::string(bad));
    EXPECT_FALSE(is_valid_identifier(bad));
    for (auto d : {dialect::postgresql, dialect::mysql, dialect::sqlite}) {
      try {
        (void)quote_identifier(bad, d);
        ADD_FAILURE() << "quoted an invalid identifier";
      } catch (const invalid_argument& e) {
        EXPECT_TRUE(contains(e.what(), "invalid identifier")) << e.what();
      }
    }
  }
}

TEST(Identifier, QuotingPerDialect) {
  EXPECT_EQ(quote_identifier("dblock_locks", dialect::postgresql), "\"dblock_locks\"");
  EXPECT_EQ(quote_identifier("dblock_locks", dialect::sqlite), "\"dblock_locks\"");
  EXPECT_EQ(quote_identifier("dblock_locks", dialect::mysql), "`dblock_locks`");
  EXPECT_EQ(quote_identifier("app.Orders", dialect::postgresql), "\"app\".\"Orders\"");
  EXPECT_EQ(quote_identifier("app.Orders", dialect::mysql), "`app`.`Orders`");
  EXPECT_EQ(quote_identifier("main.t", dialect::sqlite), "\"main\".\"t\"");
}

TEST(Crypto, Sha256KnownVectors) {
  EXPECT_EQ(detail::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(detail::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // First 8 bytes of sha256("abc") = ba7816bf8f01cfea, as a signed 64-bit integer.
  EXPECT_EQ(detail::sha256_int64("abc"), static_cast<std::int64_t>(0xba7816bf8f01cfeaULL));
}

TEST(Crypto, RandomTokensAreHexAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto t = detail::random_hex(16);
    ASSERT_EQ(t.size(), 32u);
    EXPECT_EQ(t.find_first_not_of("0123456789abcdef"), std::string::npos) << t;
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 100u);
}

// Tokens come from a per-thread pool of random bytes: across threads and pool refills (64
// tokens of 16 bytes per KiB), every token is new, and odd sizes and one larger than the pool
// work too.
TEST(Crypto, RandomTokensAreDistinctAcrossThreadsAndRefills) {
  constexpr int threads = 4, per_thread = 1000;
  std::vector<std::vector<std::string>> got(threads);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&got, t] {
      for (int i = 0; i < per_thread; ++i) got[t].push_back(detail::random_hex(i % 7 == 0 ? 15 : 16));
    });
  for (auto& t : ts) t.join();
  std::set<std::string> seen;
  for (const auto& v : got) seen.insert(v.begin(), v.end());
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(threads * per_thread));
  EXPECT_EQ(detail::random_hex(2000).size(), 4000u);
}

// A forked child must not hand out the bytes its parent holds in its pool: the parent's next
// token and the child's first one differ.
TEST(Crypto, ForkedChildDrawsOtherTokensThanItsParent) {
  (void)detail::random_hex(16);  // the pool now holds bytes for the next tokens
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const auto t = detail::random_hex(16);
    const bool ok = ::write(fds[1], t.data(), t.size()) == static_cast<ssize_t>(t.size());
    ::_exit(ok ? 0 : 1);
  }
  ::close(fds[1]);
  const auto mine = detail::random_hex(16);
  std::string child(32, '\0');
  std::size_t got = 0;
  while (got < child.size()) {
    const auto n = ::read(fds[0], child.data() + got, child.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_EQ(got, child.size());
  EXPECT_NE(child, mine);
}

}  // namespace
}  // namespace dblock
