// lib/core/text.hpp — text helpers shared by the library. Internal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dblock::detail {

using cell = std::optional<std::string>;

// Whether s is valid UTF-8: no bad lead or continuation byte, overlong form, surrogate or
// code point above U+10FFFF. NUL is valid here. *bad_offset = where the first bad sequence starts.
[[nodiscard]] bool valid_utf8(std::string_view s, std::size_t* bad_offset = nullptr);

// An integer cell of a statement's row. Throws internal_error naming `what` for NULL or
// anything but a whole decimal integer.
[[nodiscard]] std::int64_t parse_int_cell(const cell& c, std::string_view what);

}  // namespace dblock::detail
