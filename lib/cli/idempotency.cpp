// lib/cli/idempotency.cpp — `dblock idempotency show SCOPE KEY [--json] [--body]` and
// `dblock idempotency list [--status S] [--scope S] [--limit N] [--all] [--json]`: the
// operators' view of the idempotency store (dblock/idempotency.hpp). Read-only.
// stdout carries results only; errors reach stderr through main.cpp. A missing record
// is exit 1 with "dblock: no idempotency record ...".
#include <nlohmann/json.hpp>

#include <iomanip>
#include <iostream>

#include "cli/commands.hpp"
#include "core/idempotency_detail.hpp"
#include "dblock/errors.hpp"
#include "dblock/idempotency.hpp"

namespace dblock::cli {

namespace {

namespace idem = detail::idem;

struct show_args {
  std::string scope;
  std::string key;
  bool json = false;
  bool body = false;
};

struct list_args {
  std::optional<std::string> status;
  std::optional<std::string> scope;
  std::size_t limit = 100;
  bool all = false;
  bool json = false;
};

// A text field for humans: as is when it is clean UTF-8, else escaped.
std::string human(const std::string& s) { return idem::is_clean_utf8(s) ? s : idem::printable(s, s.size()); }

std::string state_of(const idempotency_record& r) {
  if (r.expired) return std::string(to_string(r.status)) + " (expired: treated as absent)";
  if (r.status != idempotency_status::in_progress) return to_string(r.status);
  if (!r.owner) return "in_progress (reopened: the next begin takes it over)";
  if (r.lease_remaining && r.lease_remaining->count() == 0) return "in_progress (lease lapsed: the next begin takes it over)";
  return "in_progress";
}

nlohmann::json to_json(const idempotency_record& r, bool with_body) {
  nlohmann::json j;
  j["scope"] = r.scope;
  j["key"] = r.key;
  j["status"] = to_string(r.status);
  j["attempt"] = r.attempt;
  j["fingerprint"] = r.fingerprint;
  j["owner"] = r.owner ? nlohmann::json(*r.owner) : nlohmann::json(nullptr);
  j["recovery_point"] = r.recovery_point ? nlohmann::json(*r.recovery_point) : nlohmann::json(nullptr);
  j["response_code"] = r.response_code ? nlohmann::json(*r.response_code) : nlohmann::json(nullptr);
  j["body_bytes"] = r.body_bytes;
  if (with_body) {
    if (r.response_body) {
      j["response_body_hex"] = idem::hex_encode(*r.response_body);
      // The body as a JSON string only when it is valid UTF-8 (JSON cannot carry raw bytes).
      j["response_body"] = idem::is_clean_utf8(*r.response_body) ? nlohmann::json(*r.response_body) : nlohmann::json(nullptr);
    } else {
      j["response_body_hex"] = nullptr;
      j["response_body"] = nullptr;
    }
  }
  j["created_at"] = idem::format_utc_ms(r.created_at_ms);
  j["updated_at"] = idem::format_utc_ms(r.updated_at_ms);
  j["expires_at"] = idem::format_utc_ms(r.expires_at_ms);
  j["lease_expires_at"] = r.lease_expires_at_ms ? nlohmann::json(idem::format_utc_ms(*r.lease_expires_at_ms)) : nlohmann::json(nullptr);
  j["lease_remaining_ms"] = r.lease_remaining ? nlohmann::json(r.lease_remaining->count()) : nlohmann::json(nullptr);
  j["expired"] = r.expired;
  return j;
}

int run_show(const global_options& g, const show_args& a) {
  idem::check_scope(a.scope);  // bad input: exit 64 before connecting
  idem::check_key(a.key);
  auto db = connect(g);
  db.require_schema();
  idempotency_store store(db);
  auto rec = store.get(a.scope, a.key, true);
  if (!rec) {
    std::cerr << "dblock: no idempotency record for scope '" << human(a.scope) << "' key '" << human(a.key) << "'\n";
    return exit_failure;
  }
  const auto& r = *rec;
  if (a.body) {
    if (r.response_body) std::cout.write(r.response_body->data(), static_cast<std::streamsize>(r.response_body->size()));
    std::cout.flush();
    return exit_ok;
  }
  if (a.json) {
    std::cout << to_json(r, true).dump(2) << "\n";
    return exit_ok;
  }
  std::cout << "scope:            " << human(r.scope) << "\n"
            << "key:              " << human(r.key) << "\n"
            << "status:           " << state_of(r) << "\n"
            << "attempt:          " << r.attempt << "\n"
            << "fingerprint:      " << r.fingerprint << "\n"
            << "owner:            " << r.owner.value_or("-") << "\n"
            << "recovery point:   " << (r.recovery_point ? human(*r.recovery_point) : "-") << "\n";
  if (r.lease_expires_at_ms)
    std::cout << "lease expires:    " << idem::format_utc_ms(*r.lease_expires_at_ms) << " (in "
              << (r.lease_remaining ? r.lease_remaining->count() : 0) << " ms)\n";
  std::cout << "response code:    " << (r.response_code ? std::to_string(*r.response_code) : "-") << "\n"
            << "response body:    ";
  if (!r.response_body) std::cout << "-\n";
  else if (idem::is_clean_utf8(*r.response_body) || r.response_body->empty()) std::cout << *r.response_body << "\n";
  else std::cout << "(" << r.body_bytes << " bytes, not UTF-8 text; hex) " << idem::hex_encode(*r.response_body) << "\n";
  std::cout << "created:          " << idem::format_utc_ms(r.created_at_ms) << "\n"
            << "updated:          " << idem::format_utc_ms(r.updated_at_ms) << "\n"
            << "expires:          " << idem::format_utc_ms(r.expires_at_ms) << "\n";
  return exit_ok;
}

int run_list(const global_options& g, const list_args& a) {
  idempotency_filter f;
  if (a.status) {
    if (*a.status == "in_progress") f.status = idempotency_status::in_progress;
    else if (*a.status == "completed") f.status = idempotency_status::completed;
    else if (*a.status == "failed") f.status = idempotency_status::failed;
    else throw invalid_argument("--status '" + *a.status + "' must be in_progress, completed or failed");
  }
  if (a.scope) idem::check_scope(*a.scope);
  f.scope = a.scope;
  f.limit = a.limit;
  f.include_expired = a.all;
  if (f.limit < 1 || f.limit > 100000)
    throw invalid_argument("--limit " + std::to_string(a.limit) + " must be between 1 and 100000");
  auto db = connect(g);
  db.require_schema();
  idempotency_store store(db);
  auto rows = store.list(f);
  if (a.json) {
    auto arr = nlohmann::json::array();
    for (const auto& r : rows) arr.push_back(to_json(r, false));
    std::cout << arr.dump(2) << "\n";
    return exit_ok;
  }
  std::cout << std::left << std::setw(16) << "SCOPE" << " " << std::setw(28) << "KEY" << " " << std::setw(12)
            << "STATUS" << " " << std::setw(7) << "ATTEMPT" << " " << std::setw(5) << "CODE" << " " << std::setw(24)
            << "UPDATED" << " " << "EXPIRES\n";
  for (const auto& r : rows) {
    std::string status = to_string(r.status);
    if (r.expired) status += "*";
    std::cout << std::left << std::setw(16) << human(r.scope) << " " << std::setw(28) << human(r.key) << " "
              << std::setw(12) << status << " " << std::setw(7) << r.attempt << " " << std::setw(5)
              << (r.response_code ? std::to_string(*r.response_code) : "-") << " " << std::setw(24)
              << idem::format_utc_ms(r.updated_at_ms) << " " << idem::format_utc_ms(r.expires_at_ms) << "\n";
  }
  return exit_ok;
}

}  // namespace

void add_idempotency_commands(CLI::App& app, global_options& g, command_registry& reg) {
  auto* idem_cmd = app.add_subcommand("idempotency", "Inspect idempotency records (show, list)");
  idem_cmd->require_subcommand(1);

  auto sa = std::make_shared<show_args>();
  auto* show = idem_cmd->add_subcommand("show", "Show one idempotency record (exit 1 when there is none)");
  show->add_option("scope", sa->scope, "Scope of the key")->required();
  show->add_option("key", sa->key, "The idempotency key")->required();
  show->add_flag("--json", sa->json, "One JSON object (body as hex, and as a string when it is UTF-8)");
  show->add_flag("--body", sa->body, "Write only the stored response body, byte-exact, to stdout");
  reg.add(show, [&g, sa] { return run_show(g, *sa); });

  auto la = std::make_shared<list_args>();
  auto* list = idem_cmd->add_subcommand("list", "List idempotency records, most recently changed first");
  list->add_option("--status", la->status, "Only records in this state: in_progress, completed or failed");
  list->add_option("--scope", la->scope, "Only records of this scope");
  list->add_option("--limit", la->limit, "At most this many records")->capture_default_str();
  list->add_flag("--all", la->all, "Include records past their retention (marked * in the table)");
  list->add_flag("--json", la->json, "A JSON array of records (without bodies)");
  reg.add(list, [&g, la] { return run_list(g, *la); });
}

}  // namespace dblock::cli
