// lib/core/catalog.cpp — embedded SQL lookup, placeholder rewriting and script
// splitting (see catalog.hpp). One small scanner serves both: it knows quotes,
// comments and PostgreSQL dollar quotes, so a ';' or '$1' inside them is left alone.
#include <array>
#include <atomic>
#include <cctype>
#include <mutex>
#include <unordered_map>

#include "core/catalog.hpp"
#include "core/dialect.hpp"
#include "dblock/errors.hpp"
#include "dblock/util.hpp"

namespace dblock::detail {

std::string_view dialect_dir(dialect d) noexcept { return traits_of(d).name; }

const char* find_embedded(std::string_view path) noexcept {
  for (std::size_t i = 0; i < embedded_file_count; ++i)
    if (path == embedded_files[i].path) return embedded_files[i].text;
  return nullptr;
}

namespace {

// Calls on_code(i) for each character outside quotes/comments; returns via callbacks.
// Skipped regions are passed to on_skip(begin, end) so callers can copy them verbatim.
template <typename Code, typename Skip>
void scan(std::string_view s, Code on_code, Skip on_skip) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    char c = s[i];
    std::size_t start = i;
    if (c == '\'' || c == '"' || c == '`') {
      ++i;
      while (i < n) {
        if (s[i] == c) {
          if (i + 1 < n && s[i + 1] == c) {  // doubled quote inside the literal
            i += 2;
            continue;
          }
          break;
        }
        if (s[i] == '\\' && c == '\'' && i + 1 < n) ++i;  // MySQL-style escape; harmless elsewhere
        ++i;
      }
      i = i < n ? i + 1 : n;
      on_skip(start, i);
    } else if (c == '-' && i + 1 < n && s[i + 1] == '-') {
      while (i < n && s[i] != '\n') ++i;
      on_skip(start, i);
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      auto end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? n : end + 2;
      on_skip(start, i);
    } else if (c == '$' && i + 1 < n && !std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      // Possible dollar quote $tag$ ... $tag$
      std::size_t j = i + 1;
      while (j < n && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      if (j < n && s[j] == '$') {
        std::string_view tag = s.substr(i, j - i + 1);
        auto end = s.find(tag, j + 1);
        i = end == std::string_view::npos ? n : end + tag.size();
        on_skip(start, i);
      } else {
        on_code(i);
        ++i;
      }
    } else {
      on_code(i);
      ++i;
    }
  }
}

// SQLite's CREATE TRIGGER ... BEGIN stmt; stmt; END, and a MariaDB/MySQL stored routine
// (CREATE FUNCTION / PROCEDURE whose body is BEGIN ... END), have inner semicolons: a ';'
// ends such a statement only right after the word END. `code` is the statement so far with
// its literals and comments blanked, so a PostgreSQL function whose body is a dollar quote
// has no BEGIN here and ends at the first ';' after it. A routine body's inner statements
// must so not end with the word END (END IF, END WHILE, END LOOP are fine).
bool inside_routine_body(const std::string& code) {
  std::string head;
  bool has_begin = false;
  std::string word;
  auto end_word = [&] {
    if (word == "BEGIN") has_begin = true;
    word.clear();
  };
  for (char c : code) {
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word += u;
    } else {
      end_word();
    }
    if (head.size() >= 60) continue;
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!head.empty() && head.back() != ' ') head += ' ';
    } else {
      head += u;
    }
  }
  end_word();
  const bool trigger = head.starts_with("CREATE TRIGGER") || head.starts_with("CREATE TEMP TRIGGER") ||
                       head.starts_with("CREATE TEMPORARY TRIGGER");
  const bool routine = head.starts_with("CREATE FUNCTION") || head.starts_with("CREATE PROCEDURE") ||
                       head.starts_with("CREATE OR REPLACE FUNCTION") ||
                       head.starts_with("CREATE OR REPLACE PROCEDURE") || head.starts_with("CREATE DEFINER");
  if (!trigger && !(routine && has_begin)) return false;
  auto e = code.find_last_not_of(" \t\r\n");
  if (e == std::string::npos || e < 2) return true;
  std::string tail = code.substr(e - 2, 3);
  for (auto& c : tail) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  bool word_start = e < 3 || !(std::isalnum(static_cast<unsigned char>(code[e - 3])) || code[e - 3] == '_');
  return !(tail == "END" && word_start);
}

}  // namespace

statement rewrite_placeholders(std::string_view name, std::string_view sql, placeholder_style style) {
  statement st;
  st.name = std::string(name);
  std::size_t skip_to = 0;  // code positions consumed by a placeholder we already handled
  scan(
      sql,
      [&](std::size_t i) {
        if (i < skip_to) return;
        if (sql[i] == '$' && i + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
          std::size_t j = i + 1;
          int num = 0;
          while (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j]))) num = num * 10 + (sql[j++] - '0');
          skip_to = j;
          st.order.push_back(num - 1);
          if (num > st.param_count) st.param_count = num;
          switch (style) {
            case placeholder_style::dollar: st.text.append(sql.substr(i, j - i)); break;
            case placeholder_style::question: st.text += '?'; break;
            case placeholder_style::named: st.text += ":a" + std::to_string(st.order.size()); break;
          }
          return;
        }
        st.text += sql[i];
      },
      [&](std::size_t b, std::size_t e) {
        auto piece = sql.substr(b, e - b);
        // SOCI's own placeholder scanners do not know SQL comments (a ':' in a comment
        // becomes a phantom parameter on MySQL): send SOCI the statement without them.
        if (style == placeholder_style::named && (piece.starts_with("--") || piece.starts_with("/*"))) {
          st.text += ' ';
          return;
        }
        st.text.append(piece);
      });
  return st;
}

