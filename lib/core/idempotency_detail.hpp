// lib/core/idempotency_detail.hpp — the pure (database-free) pieces of the idempotency
// store (lib/core/idempotency.cpp): input validation, hex coding of bodies, the canonical
// encoding behind fingerprint_fields(), and UTC time formatting (the CLI's, and the lock
// store's read-only probe's). Internal; exposed for tests/unit/idempotency_unit_test.cpp,
// lib/cli/idempotency.cpp and lib/core/lock_store.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dblock::detail::idem {

inline constexpr std::size_t max_scope_bytes = 64;
inline constexpr std::size_t max_key_bytes = 255;
inline constexpr std::size_t max_recovery_point_bytes = 255;
inline constexpr std::size_t max_body_limit = 64u << 20;  // upper bound for idempotency_options::max_body_bytes

// True for well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF) without C0/C1
// control characters or DEL.
[[nodiscard]] bool is_clean_utf8(std::string_view s) noexcept;

// Throw dblock::invalid_argument naming the bad value (shown escaped) when invalid.
void check_scope(std::string_view scope);
void check_key(std::string_view key);
void check_recovery_point(std::string_view point);
// 64 hex digits, either case; returns them lower-cased.
[[nodiscard]] std::string normalize_fingerprint(std::string_view fp);

// A value for a message: printable ASCII as is, other bytes as \xNN, cut after `max` bytes.
[[nodiscard]] std::string printable(std::string_view s, std::size_t max = 80);

[[nodiscard]] std::string hex_encode(std::string_view bytes);
// Either case; throws internal_error on odd length or a non-hex digit.
[[nodiscard]] std::string hex_decode(std::string_view hex);

// The canonical bytes fingerprint_fields() hashes (see dblock/idempotency.hpp).
[[nodiscard]] std::string canonical_fields(const std::vector<std::pair<std::string_view, std::string_view>>& fields);

// Milliseconds since the Unix epoch as "YYYY-MM-DDTHH:MM:SS.mmmZ".
[[nodiscard]] std::string format_utc_ms(std::int64_t ms);

}  // namespace dblock::detail::idem
