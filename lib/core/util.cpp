// lib/core/util.cpp — identifier validation (dblock/util.hpp) and quoting
// (core/catalog.hpp), and the OpenSSL helpers of crypto.hpp.
#include <openssl/evp.h>
#include <openssl/rand.h>

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

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1)
    throw internal_error("OpenSSL RAND_bytes failed");
  return to_hex(raw);
}

}  // namespace detail
}  // namespace dblock
