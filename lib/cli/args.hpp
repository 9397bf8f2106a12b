// lib/cli/args.hpp — what the dblock command reads from its arguments and environment
// beyond CLI11's own parsing: durations ("250ms", "30s", "5m", "1h"; a bare number is
// seconds) and the URL used when neither --url nor DBLOCK_URL is given.
#pragma once

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "dblock/errors.hpp"

namespace dblock::cli {

// The embedded default when neither --url nor DBLOCK_URL is given.
inline constexpr std::string_view default_url = "sqlite:dblock.db";

// Throws invalid_argument naming the value when it is not a valid, non-negative duration
// ("0" is valid: `dblock exec --wait 0` means do not wait).
[[nodiscard]] inline std::chrono::milliseconds parse_duration(std::string_view text) {
  auto fail = [&]() -> std::chrono::milliseconds {
    throw invalid_argument("invalid duration '" + std::string(text) +
                           "' (expected e.g. 250ms, 30s, 5m, 1h; a bare number is seconds)");
  };
  if (text.empty()) return fail();
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || p == text.data() || !std::isfinite(v) || v < 0) return fail();  // from_chars takes "nan", "inf"
  std::string_view unit(p, text.data() + text.size() - p);
  double ms = 0;
  if (unit.empty() || unit == "s") ms = v * 1000;
  else if (unit == "ms") ms = v;
  else if (unit == "m") ms = v * 60'000;
  else if (unit == "h") ms = v * 3'600'000;
  else return fail();
  if (ms > 1e12) return fail();
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms + 0.5));
}

}  // namespace dblock::cli
