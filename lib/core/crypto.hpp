// lib/core/crypto.hpp — OpenSSL-backed helpers: SHA-256 (migration checksums,
// fingerprints, session-lock keys) and unguessable random tokens (lock owners).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dblock::detail {

[[nodiscard]] std::string sha256_hex(std::string_view bytes);
// First 8 bytes of SHA-256 as a signed 64-bit integer (PostgreSQL advisory-lock key).
[[nodiscard]] std::int64_t sha256_int64(std::string_view bytes);
// `bytes` random bytes from OpenSSL's CSPRNG, hex-encoded; drawn from a per-thread pool that
// RAND_bytes refills, emptied in a forked child (util.cpp says why).
[[nodiscard]] std::string random_hex(std::size_t bytes);

}  // namespace dblock::detail
