// lib/core/url.cpp — connection URL parsing (include/dblock/url.hpp). Everything is
// checked here, before any connection attempt; messages never contain the password.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "dblock/errors.hpp"
#include "dblock/url.hpp"
#include "core/backend.hpp"
#include "core/dialect.hpp"

namespace dblock {

const char* to_string(dialect d) noexcept { return detail::traits_of(d).name; }

const char* to_string(client_library c) noexcept {
  switch (c) {
    case client_library::pqxx: return "pqxx";
    case client_library::mysql: return "mysql";
    case client_library::soci: return "soci";
  }
  return "?";
}

namespace {

[[noreturn]] void bad(const std::string& what) { throw invalid_argument("invalid URL: " + what); }

std::string percent_decode(std::string_view s, const char* part) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    int v = 0;
    if (i + 2 >= s.size()) bad(std::string("bad percent-encoding in ") + part);
    auto [p, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
    if (ec != std::errc{} || p != s.data() + i + 3) bad(std::string("bad percent-encoding in ") + part);
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

struct scheme_info {
  std::string_view name;
  dialect kind;
  client_library client;
};

constexpr scheme_info schemes[] = {
    {"postgresql", dialect::postgresql, client_library::pqxx},
    {"postgres", dialect::postgresql, client_library::pqxx},
    {"mysql", dialect::mysql, client_library::mysql},
    {"mariadb", dialect::mysql, client_library::mysql},
    {"sqlite", dialect::sqlite, client_library::soci},
    {"soci+postgresql", dialect::postgresql, client_library::soci},
    {"soci+postgres", dialect::postgresql, client_library::soci},
    {"soci+mysql", dialect::mysql, client_library::soci},
    {"soci+mariadb", dialect::mysql, client_library::soci},
    {"soci+sqlite", dialect::sqlite, client_library::soci},
};

void parse_query(std::string_view q, connection_url& u) {
  while (!q.empty()) {
    auto amp = q.find('&');
    auto pair = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view{} : q.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0) bad("option '" + std::string(pair) + "' is not key=value");
    u.options[percent_decode(pair.substr(0, eq), "an option name")] =
        percent_decode(pair.substr(eq + 1), "an option value");
  }
}

// ?pooler=...: dblock's own option, taken out of `options` (libpq must not see it).
void take_pooler(connection_url& u) {
  auto it = u.options.find("pooler");
  if (it == u.options.end()) return;
  const std::string v = it->second;
  u.options.erase(it);
  if (!detail::traits_of(u.kind).url_pooler)
    bad("option pooler='" + v + "': pooler mode is for PostgreSQL URLs only (postgresql://, soci+postgresql://)");
  if (v == "transaction") u.pooler = pooler_mode::transaction;
  else if (v != "none" && !v.empty())
    bad("option pooler='" + v + "' is not a pooler mode (known: transaction)");
}

// One "host", "host:port", "[v6]" or "[v6]:port" of a host list; `which` names it in messages.
url_host parse_host(std::string_view item, const std::string& which) {
  url_host h;
  std::string_view hostpart = item, portpart;
  bool has_port = false;
  if (item.starts_with("[")) {  // [IPv6]:port
    auto close = item.find(']');
    if (close == std::string_view::npos) bad("unterminated '[' in " + which);
    hostpart = item.substr(1, close - 1);
    auto after = item.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') bad("unexpected text after ']' in " + which);
      portpart = after.substr(1);
      has_port = true;
    }
  } else if (auto c = item.rfind(':'); c != std::string_view::npos) {
    hostpart = item.substr(0, c);
    portpart = item.substr(c + 1);
    has_port = true;
    if (hostpart.find(':') != std::string_view::npos) bad(which + " is an IPv6 address without brackets (write [addr]:port)");
  }
  h.host = percent_decode(hostpart, "the host");
  if (has_port) {
    int port = 0;
    auto [p, ec] = std::from_chars(portpart.data(), portpart.data() + portpart.size(), port);
    if (portpart.empty() || ec != std::errc{} || p != portpart.data() + portpart.size() || port < 1 || port > 65535)
      bad("bad port '" + std::string(portpart) + "' in " + which + " (expected 1-65535)");
    h.port = port;
  }
  return h;
}

// The authority after "user:pass@": one host or a comma-separated list of them.
void parse_hosts(std::string_view authority, bool needs_host, connection_url& u) {
  std::vector<std::string_view> items;
  std::size_t start = 0;
  bool in_brackets = false;
  for (std::size_t i = 0; i <= authority.size(); ++i) {
    if (i < authority.size() && authority[i] == '[') in_brackets = true;
    if (i < authority.size() && authority[i] == ']') in_brackets = false;
    if (i == authority.size() || (authority[i] == ',' && !in_brackets)) {
      items.push_back(authority.substr(start, i - start));
      start = i + 1;
    }
  }
  const bool list = items.size() > 1;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string which = list ? "host " + std::to_string(i + 1) + " '" + std::string(items[i]) + "' of the host list"
                                   : "host '" + std::string(items[i]) + "'";
    url_host h = parse_host(items[i], which);
    if (h.host.empty() && (needs_host || list)) bad(list ? "empty " + which : std::string("missing host"));
    u.hosts.push_back(std::move(h));
  }
  u.host = u.hosts.front().host;
  u.port = u.hosts.front().port;
}

}  // namespace

namespace detail {
std::string url_without_option(std::string_view url, std::string_view key) {
  auto q = url.find('?');
  if (q == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, q));
  char sep = '?';
  std::string_view rest = url.substr(q + 1);
  while (!rest.empty()) {
    auto amp = rest.find('&');
    auto pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
    if (pair.empty()) continue;
    auto name = pair.substr(0, pair.find('='));
    std::string decoded;
    try {
      decoded = percent_decode(name, "an option name");
    } catch (const error&) {
      decoded = std::string(name);
    }
    if (decoded == key) continue;
    out += sep;
    out += pair;
    sep = '&';
  }
  return out;
}
}  // namespace detail

