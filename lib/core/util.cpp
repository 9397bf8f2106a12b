// lib/core/util.cpp — identifier validation (dblock/util.hpp) and quoting
// (core/catalog.hpp), and the OpenSSL helpers of crypto.hpp.
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <pthread.h>

#include <atomic>
#include <charconv>
#include <cmath>
#include <cstring>

#include "core/crypto.hpp"
#include "core/catalog.hpp"
#include "core/dialect.hpp"
#include "core/text.hpp"
#include "dblock/errors.hpp"
#include "dblock/util.hpp"

namespace dblock {

namespace {
bool is_plain_identifier(std::string_view s) noexcept {
  if (s.empty() || s.size() > 63) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}
}  // namespace

bool is_valid_identifier(std::string_view name) noexcept {
  auto dot = name.find('.');
  if (dot == std::string_view::npos) return is_plain_identifier(name);
  return is_plain_identifier(name.substr(0, dot)) && is_plain_identifier(name.substr(dot + 1));
}

std::string quote_identifier(std::string_view name, dialect d) {
  if (!is_valid_identifier(name))
    throw invalid_argument("invalid identifier '" + std::string(name) +
                           "' (expected [A-Za-z_][A-Za-z0-9_]*, at most 63 characters, optionally schema-qualified)");
  const char q = detail::traits_of(d).identifier_quote;
  std::string out;
  auto part = [&](std::string_view p) {
    out += q;
    out += p;
    out += q;
  };
  auto dot = name.find('.');
  if (dot == std::string_view::npos) {
    part(name);
  } else {
    part(name.substr(0, dot));
    out += '.';
    part(name.substr(dot + 1));
  }
  return out;
}

namespace detail {

namespace {
void sha256(std::string_view bytes, unsigned char out[32]) {
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out, &len, EVP_sha256(), nullptr) != 1 || len != 32)
    throw internal_error("OpenSSL SHA-256 failed");
}
}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char d[32];
  sha256(bytes, d);
  return to_hex(std::span<const unsigned char>(d, 32));
}

std::int64_t sha256_int64(std::string_view bytes) {
  unsigned char d[32];
  sha256(bytes, d);
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | d[i];
  std::int64_t r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}

namespace {
// Random tokens are drawn from a per-thread pool that RAND_bytes fills 1 KiB at a time: one
// RAND_bytes call costs about 2 µs whatever its size (OpenSSL 3 checks for a fork with
// getpid(), a system call, and runs its DRBG), which was a visible share of an idempotency
// claim's client time. A fork (pthread_atfork) empties every pool of the child, so a child
// never hands out bytes its parent also holds; bytes handed out are wiped from the pool.
std::atomic<std::uint64_t> fork_generation{0};
void on_fork_child() noexcept { fork_generation.fetch_add(1, std::memory_order_relaxed); }

struct random_pool {
  unsigned char bytes[1024];
  std::size_t used = sizeof bytes;  // empty
  std::uint64_t generation = 0;
  ~random_pool() { OPENSSL_cleanse(bytes, sizeof bytes); }
};

void random_bytes(unsigned char* out, std::size_t n) {
  static const int registered = ::pthread_atfork(nullptr, nullptr, on_fork_child);
  thread_local random_pool pool;
  if (registered != 0 || n > sizeof pool.bytes) {  // no fork handler: no pool
    if (RAND_bytes(out, static_cast<int>(n)) != 1) throw internal_error("OpenSSL RAND_bytes failed");
    return;
  }
  const auto generation = fork_generation.load(std::memory_order_relaxed);
  if (pool.generation != generation || sizeof pool.bytes - pool.used < n) {
    if (RAND_bytes(pool.bytes, static_cast<int>(sizeof pool.bytes)) != 1)
      throw internal_error("OpenSSL RAND_bytes failed");
    pool.used = 0;
    pool.generation = generation;
  }
  std::memcpy(out, pool.bytes + pool.used, n);
  OPENSSL_cleanse(pool.bytes + pool.used, n);
  pool.used += n;
}
}  // namespace

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  random_bytes(reinterpret_cast<unsigned char*>(raw.data()), bytes);
  const auto hex = to_hex(raw);
  OPENSSL_cleanse(raw.data(), raw.size());
  return hex;
}

}  // namespace detail
}  // namespace dblock
