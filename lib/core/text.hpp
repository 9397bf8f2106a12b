// lib/core/text.hpp — byte-level text helpers shared by the library: UTF-8 validation,
// hex encoding, and integer cells of statement results parsed strictly. Pure (no
// database), checked by tests/unit/text_test.cpp. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/backend.hpp"

namespace dblock::detail {

// Well-formed UTF-8: no stray continuation or invalid lead bytes, no overlong forms, no
// surrogates, nothing above U+10FFFF, no sequence cut short. NUL is allowed here (callers
// that refuse it check it themselves). On false, *bad_offset (if given) is the offset of
// the first byte of the offending sequence.
[[nodiscard]] bool valid_utf8(std::string_view s, std::size_t* bad_offset = nullptr) noexcept;

// Lowercase hex, two digits a byte.
[[nodiscard]] std::string to_hex(std::span<const unsigned char> bytes);
[[nodiscard]] inline std::string to_hex(std::string_view bytes) {
  return to_hex(std::span(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
}

// A cell holding a decimal 64-bit integer (nothing else, no spaces). SQL NULL, other text or
// trailing characters throw internal_error naming `what` (and the text).
[[nodiscard]] std::int64_t parse_int_cell(const cell& c, std::string_view what);
// The same, with SQL NULL as nullopt.
[[nodiscard]] std::optional<std::int64_t> parse_int_cell_or_null(const cell& c, std::string_view what);

}  // namespace dblock::detail
