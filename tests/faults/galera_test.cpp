// tests/faults/galera_test.cpp — a 3-node MariaDB Galera cluster on loopback (scripts/servers
// with DBLOCK_SERVERS_ONLY=galera, a cluster of the test's own: a fault kills its nodes):
//   - `dblock migrate` works as shipped (the node is detected, MySQL 8.0's statements with
//     their replicated fence counter are used), and ?dialect=mysql is refused clearly;
//   - migrators started on all three nodes at once apply a migration once (the migration
//     lock is a replicated lease row there, not the node-local GET_LOCK);
//   - session locks and the single-active reaper exclude each other across nodes;
//   - fences stay strictly increasing across nodes under concurrent grants;
//   - the fault workload with one node SIGKILLed mid-run: no violation at all.
// The workload run is short for CI (8 s); DBLOCK_TEST_GALERA_SECONDS sets its length for a
// soak. Skipped without MariaDB (DBLOCK_TEST_MYSQL_URL) or galera-4, failed then under
// DBLOCK_TEST_REQUIRE_ALL=1.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "core/backend.hpp"
#include "dblock/dblock.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace dblock::faults {
namespace {

using json = nlohmann::json;

std::optional<std::string> env(const char* var) {
  const char* v = std::getenv(var);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

// Three nodes of the test's own, stopped and removed at the end.
class galera_cluster {
 public:
  galera_cluster() : dir_("dblock-galera") {
    run("start", {}, {{"DBLOCK_SERVERS_ONLY", "galera"}});
    std::ifstream in(dir_.path() / "env");
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("export ")) continue;
      auto eq = line.find('=');
      std::string value = line.substr(eq + 1), clean;
      for (char c : value)
        if (c != '\\') clean += c;  // the env file is %q-quoted
      vars_[line.substr(7, eq - 7)] = clean;
    }
  }
  ~galera_cluster() {
    try {
      run("stop");
    } catch (...) {
    }
  }
  galera_cluster(const galera_cluster&) = delete;
  galera_cluster& operator=(const galera_cluster&) = delete;

  // One node (1..3).
  [[nodiscard]] std::string node(int n) const { return vars_.at("DBLOCK_TEST_GALERA_URL_" + std::to_string(n)); }
  // All three, starting at node n: where that node's clients go when it dies.
  [[nodiscard]] std::string from(int n) const {
    std::string hosts;
    for (int k = 0; k < 3; ++k) {
      const std::string u = node((n - 1 + k) % 3 + 1);
      const auto at = u.find('@') + 1;
      hosts += (hosts.empty() ? "" : ",") + u.substr(at, u.find('/', at) - at);
    }
    const std::string u = node(1);
    const auto at = u.find('@') + 1;
    return u.substr(0, at) + hosts + u.substr(u.find('/', at));
  }
  [[nodiscard]] std::string dir() const { return dir_.path().string(); }

