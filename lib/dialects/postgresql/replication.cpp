// lib/dialects/postgresql/replication.cpp — on PostgreSQL, finds the replication settings
// that let a grant committed on the primary be missing on a promoted standby
// (sql/postgresql/replication_check.sql): standbys that a commit does not wait for, and
// synchronous_commit values that do not wait for a standby's disk.
#include <algorithm>
#include <cctype>
#include <optional>

#include "core/ops/replication.hpp"

namespace dblock::detail {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// synchronous_standby_names: "[FIRST|ANY] n (a, b)", "a, b" (= FIRST 1), or "*".
struct sync_names {
  int required = 0;                 // standbys a commit waits for
  std::vector<std::string> names;   // as PostgreSQL compares them: unquoted ones lower-cased
  bool any_name = false;            // '*'
};

sync_names parse_sync_names(const std::string& text) {
  sync_names out;
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == '(' || c == ')') {
      ++i;
    } else if (c == '"') {
      std::string t = "\"";
      for (++i; i < text.size(); ++i) {
        if (text[i] == '"' && i + 1 < text.size() && text[i + 1] == '"') t += text[++i];
        else if (text[i] == '"') break;
        else t += text[i];
      }
      ++i;
      tokens.push_back(t);
    } else {
      std::string t;
      while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])) && text[i] != ',' &&
             text[i] != '(' && text[i] != ')')
        t += text[i++];
      tokens.push_back(t);
    }
  }
  std::size_t k = 0;
  if (k < tokens.size() && (lower(tokens[k]) == "first" || lower(tokens[k]) == "any")) ++k;
  if (k < tokens.size() && !tokens[k].empty() && std::all_of(tokens[k].begin(), tokens[k].end(), ::isdigit) &&
      k + 1 < tokens.size()) {
    out.required = std::stoi(tokens[k]);
    ++k;
  } else if (k < tokens.size()) {
    out.required = 1;
  }
  for (; k < tokens.size(); ++k) {
    if (tokens[k] == "*") out.any_name = true;
    else if (tokens[k].starts_with("\"")) out.names.push_back(tokens[k].substr(1));
    else out.names.push_back(lower(tokens[k]));
  }
  return out;
}

bool named(const sync_names& s, const std::string& application_name) {
  if (s.any_name) return true;
  return std::any_of(s.names.begin(), s.names.end(),
                     [&](const std::string& n) { return n == application_name || n == lower(application_name); });
}

class pg_replication final : public replication_ops {
  replication_report check(backend& b) const override {
    const result r = b.exec("replication_check");
    replication_report rep;
    if (r.rows.empty()) return rep;
    const std::string commit = r.rows[0].at(0).value_or("");
    const sync_names sync = parse_sync_names(r.rows[0].at(1).value_or(""));
    std::vector<std::string> unprotected;
    int named_count = 0;
    bool states_visible = false;
    for (const auto& row : r.rows) {
      if (!row.at(2)) continue;
      ++rep.standbys;
      const std::string name = *row.at(2);
      if (row.at(3)) {
        // The server's own verdict: only a 'sync' or 'quorum' standby has every commit.
        states_visible = true;
        if (*row.at(3) != "sync" && *row.at(3) != "quorum") unprotected.push_back("'" + name + "' (" + *row.at(3) + ")");
      } else if (named(sync, name)) {
        ++named_count;
      } else {
        unprotected.push_back("'" + name + "'");
      }
    }
    auto add = [&](std::string why) {
      rep.can_lose_grants = true;
      rep.reasons.push_back(std::move(why));
    };
    if (commit == "off")
      add("synchronous_commit is off: a grant is acknowledged before its WAL is on disk, so a crash or a "
          "failover can lose it and hand its fence out again");
    if (rep.standbys == 0) return rep;
    if (sync.required == 0) {
      add(std::to_string(rep.standbys) + " standby(s) replicate asynchronously (synchronous_standby_names is "
          "empty): a promoted standby can lack grants the primary acknowledged");
      return rep;
    }
    if (commit == "local")
      add("synchronous_commit is local: commits do not wait for the synchronous standbys");
    else if (commit == "remote_write")
      add("synchronous_commit is remote_write: a commit waits for a standby's memory, not its disk; an "
          "operating-system crash of that standby with the primary loses grants");
    if (!unprotected.empty()) {
      std::string list;
      for (const auto& u : unprotected) list += (list.empty() ? "" : ", ") + u;
      add("standby(s) " + list + " are not synchronous: promoting one can lose grants the primary acknowledged");
    }
    if (!states_visible && named_count > sync.required)
      add(std::to_string(named_count) + " standbys are named in synchronous_standby_names but a commit waits for " +
          std::to_string(sync.required) + ": promote only one whose sync_state is sync or quorum (pg_stat_replication, "
          "readable with pg_read_all_stats)");
    return rep;
  }
};

}  // namespace

const replication_ops& postgresql_replication() noexcept {
  static const pg_replication ops;
  return ops;
}

}  // namespace dblock::detail
