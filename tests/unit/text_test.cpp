// tests/unit/text_test.cpp — the shared text helpers (lib/core/text.hpp) without a
// database: UTF-8 validation at its edges, lowercase hex, strict integer cells.
#include <gtest/gtest.h>

#include <limits>

#include "core/text.hpp"
#include "dblock/errors.hpp"

namespace dblock::detail {
namespace {

std::string bytes(std::initializer_list<unsigned> b) {
  std::string s;
  for (unsigned c : b) s += static_cast<char>(c);
  return s;
}

TEST(ValidUtf8, AcceptsWellFormedText) {
  EXPECT_TRUE(valid_utf8(""));
  EXPECT_TRUE(valid_utf8("plain ascii"));
  EXPECT_TRUE(valid_utf8(std::string_view("a\0b", 3)));  // NUL is the caller's concern
  EXPECT_TRUE(valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92"));
  EXPECT_TRUE(valid_utf8(bytes({0xed, 0x9f, 0xbf})));        // U+D7FF, just below the surrogates
  EXPECT_TRUE(valid_utf8(bytes({0xf4, 0x8f, 0xbf, 0xbf})));  // U+10FFFF
  EXPECT_TRUE(valid_utf8(bytes({0xc2, 0x80})));              // U+0080, smallest two-byte form
}

TEST(ValidUtf8, RejectsMalformedTextAndSaysWhere) {
  struct bad_case {
    std::string s;
    std::size_t at;
  };
  const bad_case cases[] = {
      {bytes({0xc0, 0x80}), 0},                    // overlong NUL
      {"ab" + bytes({0xc1, 0xbf}), 2},             // overlong two-byte
      {bytes({0xe0, 0x80, 0x80}), 0},              // overlong three-byte
      {bytes({0xf0, 0x80, 0x80, 0x80}), 0},        // overlong four-byte
      {"x" + bytes({0xed, 0xa0, 0x80}), 1},        // U+D800
      {bytes({0xed, 0xbf, 0xbf}), 0},              // U+DFFF
      {bytes({0xf4, 0x90, 0x80, 0x80}), 0},        // U+110000
      {bytes({0xf5, 0x80, 0x80, 0x80}), 0},        // lead byte past U+10FFFF
      {bytes({0x80}), 0},                          // stray continuation
      {"ok" + bytes({0xe2, 0x82}), 2},             // truncated at the end
      {"ok" + bytes({0xf0, 0x9f, 0x94}), 2},       // truncated four-byte
      {bytes({0xc3, 0x28}), 0},                    // lead without continuation
      {bytes({0xff}), 0},
  };
  for (const auto& c : cases) {
    std::size_t at = 999;
    EXPECT_FALSE(valid_utf8(c.s, &at)) << testing::PrintToString(c.s);
    EXPECT_EQ(at, c.at) << testing::PrintToString(c.s);
    EXPECT_FALSE(valid_utf8(c.s));
  }
}

TEST(ToHex, LowercaseTwoDigitsAByte) {
  EXPECT_EQ(to_hex(std::string_view()), "");
  const unsigned char b[] = {0x00, 0x0f, 0xab, 0xff, 0x10};
  EXPECT_EQ(to_hex(std::span<const unsigned char>(b)), "000fabff10");
  EXPECT_EQ(to_hex(std::string_view("\x01Z", 2)), "015a");
}

TEST(ParseIntCell, ReadsDecimalIntegers) {
  EXPECT_EQ(parse_int_cell(cell("0"), "x"), 0);
  EXPECT_EQ(parse_int_cell(cell("-42"), "x"), -42);
  EXPECT_EQ(parse_int_cell(cell("9223372036854775807"), "x"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(parse_int_cell(cell("-9223372036854775808"), "x"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(parse_int_cell_or_null(cell("7"), "x"), 7);
  EXPECT_EQ(parse_int_cell_or_null(std::nullopt, "x"), std::nullopt);
}

TEST(ParseIntCell, RejectsNullAndOtherTextNamingIt) {
  auto message = [](const cell& c) -> std::string {
    try {
      (void)parse_int_cell(c, "the fence column");
    } catch (const internal_error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message(std::nullopt).find("the fence column"), std::string::npos);
  EXPECT_NE(message(std::nullopt).find("NULL"), std::string::npos);
  for (const char* bad : {"", "12x", "x12", " 12", "12 ", "1.5", "+", "-", "9223372036854775808",
                          "-9223372036854775809"}) {
    const auto m = message(cell(bad));
    EXPECT_NE(m.find("the fence column"), std::string::npos) << bad;
    EXPECT_NE(m.find("'" + std::string(bad) + "'"), std::string::npos) << bad << ": " << m;
    EXPECT_THROW((void)parse_int_cell_or_null(cell(bad), "x"), internal_error) << bad;
  }
}

}  // namespace
}  // namespace dblock::detail
