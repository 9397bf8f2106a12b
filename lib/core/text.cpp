// lib/core/text.cpp — see text.hpp.
#include "core/text.hpp"

#include <charconv>

#include "dblock/errors.hpp"

namespace dblock::detail {

bool valid_utf8(std::string_view s, std::size_t* bad_offset) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned c = p[i];
    const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len != 0 && i + len <= n;
    unsigned cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; ok && k < len; ++k) {
      ok = (p[i + k] & 0xC0) == 0x80;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (ok) {
      static const unsigned min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= min_cp[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (!ok) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    i += len;
  }
  return true;
}

std::int64_t parse_int_cell(const cell& c, std::string_view what) {
  if (!c) throw internal_error("expected an integer for " + std::string(what) + ", got NULL");
  std::int64_t v = 0;
  const auto* end = c->data() + c->size();
  auto [p, ec] = std::from_chars(c->data(), end, v);
  if (ec != std::errc() || p != end || c->empty())
    throw internal_error("expected an integer for " + std::string(what) + ", got '" + *c + "'");
  return v;
}

}  // namespace dblock::detail
