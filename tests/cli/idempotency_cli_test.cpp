// tests/cli/idempotency_cli_test.cpp — `dblock idempotency show SCOPE KEY [--json] [--body]`
// and `dblock idempotency list [--status S] [--scope S] [--limit N] [--all] [--json]` driven
// as an operator would: records made with the library, then the real binary's stdout,
// stderr and exit codes (0 found, 1 no such record, 64 bad input, 78 schema missing).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>

#include "core/idempotency_detail.hpp"
#include "dblock/dblock.hpp"
#include "support/process.hpp"
#include "support/servers.hpp"
#include "support/temp_dir.hpp"

namespace dblock::test {
namespace {

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

std::string binary_body() {
  std::string b("\x89PNG\r\n\x1a\n", 8);
  for (int i = 0; i < 256; ++i) b += static_cast<char>(i);
  return b + std::string("\0\xff", 2);
}

class IdempotencyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = "sqlite://" + (dir_.path() / "idem.db").string();
    auto db = dblock::open(url_);
    db.migrate();
    idempotency_store s(db);
    const auto fp = fingerprint_fields({{"amount", "1000"}});
    auto a = s.begin("payments", "order-1", fp);
    ASSERT_TRUE(a.started());
    ASSERT_EQ(s.complete(a.attempt, {201, R"({"id":"pay_1"})"}), finish_status::recorded);
    auto b = s.begin("payments", "order-2", fp);
    ASSERT_TRUE(b.started());
    ASSERT_EQ(s.checkpoint(b.attempt, "card_charged"), finish_status::recorded);
    owner_ = b.attempt.owner;
    auto c = s.begin("payments", "order-3", fp);
    ASSERT_EQ(s.fail(c.attempt, failure_kind::terminal, {402, binary_body()}), finish_status::recorded);
    auto d = s.begin("refunds", "r-1", fp);
    ASSERT_EQ(s.complete(d.attempt, {200, "refunded"}), finish_status::recorded);
  }

  process_result dblock(std::vector<std::string> args, bool with_url = true) {
    process_options o;
    o.argv = {DBLOCK_BINARY};
    if (with_url) {
      o.argv.push_back("--url");
      o.argv.push_back(url_);
    }
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.env["DBLOCK_URL"] = std::nullopt;
    o.cwd = dir_.path();
    o.timeout = std::chrono::seconds(60);
    auto r = run_process(o);
    EXPECT_FALSE(r.timed_out);
    return r;
  }

  static void expect_one_error_line(const process_result& r) {
    EXPECT_TRUE(r.err.starts_with("dblock: ")) << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_EQ(r.out, "");
  }

  temp_dir dir_{"dblock-idem-cli"};
  std::string url_;
  std::string owner_;
};

