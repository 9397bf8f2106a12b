// lib/core/text.cpp — UTF-8 validation, hex, integer cells (text.hpp).
#include "core/text.hpp"

#include <charconv>

#include "dblock/errors.hpp"

namespace dblock::detail {

bool valid_utf8(std::string_view s, std::size_t* bad_offset) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  auto bad = [&] {
    if (bad_offset) *bad_offset = i;
    return false;
  };
  while (i < n) {
    const unsigned c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return bad();  // continuation byte, overlong lead (C0/C1) or a lead above U+10FFFF
    }
    if (i + len > n) return bad();
    for (std::size_t k = 1; k < len; ++k) {
      const unsigned cc = p[i + k];
      if ((cc & 0xc0) != 0x80) return bad();
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff))) return bad();  // overlong, too large
    if (cp >= 0xd800 && cp <= 0xdfff) return bad();  // surrogates
    i += len;
  }
  return true;
}

std::string to_hex(std::span<const unsigned char> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s(bytes.size() * 2, '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    s[2 * i] = digits[bytes[i] >> 4];
    s[2 * i + 1] = digits[bytes[i] & 15];
  }
  return s;
}

std::optional<std::int64_t> parse_int_cell_or_null(const cell& c, std::string_view what) {
  if (!c) return std::nullopt;
  const std::string& t = *c;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc{} || end != t.data() + t.size() || t.empty())
    throw internal_error(std::string(what) + ": expected a 64-bit integer from the database, got '" + t + "'");
  return v;
}

std::int64_t parse_int_cell(const cell& c, std::string_view what) {
  if (!c) throw internal_error(std::string(what) + ": expected an integer from the database, got NULL");
  return *parse_int_cell_or_null(c, what);
}

}  // namespace dblock::detail