  // scripts/servers COMMAND DIR [ARGS]; throws with its output on failure.
  void run(const std::string& command, const std::vector<std::string>& args = {},
           std::map<std::string, std::optional<std::string>> extra = {}) const {
    test::process_options o;
    o.argv = {"/bin/bash", DBLOCK_SERVERS_SCRIPT, command, dir()};
    for (const auto& a : args) o.argv.push_back(a);
    o.env = std::move(extra);
    o.timeout = std::chrono::milliseconds(180'000);
    auto r = test::run_process(o);
    if (r.exit_code != 0) throw std::runtime_error("scripts/servers " + command + " failed:\n" + r.err);
  }

 private:
  test::temp_dir dir_;
  std::map<std::string, std::string> vars_;
};

class Galera : public ::testing::Test {
 protected:
  void SetUp() override {
    const bool require = env("DBLOCK_TEST_REQUIRE_ALL") == "1";
    if (!env("DBLOCK_TEST_MYSQL_URL")) {
      if (require) FAIL() << "DBLOCK_TEST_MYSQL_URL is not set (no MariaDB)";
      GTEST_SKIP() << "DBLOCK_TEST_MYSQL_URL is not set: MariaDB is not available here";
    }
    if (!std::filesystem::exists("/usr/lib/galera/libgalera_smm.so")) {
      if (require) FAIL() << "galera-4 is not installed (/usr/lib/galera/libgalera_smm.so)";
      GTEST_SKIP() << "galera-4 is not installed";
    }
  }
};

test::process_result cli(const std::vector<std::string>& args) {
  test::process_options o;
  o.argv = {DBLOCK_CLI};
  for (const auto& a : args) o.argv.push_back(a);
  o.timeout = std::chrono::milliseconds(120'000);
  return test::run_process(o);
}

TEST_F(Galera, SchemaMigrationsLocksAndFencesAcrossNodes) {
  galera_cluster c;

  // The schema as shipped, through the command; then again from another node: nothing to do.
  auto r = cli({"--url", c.node(1), "migrate"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = cli({"--url", c.node(2), "migrate"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 applied"), std::string::npos) << r.out;

  // MariaDB's own statements would need a cached sequence: one clear refusal.
  r = cli({"--url", c.node(3) + "?dialect=mysql", "locks"});
  EXPECT_EQ(r.exit_code, 64) << r.out << r.err;
  EXPECT_NE(r.err.find("Galera"), std::string::npos) << r.err;
  EXPECT_THROW((void)dblock::open(c.node(3) + "?dialect=mysql"), invalid_argument);

  // An application's migrations, started on all three nodes at once, three times over: each
  // applies once (a second CREATE TABLE would fail the run, a second INSERT adds a row).
  test::temp_dir mig("dblock-galera-mig");
  for (int round = 0; round < 3; ++round) {
    const std::string v = std::to_string(round + 1);
    std::ofstream(mig.path() / ("000" + v + "_app.sql"))
        << "CREATE TABLE app_t" << v << " (id INT PRIMARY KEY);\nINSERT INTO app_t" << v << " VALUES (1);\n";
    std::vector<std::thread> ts;
    std::atomic<int> applied{0}, failed{0};
    std::mutex mu;
    std::string errors;
    for (int n = 1; n <= 3; ++n)
      ts.emplace_back([&, n] {
        try {
          auto db = dblock::open(c.node(n));
          applied += static_cast<int>(db.migrate_dir(mig.path(), "app").applied.size());
        } catch (const std::exception& e) {
          ++failed;
          std::lock_guard lock(mu);
          errors += std::string(e.what()) + "\n";
        }
      });
    for (auto& t : ts) t.join();
    EXPECT_EQ(failed.load(), 0) << errors;
    EXPECT_EQ(applied.load(), 1) << "round " << round << ": migration 000" << v << " applied " << applied.load()
                                 << " times";
  }
  {
    auto db = dblock::open(c.node(2));
    for (int v = 1; v <= 3; ++v) {
      auto res = detail::backend_of(db)->exec_statement(
          detail::statement{"count", "SELECT COUNT(*) FROM app_t" + std::to_string(v), {}, 0});
      ASSERT_EQ(res.rows.size(), 1u);
      EXPECT_EQ(res.rows[0][0].value_or(""), "1");
    }
  }

  // A session lock on node 1 keeps node 2 and 3 out, and is free for them once released.
  {
    auto d1 = dblock::open(c.node(1)), d2 = dblock::open(c.node(2)), d3 = dblock::open(c.node(3));
    auto held = session_lock::try_lock(d1, "galera-job");
    ASSERT_TRUE(held);
    EXPECT_FALSE(session_lock::try_lock(d2, "galera-job"));
    EXPECT_FALSE(session_lock::try_lock(d3, "galera-job"));
    held->unlock();
    EXPECT_TRUE(session_lock::try_lock(d3, "galera-job"));
  }

  // Single-active reapers on two nodes: one of them works, the other stands by.
  {
    reaper_options o;
    o.single_active = true;
    reaper a(dblock::open(c.node(1)), o), b(dblock::open(c.node(2)), o);
    const auto ra = a.run_once();
    const auto rb = b.run_once();
    EXPECT_NE(ra.skipped, rb.skipped) << "both reapers " << (ra.skipped ? "stood by" : "worked");
  }

  // Grants on all three nodes at once: a name never has two holders, and its fences grow
  // strictly in grant order (certification conflicts on the fence counter are retried).
  std::mutex mu;
  std::map<std::string, std::int64_t> last;
  std::map<std::string, int> holders;
  std::atomic<int> overlaps{0}, backwards{0}, grants{0};
  std::set<std::int64_t> seen;
  std::atomic<int> duplicates{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 6; ++t)
    ts.emplace_back([&, t] {
      auto db = dblock::open(c.node(t % 3 + 1));
      session_options so;
      so.ttl = std::chrono::seconds(10);
      session s(db, so);
      for (int i = 0; i < 25; ++i) {
        const std::string name = "galera-fence-" + std::to_string(i % 2);
        auto l = s.acquire(name, std::chrono::seconds(30));
        {
          std::lock_guard lock(mu);
          if (++holders[name] > 1) ++overlaps;
          if (l.fence() <= last[name]) ++backwards;
          last[name] = l.fence();
          if (!seen.insert(l.fence()).second) ++duplicates;
          ++grants;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        {
          std::lock_guard lock(mu);
          --holders[name];
        }
        l.release();
      }
    });
  for (auto& t : ts) t.join();
  std::cout << "[ galera ] " << grants.load() << " grants from 6 threads on 3 nodes: overlaps " << overlaps.load()
            << ", fences not increasing " << backwards.load() << ", duplicate fences " << duplicates.load() << "\n";
  EXPECT_EQ(grants.load(), 150);
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(backwards.load(), 0);
  EXPECT_EQ(duplicates.load(), 0);
}

double run_seconds() {
  auto v = env("DBLOCK_TEST_GALERA_SECONDS");
  return v ? std::stod(*v) : 8.0;
}

// The fault workload with its worker slots spread over the three nodes (each on a URL
// that starts at its node and goes on to the others) and node 3 SIGKILLed mid-run.
json node_kill_run(const std::string& scheme_prefix) {
  galera_cluster c;
  test::temp_dir dir("dblock-galera-run");
  const double seconds = run_seconds();
  test::process_options o;
  o.argv = {DBLOCK_WORKLOAD, "run", "--url", scheme_prefix + c.from(1), "--dir", dir.path().string(),
            "--duration-s", std::to_string(seconds), "--faults", "node-kill", "--fault-interval-ms",
            std::to_string(static_cast<int>(seconds * 1000 / 2)), "--servers-dir", c.dir(), "--kill-node", "3",
            "--seed", std::to_string(::getpid())};
  for (int n = 1; n <= 3; ++n) {
    o.argv.push_back("--worker-url");
    o.argv.push_back(scheme_prefix + c.from(n));
  }
  o.timeout = std::chrono::milliseconds(static_cast<long long>(seconds * 1000) + 150'000);
  auto r = test::run_process(o);
  EXPECT_FALSE(r.timed_out) << "dblock_workload did not finish";
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << "dblock_workload failed (exit " << r.exit_code << "):\n"
                                                     << r.out << r.err;
  const auto path = dir.path() / "summary.json";
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << "no summary.json; output:\n" << r.out << r.err;
    return nullptr;
  }
  std::ifstream in(path);
  json s = json::parse(in);
  if (s.value("worker_unexpected_exits", 0) != 0) {
    // The run folder goes with this test: show why a worker ended on its own (its log's end).
    std::cout << "[ galera ] workload stderr:\n" << r.err << "\n";
    for (const auto& f : std::filesystem::directory_iterator(dir.path() / "logs")) {
      std::ifstream log(f.path());
      std::vector<std::string> lines;
      for (std::string line; std::getline(log, line);) lines.push_back(line);
      std::cout << "[ galera ] " << f.path().filename().string() << " (last lines):\n";
      for (std::size_t i = lines.size() > 15 ? lines.size() - 15 : 0; i < lines.size(); ++i)
        std::cout << "  " << lines[i] << "\n";
    }
  }
  std::cout << "[ galera ] " << scheme_prefix << "mysql on 3 nodes, node 3 killed: " << s.value("operations", 0)
            << " operations, grants " << s.value("grants", 0) << ", faults " << s["faults"].dump() << ", leases lost "
            << s.value("leases_lost", 0) << ", violations " << s.value("violations", 0) << " "
            << (s.contains("violations_by_kind") ? s["violations_by_kind"].dump() : "{}") << "\n";
  return s;
}

TEST_F(Galera, WorkloadNodeKilledMidRun) {
  auto s = node_kill_run("");
  ASSERT_FALSE(s.is_null());
  EXPECT_EQ(s["faults"].value("node-kill", 0), 1);
  EXPECT_EQ(s.value("violations", -1), 0) << s["violation_details"].dump(2);
  EXPECT_EQ(s.value("worker_unexpected_exits", -1), 0);
  EXPECT_GE(s.value("grants", 0), 20);
}

TEST_F(Galera, WorkloadNodeKilledMidRunSoci) {
  auto s = node_kill_run("soci+");
  ASSERT_FALSE(s.is_null());
  EXPECT_EQ(s["faults"].value("node-kill", 0), 1);
  EXPECT_EQ(s.value("violations", -1), 0) << s["violation_details"].dump(2);
  EXPECT_EQ(s.value("worker_unexpected_exits", -1), 0);
  EXPECT_GE(s.value("grants", 0), 20);
}

}  // namespace
}  // namespace dblock::faults