TEST_F(IdempotencyCli, ShowCompletedRecord) {
  auto r = dblock({"idempotency", "show", "payments", "order-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(contains(r.out, "status:           completed\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "attempt:          1\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "response code:    201\n")) << r.out;
  EXPECT_TRUE(contains(r.out, R"(response body:    {"id":"pay_1"})")) << r.out;
  EXPECT_TRUE(contains(r.out, "fingerprint:      " + fingerprint_fields({{"amount", "1000"}}))) << r.out;
  EXPECT_TRUE(contains(r.out, "expires:          ")) << r.out;
}

TEST_F(IdempotencyCli, ShowInProgressRecordWithLeaseAndRecoveryPoint) {
  auto r = dblock({"idempotency", "show", "payments", "order-2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "status:           in_progress\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "recovery point:   card_charged\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "owner:            " + owner_ + "\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "lease expires:    ")) << r.out;
  EXPECT_TRUE(contains(r.out, "response code:    -\n")) << r.out;
}

TEST_F(IdempotencyCli, ShowJsonCarriesBinaryBodiesAsHex) {
  auto r = dblock({"idempotency", "show", "payments", "order-3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["scope"], "payments");
  EXPECT_EQ(j["key"], "order-3");
  EXPECT_EQ(j["status"], "failed");
  EXPECT_EQ(j["attempt"], 1);
  EXPECT_EQ(j["response_code"], 402);
  EXPECT_TRUE(j["response_body"].is_null()) << "not UTF-8: only as hex";
  EXPECT_EQ(j["response_body_hex"], detail::idem::hex_encode(binary_body()));
  EXPECT_EQ(j["body_bytes"], binary_body().size());
  EXPECT_EQ(j["expired"], false);
  EXPECT_TRUE(j["lease_expires_at"].is_null());
  EXPECT_TRUE(std::string(j["created_at"]).ends_with("Z"));

  auto ok = nlohmann::json::parse(dblock({"idempotency", "show", "payments", "order-1", "--json"}).out);
  EXPECT_EQ(ok["response_body"], R"({"id":"pay_1"})");
  auto busy = nlohmann::json::parse(dblock({"idempotency", "show", "payments", "order-2", "--json"}).out);
  EXPECT_EQ(busy["status"], "in_progress");
  EXPECT_EQ(busy["recovery_point"], "card_charged");
  EXPECT_GT(busy["lease_remaining_ms"].get<long long>(), 20000);
}

TEST_F(IdempotencyCli, ShowBodyWritesTheStoredBytesExactly) {
  auto r = dblock({"idempotency", "show", "payments", "order-3", "--body"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == binary_body()) << "body differs (" << r.out.size() << " bytes)";
}

TEST_F(IdempotencyCli, ShowMissingRecordExits1) {
  auto r = dblock({"idempotency", "show", "payments", "nope"});
  EXPECT_EQ(r.exit_code, 1);
  expect_one_error_line(r);
  EXPECT_TRUE(contains(r.err, "no idempotency record for scope 'payments' key 'nope'")) << r.err;
}

TEST_F(IdempotencyCli, BadInputExits64NamingTheValue) {
  auto r = dblock({"idempotency", "show", "payments", ""});
  EXPECT_EQ(r.exit_code, 64);
  expect_one_error_line(r);
  EXPECT_TRUE(contains(r.err, "key is empty")) << r.err;

  r = dblock({"idempotency", "show", "payments", std::string(256, 'k')});
  EXPECT_EQ(r.exit_code, 64);
  expect_one_error_line(r);
  EXPECT_TRUE(contains(r.err, "256 bytes")) << r.err;

  r = dblock({"idempotency", "list", "--status", "done"});
  EXPECT_EQ(r.exit_code, 64);
  expect_one_error_line(r);
  EXPECT_TRUE(contains(r.err, "'done'")) << r.err;

  r = dblock({"idempotency", "list", "--limit", "0"});
  EXPECT_EQ(r.exit_code, 64);
  expect_one_error_line(r);

  r = dblock({"idempotency", "show", "payments"});
  EXPECT_EQ(r.exit_code, 64);
  expect_one_error_line(r);

  r = dblock({"idempotency"});
  EXPECT_EQ(r.exit_code, 64);
}

TEST_F(IdempotencyCli, ListTableAndFilters) {
  auto r = dblock({"idempotency", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("SCOPE")) << r.out;
  EXPECT_EQ(line_count(r.out), 5u) << r.out;  // header + 4 records
  for (const char* k : {"order-1", "order-2", "order-3", "r-1"}) EXPECT_TRUE(contains(r.out, k)) << k;

  r = dblock({"idempotency", "list", "--status", "in_progress"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(line_count(r.out), 2u) << r.out;
  EXPECT_TRUE(contains(r.out, "order-2")) << r.out;

  r = dblock({"idempotency", "list", "--scope", "refunds"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(line_count(r.out), 2u) << r.out;
  EXPECT_TRUE(contains(r.out, "r-1")) << r.out;

  r = dblock({"idempotency", "list", "--limit", "2"});
  EXPECT_EQ(line_count(r.out), 3u) << r.out;
}

TEST_F(IdempotencyCli, ListJson) {
  auto r = dblock({"idempotency", "list", "--json", "--status", "completed"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto arr = nlohmann::json::parse(r.out);
  ASSERT_TRUE(arr.is_array());
  ASSERT_EQ(arr.size(), 2u);
  std::set<std::string> keys;
  for (const auto& j : arr) {
    EXPECT_EQ(j["status"], "completed");
    EXPECT_FALSE(j.contains("response_body_hex")) << "list carries no bodies";
    keys.insert(j["key"]);
  }
  EXPECT_EQ(keys, (std::set<std::string>{"order-1", "r-1"}));

  auto failed = nlohmann::json::parse(dblock({"idempotency", "list", "--json", "--status", "failed"}).out);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["response_code"], 402);
  EXPECT_EQ(failed[0]["body_bytes"], binary_body().size());

  auto none = dblock({"idempotency", "list", "--json", "--scope", "nothing-here"});
  ASSERT_EQ(none.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(none.out), nlohmann::json::array());
}

TEST_F(IdempotencyCli, EmbeddedDefaultMigratesItselfAndUnmigratedUrlExits78) {
  // No --url, no DBLOCK_URL: sqlite:dblock.db in the current folder, created and migrated.
  auto r = dblock({"idempotency", "list", "--json"}, false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json::array());
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "dblock.db"));

  process_options o;
  o.argv = {DBLOCK_BINARY, "--url", "sqlite:fresh.db", "idempotency", "list"};
  o.env["DBLOCK_URL"] = std::nullopt;
  o.cwd = dir_.path();
  auto m = run_process(o);
  EXPECT_EQ(m.exit_code, 78) << m.err;
  expect_one_error_line(m);
  EXPECT_TRUE(contains(m.err, "dblock migrate")) << m.err;
}

// The same command against a server (PostgreSQL, then MariaDB), when the test servers run.
TEST_F(IdempotencyCli, ShowAndListOnServers) {
  int ran = 0;
  for (const char* var : {pg_url_env, mysql_url_env}) {
    auto u = env_url(var);
    if (!u) {
      if (require_all()) ADD_FAILURE() << var << " is not set";
      continue;
    }
    ++ran;
    auto db = dblock::open(*u);
    db.migrate();
    idempotency_store s(db);
    const std::string scope = "cli_" + random_hex(6);
    auto a = s.begin(scope, "k-1", fingerprint("x"));
    ASSERT_EQ(s.complete(a.attempt, {200, binary_body()}), finish_status::recorded);
    process_options o;
    o.argv = {DBLOCK_BINARY, "idempotency", "show", scope, "k-1", "--body"};
    o.env["DBLOCK_URL"] = *u;  // via the environment: the password never appears in argv
    o.cwd = dir_.path();
    auto r = run_process(o);
    ASSERT_EQ(r.exit_code, 0) << var << ": " << r.err.substr(0, 200);
    EXPECT_TRUE(r.out == binary_body()) << var;
    o.argv = {DBLOCK_BINARY, "idempotency", "list", "--scope", scope, "--json"};
    r = run_process(o);
    ASSERT_EQ(r.exit_code, 0) << var;
    auto arr = nlohmann::json::parse(r.out);
    ASSERT_EQ(arr.size(), 1u) << var;
    EXPECT_EQ(arr[0]["key"], "k-1");
  }
  if (ran == 0) GTEST_SKIP() << "no test server URL set";
}

}  // namespace
}  // namespace dblock::test