// ?dialect=...: dblock's own option, taken out of `options`; names a dialect of the
// scheme's family (dialect_traits::family).
static void take_dialect(connection_url& u) {
  auto it = u.options.find("dialect");
  if (it == u.options.end()) return;
  const std::string v = it->second;
  u.options.erase(it);
  const auto family = detail::traits_of(u.kind).family;
  std::string known;
  int in_family = 0;
  for (auto d : detail::all_dialects) {
    if (detail::traits_of(d).family != family) continue;
    ++in_family;
    known += (known.empty() ? "" : ", ") + std::string(detail::traits_of(d).name);
    if (v == detail::traits_of(d).name) {
      u.kind = d;
      u.dialect_given = true;
    }
  }
  if (in_family < 2) bad("option dialect='" + v + "': a dialect is chosen for MySQL URLs only (mysql://, soci+mysql://)");
  if (!u.dialect_given) bad("option dialect='" + v + "' is not a dialect of " + u.scheme + ":// URLs (known: " + known + ")");
}

connection_url parse_url(std::string_view url) {
  connection_url u;
  u.original = std::string(url);
  if (url.empty()) bad("empty URL");
  auto colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0) bad("missing scheme (expected e.g. postgresql://, mysql://, sqlite:)");
  std::string scheme(url.substr(0, colon));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
  const scheme_info* info = nullptr;
  for (const auto& s : schemes)
    if (s.name == scheme) info = &s;
  if (!info)
    bad("unknown scheme '" + scheme +
        "' (known: postgresql, mysql, mariadb, sqlite, soci+postgresql, soci+mysql)");
  u.scheme = scheme;
  u.kind = info->kind;
  u.client = info->client;
  std::string_view rest = url.substr(colon + 1);

  // An '@' after the host (before any option value) means the user name or password
  // holds an unencoded '/' or '?' (common in generated passwords). Parsing on would
  // report a piece of the password as the "host" or "port": refuse without echoing it.
  const auto& traits = detail::traits_of(u.kind);
  if (!traits.url_is_path && rest.starts_with("//")) {
    std::string_view s = rest.substr(2);
    auto auth_end = s.find_first_of("/?");
    if (auth_end != std::string_view::npos && s.substr(0, auth_end).find('@') == std::string_view::npos) {
      auto at = s.find('@', auth_end);
      auto eq = s.find('=', auth_end);
      if (at != std::string_view::npos && (eq == std::string_view::npos || at < eq))
        bad("'@' after the host: percent-encode '/', '?' and '@' in the user name, password and database name "
            "(%2F, %3F, %40)");
    }
  }

  // Split off ?options first: they apply to every scheme.
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    parse_query(rest.substr(q + 1), u);
    rest = rest.substr(0, q);
  }

  if (traits.url_is_path) {
    std::string_view path;
    if (rest.starts_with("//")) {
      // sqlite:///abs/path — the authority must be empty.
      rest.remove_prefix(2);
      if (!rest.starts_with("/"))
        bad("sqlite URLs are sqlite:relative/path.db or sqlite:///absolute/path.db");
      path = rest;
    } else {
      path = rest;
    }
    u.database = percent_decode(path, "the SQLite path");
    if (u.database.empty() || u.database == "/") bad("missing database file path");
    take_pooler(u);
    take_dialect(u);
    return u;
  }

  if (!rest.starts_with("//")) bad("expected '" + scheme + "://' followed by host and database");
  rest.remove_prefix(2);
  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);

  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    auto c = userinfo.find(':');
    u.user = percent_decode(userinfo.substr(0, c), "the user name");
    if (c != std::string_view::npos) u.password = percent_decode(userinfo.substr(c + 1), "the password");
  }

  parse_hosts(authority, traits.url_needs_host, u);
  if (path.find('/') != std::string_view::npos) bad("database name '" + std::string(path) + "' contains '/'");
  u.database = percent_decode(path, "the database name");
  if (u.database.empty()) bad("missing database name (expected " + scheme + "://host/DATABASE)");
  take_pooler(u);
  take_dialect(u);
  return u;
}

std::string connection_url::redacted() const { return redact_url(original); }

namespace {
// Replaces the value of every ?password=... option (libpq accepts one) with "***".
void redact_password_options(std::string& out) {
  auto q = out.find('?');
  if (q == std::string::npos) return;
  std::size_t pos = q + 1;
  while (pos < out.size()) {
    auto end = out.find('&', pos);
    if (end == std::string::npos) end = out.size();
    auto eq = out.find('=', pos);
    if (eq != std::string::npos && eq < end) {
      std::string key = out.substr(pos, eq - pos);
      std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
      if (key == "password") {
        out.replace(eq + 1, end - eq - 1, "***");
        end = eq + 4;
      }
    }
    pos = end + 1;
  }
}
}  // namespace

std::string redact_url(std::string_view url) noexcept {
  try {
    std::string out(url);
    auto sep = out.find("://");
    if (sep != std::string::npos) {
      auto start = sep + 3;
      auto end = out.find_first_of("/?", start);
      if (end == std::string::npos) end = out.size();
      auto at = out.rfind('@', end);
      auto colon = out.find(':', start);
      if (at != std::string::npos && at >= start && colon != std::string::npos && colon < at)
        out.replace(colon + 1, at - colon - 1, "***");
    }
    redact_password_options(out);
    return out;
  } catch (...) {
    return "<url>";
  }
}

}  // namespace dblock