std::vector<std::string> split_statements(std::string_view script) {
  std::vector<std::string> out;
  std::string cur;
  std::string code;  // cur with literals and comments blanked (see inside_routine_body)
  bool has_code = false;
  auto flush = [&] {
    if (has_code) {
      auto b = cur.find_first_not_of(" \t\r\n");
      auto e = cur.find_last_not_of(" \t\r\n");
      out.push_back(cur.substr(b, e - b + 1));
    }
    cur.clear();
    code.clear();
    has_code = false;
  };
  scan(
      script,
      [&](std::size_t i) {
        char c = script[i];
        if (c == ';' && !inside_routine_body(code)) {
          flush();
          return;
        }
        if (!std::isspace(static_cast<unsigned char>(c))) has_code = true;
        cur += c;
        code += c;
      },
      [&](std::size_t b, std::size_t e) {
        auto piece = script.substr(b, e - b);
        // Literals and dollar quotes are code; comments are not.
        if (!(piece.starts_with("--") || piece.starts_with("/*"))) has_code = true;
        cur.append(piece);
        code += ' ';
      });
  flush();
  return out;
}

namespace {

constexpr std::size_t style_count = 3;

struct name_hash {
  using is_transparent = void;  // looked up by string_view, without a std::string
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// One dialect directory's statements in one placeholder style, built once.
struct statement_set {
  std::atomic<bool> ready{false};  // checked first: std::call_once costs a TLS set-up per call
  std::once_flag built;
  std::unordered_map<std::string, statement, name_hash, std::equal_to<>> by_name;
};

}  // namespace

std::uint32_t catalog_size() noexcept { return static_cast<std::uint32_t>(embedded_file_count * style_count); }

const statement& get_statement(dialect d, placeholder_style style, std::string_view name) {
  // Every statement dblock runs is looked up here: after the first call for a dialect and
  // style, a lookup takes no lock and builds no key (the sets never change once built).
  constexpr std::size_t dialect_count = 4;  // dblock::dialect's values
  static std::array<std::array<statement_set, style_count>, dialect_count> sets;
  const auto di = static_cast<std::size_t>(d), si = static_cast<std::size_t>(style);
  if (di >= dialect_count || si >= style_count) throw internal_error("get_statement: unknown dialect or style");
  const std::string_view dir = dialect_dir(d);
  statement_set* set = &sets[di][si];
  if (!set->ready.load(std::memory_order_acquire)) std::call_once(set->built, [&] {
    const std::string prefix = "sql/" + std::string(dir) + "/";
    for (std::size_t i = 0; i < embedded_file_count; ++i) {
      std::string_view path = embedded_files[i].path;
      if (!path.starts_with(prefix) || !path.ends_with(".sql")) continue;
      const auto stem = path.substr(prefix.size(), path.size() - prefix.size() - 4);
      if (stem.find('/') != std::string_view::npos) continue;
      statement st = rewrite_placeholders(stem, embedded_files[i].text, style);
      st.id = static_cast<std::uint32_t>(i * style_count + si + 1);  // unique, at most catalog_size()
      set->by_name.emplace(std::string(stem), std::move(st));
    }
    set->ready.store(true, std::memory_order_release);
  });
  if (auto it = set->by_name.find(name); it != set->by_name.end()) return it->second;
  throw internal_error("no embedded statement sql/" + std::string(dir) + "/" + std::string(name) + ".sql");
}

statement render_statement(dialect d, placeholder_style style, std::string_view name,
                           const std::vector<std::pair<std::string, std::string>>& identifiers) {
  std::string path = "sql/" + std::string(dialect_dir(d)) + "/" + std::string(name) + ".sql";
  const char* raw = find_embedded(path);
  if (!raw) throw internal_error("no embedded statement " + path);
  std::string text = raw;
  for (const auto& [slot, ident] : identifiers) {
    const std::string marker = "{" + slot + "}";
    const std::string quoted = quote_identifier(ident, d);  // validates first: nothing runs on bad input
    for (auto pos = text.find(marker); pos != std::string::npos; pos = text.find(marker, pos + quoted.size()))
      text.replace(pos, marker.size(), quoted);
  }
  if (auto open = text.find('{'); open != std::string::npos) {
    auto close = text.find('}', open);
    if (close != std::string::npos && close - open < 40 && is_valid_identifier(text.substr(open + 1, close - open - 1)))
      throw internal_error("statement " + path + " has an unfilled slot " + text.substr(open, close - open + 1));
  }
  // The name keys per-connection prepared-statement caches (Connector/C++ driver): make it
  // differ per identifier set, or "lock_row" for table a would be reused for table b.
  std::string id(name);
  for (std::size_t i = 0; i < identifiers.size(); ++i)
    id += (i ? "," : "[") + identifiers[i].first + "=" + identifiers[i].second + (i + 1 == identifiers.size() ? "]" : "");
  return rewrite_placeholders(id, text, style);
}

}  // namespace dblock::detail
