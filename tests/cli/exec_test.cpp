// tests/cli/exec_test.cpp — `dblock exec` and `dblock locks` driven as a user would:
// real processes, exit codes (DESIGN: 64, 69, 74, 75, 78), the child's environment and
// status, signal forwarding, the paused-holder scenario, and mutual exclusion between
// shell processes on the embedded SQLite default and on PostgreSQL/MariaDB.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <set>
#include <thread>

#include "support/process.hpp"
#include "support/servers.hpp"
#include "support/temp_dir.hpp"

namespace dblock::test {
namespace {

using namespace std::chrono_literals;

class ExecCli : public ::testing::Test {
 protected:
  temp_dir dir_;
  // dblock [--url URL] ARGS in the test's folder; DBLOCK_URL unset.
  process_options options(std::vector<std::string> args, const std::optional<std::string>& url) {
    process_options o;
    o.argv = {DBLOCK_BINARY};
    if (url) {
      o.argv.push_back("--url");
      o.argv.push_back(*url);
    }
    for (auto& a : args) o.argv.push_back(a);
    o.env["DBLOCK_URL"] = std::nullopt;
    o.cwd = dir_.path();
    o.timeout = 120s;
    return o;
  }
  process_result dblock(std::vector<std::string> args, std::optional<std::string> url = std::nullopt) {
    return run_process(options(std::move(args), url));
  }
  child start(std::vector<std::string> args, std::optional<std::string> url = std::nullopt) {
    return start_process(options(std::move(args), url));
  }
  // Waits until `dblock locks --json` lists `name` (the holder is really holding it).
  void wait_until_held(const std::string& name, std::optional<std::string> url = std::nullopt) {
    for (int i = 0; i < 200; ++i) {
      auto r = dblock({"locks", "--json"}, url);
      if (r.exit_code == 0 && r.out.find("\"" + name + "\"") != std::string::npos) return;
      std::this_thread::sleep_for(50ms);
    }
    FAIL() << name << " never showed up in dblock locks";
  }
};

TEST_F(ExecCli, EmbeddedDefaultRunsTheCommandWithNameAndTokenInAnEmptyFolder) {
  auto r = dblock({"exec", "--name", "job", "--", "sh", "-c", "echo \"$DBLOCK_LOCK_NAME:$DBLOCK_FENCING_TOKEN\""});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "job:1\n") << "nothing but the child's output on stdout";
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "dblock.db"));
  auto again = dblock({"exec", "--name", "job", "--", "sh", "-c", "echo $DBLOCK_FENCING_TOKEN"});
  EXPECT_EQ(again.out, "2\n") << "a fresh grant gets a larger token";
}

TEST_F(ExecCli, ExitsWithTheChildsStatus) {
  EXPECT_EQ(dblock({"exec", "--name", "st", "--", "sh", "-c", "exit 7"}).exit_code, 7);
  EXPECT_EQ(dblock({"exec", "--name", "st", "--", "true"}).exit_code, 0);
  EXPECT_EQ(dblock({"exec", "--name", "st", "--", "sh", "-c", "kill -9 $$"}).exit_code, 128 + 9);
  auto missing = dblock({"exec", "--name", "st", "--", "/nonexistent/program"});
  EXPECT_EQ(missing.exit_code, 127) << "not found";
  EXPECT_NE(missing.err.find("not found"), std::string::npos) << missing.err;
  // Found but not executable: 126, as POSIX shells, env and timeout say.
  const auto plain = dir_.path() / "not-executable.sh";
  write_file(plain, "#!/bin/sh\nexit 0\n");
  auto denied = dblock({"exec", "--name", "st", "--", plain.string()});
  EXPECT_EQ(denied.exit_code, 126) << denied.err;
  EXPECT_EQ(dblock({"exec", "--name", "st", "--", dir_.path().string()}).exit_code, 126) << "a directory";
}

TEST_F(ExecCli, BadInputIsExit64WithOneLineNamingTheValue) {
  struct bad {
    std::vector<std::string> args;
    std::string mention;
  };
  for (const auto& b : std::vector<bad>{{{"exec", "--name", "", "--", "true"}, "empty"},
                                        {{"exec", "--name", std::string(256, 'n'), "--", "true"}, "256"},
                                        {{"exec", "--name", "x", "--ttl", "5q", "--", "true"}, "5q"},
                                        {{"exec", "--name", "x", "--ttl", "10ms", "--", "true"}, "10"},
                                        {{"exec", "--name", "x", "--wait", "soon", "--", "true"}, "soon"},
                                        {{"exec", "--name", "x"}, "command"}}) {
    auto r = dblock(b.args);
    EXPECT_EQ(r.exit_code, 64) << r.err;
    EXPECT_EQ(r.err.rfind("dblock: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(b.mention), std::string::npos) << r.err;
  }
}

TEST_F(ExecCli, NotAcquiredIsExit75NamingHolderAndExpiry) {
  auto holder = start({"exec", "--name", "busy", "--ttl", "30s", "--", "sleep", "30"});
  ASSERT_NO_FATAL_FAILURE(wait_until_held("busy"));
  auto r = dblock({"exec", "--name", "busy", "--", "echo", "never"});
  EXPECT_EQ(r.exit_code, 75);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(":" + std::to_string(holder.pid())), std::string::npos) << "holder host:pid: " << r.err;
  EXPECT_NE(r.err.find("fence"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("until"), std::string::npos) << r.err;
  auto waited = dblock({"exec", "--name", "busy", "--wait", "300ms", "--", "echo", "never"});
  EXPECT_EQ(waited.exit_code, 75) << waited.err;
  auto list = dblock({"locks", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  auto arr = nlohmann::json::parse(list.out);
  ASSERT_TRUE(arr.is_array());
  ASSERT_EQ(arr.size(), 1u);
  EXPECT_EQ(arr[0]["name"], "busy");
  EXPECT_EQ(arr[0]["holds"], 1);
  EXPECT_GT(arr[0]["expires_in_ms"].get<long long>(), 0);
  ::kill(holder.pid(), SIGTERM);
  auto done = holder.wait();
  EXPECT_EQ(done.exit_code, 128 + SIGTERM) << "SIGTERM forwarded to sleep, status passed back";
}

// `dblock elect` runs the command while leader (value and fence in its environment), a
// second campaign without --wait is refused with 75 naming the leader, `dblock leader`
// prints the leader and exits 3 once nobody leads.
TEST_F(ExecCli, ElectRunsTheCommandWhileLeaderAndLeaderPrintsIt) {
  auto marker = dir_.path() / "leading";
  auto lead = start({"elect", "--name", "sched", "--value", "node-a", "--ttl", "30s", "--", "sh", "-c",
                     "echo \"$DBLOCK_LEADER_VALUE:$DBLOCK_FENCING_TOKEN\" > " + marker.string() + "; sleep 30"});
  for (int i = 0; i < 400 && !std::filesystem::exists(marker); ++i) std::this_thread::sleep_for(25ms);
  ASSERT_TRUE(std::filesystem::exists(marker));
  std::string line;
  for (int i = 0; i < 200 && line.empty(); ++i) {
    line = read_file(marker);
    if (line.empty()) std::this_thread::sleep_for(25ms);
  }
  ASSERT_EQ(line.rfind("node-a:", 0), 0u) << line;
  const std::string fence = line.substr(7, line.size() - 8);
  auto who = dblock({"leader", "--name", "sched", "--json"});
  ASSERT_EQ(who.exit_code, 0) << who.err;
  auto j = nlohmann::json::parse(who.out);
  EXPECT_EQ(j["value"], "node-a");
  EXPECT_EQ(std::to_string(j["fence"].get<long long>()), fence);
  auto plain = dblock({"leader", "--name", "sched"});
  EXPECT_EQ(plain.exit_code, 0);
  EXPECT_EQ(plain.out.rfind("node-a\t" + fence + "\t", 0), 0u) << plain.out;
  auto second = dblock({"elect", "--name", "sched", "--value", "node-b", "--", "echo", "never"});
  EXPECT_EQ(second.exit_code, 75);
  EXPECT_EQ(second.out, "");
  EXPECT_NE(second.err.find("node-a"), std::string::npos) << second.err;
  ::kill(lead.pid(), SIGTERM);
  EXPECT_EQ(lead.wait().exit_code, 128 + SIGTERM);
  auto none = dblock({"leader", "--name", "sched"});
  EXPECT_EQ(none.exit_code, 3) << "the leader resigned when its command ended: " << none.out;
  EXPECT_EQ(none.out, "");
  auto next = dblock({"elect", "--name", "sched", "--value", "node-b", "--", "sh", "-c", "echo $DBLOCK_FENCING_TOKEN"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_GT(std::stoll(next.out), std::stoll(fence));
  EXPECT_EQ(dblock({"elect", "--name", "sched", "--", "true"}).exit_code, 64) << "--value is required";
}

// `dblock locks` marks an election's leader: its lease lock's line has mode leader and the
// leader's value (JSON: "mode": "leader", "value"); a plain lease lock stays exclusive.
TEST_F(ExecCli, LocksMarksTheLeaderOfAnElectionWithItsValue) {
  auto marker = dir_.path() / "leading";
  auto lead = start({"elect", "--name", "sched", "--value", "node-a", "--ttl", "30s", "--", "sh", "-c",
                     "echo $DBLOCK_FENCING_TOKEN > " + marker.string() + "; sleep 30"});
  auto plain = start({"exec", "--name", "job", "--ttl", "30s", "--", "sleep", "30"});
  ASSERT_NO_FATAL_FAILURE(wait_until_held("job"));
  std::string fence;
  for (int i = 0; i < 400 && fence.empty(); ++i) {
    if (std::filesystem::exists(marker)) fence = read_file(marker);
    if (fence.empty()) std::this_thread::sleep_for(25ms);
  }
  ASSERT_FALSE(fence.empty()) << "the leader's command never ran";
  fence.pop_back();  // the newline
  auto list = dblock({"locks", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  auto arr = nlohmann::json::parse(list.out);
  ASSERT_EQ(arr.size(), 2u) << list.out;
  EXPECT_EQ(arr[0]["name"], "job");
  EXPECT_EQ(arr[0]["mode"], "exclusive");
  EXPECT_FALSE(arr[0].contains("value")) << list.out;
  EXPECT_EQ(arr[1]["name"], "sched");
  EXPECT_EQ(arr[1]["mode"], "leader");
  EXPECT_EQ(arr[1]["value"], "node-a");
  EXPECT_EQ(std::to_string(arr[1]["fence"].get<long long>()), fence);
  auto text = dblock({"locks"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("leader (node-a)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("exclusive"), std::string::npos) << text.out;
  ::kill(lead.pid(), SIGTERM);
  (void)lead.wait();
  auto after = dblock({"locks", "--json"});
  auto rest = nlohmann::json::parse(after.out);
  ASSERT_EQ(rest.size(), 1u) << "the leader resigned: " << after.out;
  EXPECT_EQ(rest[0]["name"], "job");
  ::kill(plain.pid(), SIGTERM);
  (void)plain.wait();
}

TEST_F(ExecCli, ForwardsSigtermToTheChild) {
  auto marker = dir_.path() / "started";
  auto p = start({"exec", "--name", "fwd", "--", "sh", "-c",
                  "trap 'exit 42' TERM; touch " + marker.string() + "; while :; do sleep 0.05; done"});
  for (int i = 0; i < 200 && !std::filesystem::exists(marker); ++i) std::this_thread::sleep_for(25ms);
  ASSERT_TRUE(std::filesystem::exists(marker));
  ::kill(p.pid(), SIGTERM);
  EXPECT_EQ(p.wait().exit_code, 42);
}

// A --grace that leaves no room within the renewal period is refused before anything is
// sent: exit 64, one line naming the value and the largest grace that fits. Without
// --grace the default (5 s) shrinks to fit a short TTL instead.
TEST_F(ExecCli, GraceThatDoesNotFitTheRenewalPeriodIsRefused) {
  auto r = dblock({"exec", "--name", "g", "--ttl", "2s", "--grace", "1s", "--", "true"});
  EXPECT_EQ(r.exit_code, 64) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("dblock: --grace 1s", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("at most 648ms"), std::string::npos) << r.err;
  EXPECT_EQ(dblock({"locks", "--json"}).out.find("\"g\""), std::string::npos) << "nothing was acquired";
  EXPECT_EQ(dblock({"exec", "--name", "g", "--ttl", "2s", "--", "true"}).exit_code, 0) << "the default grace fits";
  EXPECT_EQ(dblock({"exec", "--name", "g", "--ttl", "2s", "--grace", "648ms", "--", "true"}).exit_code, 0);
}

// The dblock process is paused (SIGSTOP) past its TTL: another holder takes over with a
// larger token; on SIGCONT the paused one notices, stops its child and exits 74.
TEST_F(ExecCli, PausedHolderLosesTheLockExits74AndTheNextTokenIsLarger) {
  auto token_file = dir_.path() / "first_token";
  auto first = start({"exec", "--name", "paused", "--ttl", "1s", "--grace", "300ms", "--", "sh", "-c",
                      "echo $DBLOCK_FENCING_TOKEN > " + token_file.string() + "; exec sleep 60"});
  for (int i = 0; i < 200 && !std::filesystem::exists(token_file); ++i) std::this_thread::sleep_for(25ms);
  ASSERT_TRUE(std::filesystem::exists(token_file));
  std::this_thread::sleep_for(100ms);
  ASSERT_EQ(::kill(first.pid(), SIGSTOP), 0);
  auto second = dblock({"exec", "--name", "paused", "--wait", "10s", "--", "sh", "-c", "echo $DBLOCK_FENCING_TOKEN"});
  ASSERT_EQ(::kill(first.pid(), SIGCONT), 0);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = first.wait();
  EXPECT_EQ(r.exit_code, 74) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s) << "noticed within about one TTL (+ grace)";
  EXPECT_NE(r.err.find("lost"), std::string::npos) << r.err;
  const long first_token = std::stol(read_file(token_file));
  ASSERT_FALSE(second.out.empty());
  EXPECT_GT(std::stol(second.out), first_token);
}

// Several shell processes increment a counter file under `dblock exec`; the increment is
// a racy read-sleep-write, so any overlap loses an update. `procs` loops of `rounds` runs.
void exclusion_through_exec(ExecCli& t, const temp_dir& dir, std::optional<std::string> url, int procs = 5,
                            int rounds = 6) {
  auto counter = dir.path() / "counter";
  write_file(counter, "0\n");
  const std::string name = "excl_" + random_hex(4);
  std::string script = "for i in $(seq " + std::to_string(rounds) + "); do \"$0\" " +
                       (url ? "--url \"$1\" " : std::string()) + "exec --name " + name +
                       " --wait 120s -- sh -c 'v=$(cat " + counter.string() + "); sleep 0.01; echo $((v+1)) > " +
                       counter.string() + "' || exit 1; done";
  std::vector<child> kids;
  start_barrier gate;
  for (int p = 0; p < procs; ++p) {
    process_options o;
    o.argv = {"/bin/sh", "-c", script, DBLOCK_BINARY};
    if (url) o.argv.push_back(*url);
    o.env["DBLOCK_URL"] = std::nullopt;
    o.cwd = dir.path();
    o.timeout = 300s;
    kids.push_back(start_process(o, &gate));
  }
  gate.open();
  for (auto& k : kids) {
    auto r = k.wait();
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(std::stoi(read_file(counter)), procs * rounds) << "lost updates under dblock exec";
  (void)t;
}

TEST_F(ExecCli, MutualExclusionBetweenShellProcessesOnEmbeddedSqlite) {
  ASSERT_EQ(dblock({"migrate"}).exit_code, 0);
  exclusion_through_exec(*this, dir_, std::nullopt);
}

TEST_F(ExecCli, MutualExclusionBetweenShellProcessesOnPostgresqlAndMariadb) {
  for (const char* var : {pg_url_env, mysql_url_env}) {
    auto url = env_url(var);
    if (!url) {
      if (require_all()) ADD_FAILURE() << var << " is not set";
      continue;
    }
    ASSERT_EQ(dblock({"migrate"}, url).exit_code, 0);
    exclusion_through_exec(*this, dir_, url);
  }
}

// PostgreSQL through PgBouncer in transaction pooling mode (scripts/servers starts it):
// 8 loops x 20 runs of `dblock exec` with ?pooler=transaction lose no update, and every
// run exits 0 (a named prepared statement, LISTEN or session advisory lock would leak
// between the clients that share a server connection). --pooler on the command line is
// the same option; a mode that does not exist is exit 64 naming it.
TEST_F(ExecCli, MutualExclusionThroughPgbouncerInTransactionPooling) {
  auto bouncer = env_url(pgbouncer_url_env);
  if (!bouncer) {
    if (require_all()) FAIL() << "DBLOCK_TEST_PGBOUNCER_URL is not set";
    GTEST_SKIP() << "DBLOCK_TEST_PGBOUNCER_URL is not set";
  }
  const std::string url = *bouncer + (bouncer->find('?') == std::string::npos ? "?" : "&") + "pooler=transaction";
  auto m = dblock({"migrate"}, url);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const auto t0 = std::chrono::steady_clock::now();
  exclusion_through_exec(*this, dir_, url, 8, 20);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  RecordProperty("pgbouncer_exec_160_ms", static_cast<int>(ms.count()));
  std::cout << "160 dblock exec runs through PgBouncer: " << ms.count() << " ms\n";

  auto flag = dblock({"--pooler", "transaction", "exec", "--name", "flag", "--", "sh", "-c", "echo ok"}, *bouncer);
  EXPECT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out, "ok\n");
  auto bad = dblock({"--pooler", "statement", "locks"}, *bouncer);
  EXPECT_EQ(bad.exit_code, 64);
  EXPECT_NE(bad.err.find("'statement'"), std::string::npos) << bad.err;
  if (auto pw = parse_url(*bouncer).password; pw && !pw->empty()) {
    EXPECT_EQ(bad.err.find(*pw), std::string::npos) << "no password in messages";
  }
}

// 40 `dblock exec --wait` of one name at once against PostgreSQL: every one succeeds, the
// counter they increment reaches exactly 40, and no process ever holds more than 2 server
// connections (its own and the background one its sessions share): sampled from
// pg_stat_activity every 10 ms by application_name, which is "dblock <host>:<pid>".
TEST_F(ExecCli, FortyWaitingExecsHoldAtMostTwoConnectionsEach) {
  auto pg = env_url(pg_url_env);
  if (!pg) {
    if (require_all()) FAIL() << "DBLOCK_TEST_PG_URL is not set";
    GTEST_SKIP();
  }
  ASSERT_EQ(dblock({"migrate"}, pg).exit_code, 0);
  const int procs = 40;
  const std::string name = "forty_" + random_hex(4);
  auto counter = dir_.path() / "counter";
  write_file(counter, "0\n");
  auto holder = start({"exec", "--name", name, "--", "sleep", "1.5"}, pg);
  wait_until_held(name, pg);
  std::vector<child> kids;
  std::set<std::string> ours;
  for (int p = 0; p < procs; ++p) {
    kids.push_back(start({"exec", "--name", name, "--wait", "120s", "--", "sh", "-c",
                          "v=$(cat " + counter.string() + "); echo $((v+1)) > " + counter.string()},
                         pg));
    ours.insert(":" + std::to_string(kids.back().pid()));
  }
  std::atomic<bool> done{false};
  std::map<std::string, int> most;  // application_name -> most connections seen at once
  int most_total = 0;
  std::thread sampler([&] {
    pqxx::connection c(*pg);
    while (!done) {
      pqxx::nontransaction tx(c);
      int total = 0;
      for (const auto& row : tx.exec("SELECT application_name, COUNT(*) FROM pg_stat_activity"
                                     " WHERE application_name LIKE 'dblock %' GROUP BY application_name")) {
        const auto app = row[0].as<std::string>();
        const auto colon = app.rfind(':');
        if (colon == std::string::npos || !ours.count(app.substr(colon))) continue;
        const int n = row[1].as<int>();
        most[app] = std::max(most[app], n);
        total += n;
      }
      most_total = std::max(most_total, total);
      std::this_thread::sleep_for(10ms);
    }
  });
  int failed = 0;
  for (auto& k : kids) {
    auto r = k.wait();
    if (r.exit_code != 0) {
      ++failed;
      ADD_FAILURE() << "exit " << r.exit_code << ": " << r.err;
    }
  }
  done = true;
  sampler.join();
  EXPECT_EQ(holder.wait().exit_code, 0);
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(std::stoi(read_file(counter)), procs) << "lost updates under dblock exec";
  int worst = 0;
  for (const auto& [app, n] : most) worst = std::max(worst, n);
  std::cout << procs << " waiting dblock exec: at most " << worst << " connections per process, " << most_total
            << " at once in all, " << most.size() << " processes seen\n";
  RecordProperty("connections_per_exec_max", worst);
  RecordProperty("connections_forty_execs_max", most_total);
  EXPECT_LE(worst, 2) << "a dblock exec process held more than 2 server connections";
  EXPECT_GT(most.size(), 0u) << "the sampler saw none of the processes";
}

// The command gets no socket of dblock's own connections (Connector/C++ does not mark them
// close-on-exec), on every database.
TEST_F(ExecCli, CommandInheritsNoDatabaseSocket) {
  for (const char* var : {pg_url_env, mysql_url_env}) {
    auto url = env_url(var);
    if (!url) {
      if (require_all()) ADD_FAILURE() << var << " is not set";
      continue;
    }
    ASSERT_EQ(dblock({"migrate"}, url).exit_code, 0);
    auto r = dblock({"exec", "--name", "fds_" + random_hex(4), "--", "sh", "-c",
                     "for f in /proc/$$/fd/*; do readlink $f; done | grep -c socket || true"},
                    url);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "0\n") << var << ": sockets passed to the command";
  }
}

TEST_F(ExecCli, UnmigratedDatabaseIsExit78AndUnreachableIs69) {
  auto pg = env_url(pg_url_env);
  if (!pg) {
    if (require_all()) FAIL() << "DBLOCK_TEST_PG_URL is not set";
    GTEST_SKIP();
  }
  const auto db = create_database(*pg, dialect::postgresql);
  auto r = dblock({"locks"}, with_database(*pg, db));
  drop_database(*pg, dialect::postgresql, db);
  EXPECT_EQ(r.exit_code, 78) << r.err;
  EXPECT_NE(r.err.find("dblock migrate"), std::string::npos) << r.err;
  auto down = dblock({"exec", "--name", "x", "--", "true"}, "postgresql://u:s3cret@127.0.0.1:1/db");
  EXPECT_EQ(down.exit_code, 69);
  EXPECT_EQ(down.err.find("s3cret"), std::string::npos) << down.err;
}

// Read-write locks through the command: readers share, a writer is refused beside them,
// `dblock locks` shows the mode and the readers.
TEST_F(ExecCli, ReadersShareTheLockAndAWriterIsRefused) {
  auto holder = start({"exec", "--read", "--name", "rw", "--ttl", "30s", "--", "sleep", "30"});
  ASSERT_NO_FATAL_FAILURE(wait_until_held("rw"));
  auto r = dblock({"exec", "--read", "--name", "rw", "--", "sh", "-c", "echo \"$DBLOCK_LOCK_MODE:$DBLOCK_FENCING_TOKEN\""});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("read:", 0), 0u) << r.out;
  auto w = dblock({"exec", "--write", "--name", "rw", "--", "echo", "never"});
  EXPECT_EQ(w.exit_code, 75) << w.err;
  EXPECT_EQ(w.out, "");
  EXPECT_NE(w.err.find("1 reader"), std::string::npos) << w.err;
  auto list = dblock({"locks", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  auto arr = nlohmann::json::parse(list.out);
  ASSERT_EQ(arr.size(), 1u) << list.out;
  EXPECT_EQ(arr[0]["mode"], "read");
  EXPECT_EQ(arr[0]["readers"], 1);
  auto text = dblock({"locks"});
  EXPECT_NE(text.out.find("read (1 reader)"), std::string::npos) << text.out;
  ::kill(holder.pid(), SIGTERM);
  (void)holder.wait();
  auto after = dblock({"exec", "--write", "--name", "rw", "--", "sh", "-c", "echo \"$DBLOCK_LOCK_MODE\""});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, "write\n");
}

// Semaphores through the command: the count comes from the holders when not given, no more
// than N permits are granted, a different N is exit 64 naming both, flags exclude each other.
TEST_F(ExecCli, PermitsAreCountedAndAMismatchedCountIsRefused) {
  auto holder = start({"exec", "--permits", "1", "--max-permits", "2", "--name", "sem", "--ttl", "30s", "--", "sleep", "30"});
  ASSERT_NO_FATAL_FAILURE(wait_until_held("sem"));
  auto one = dblock({"exec", "--permits", "1", "--name", "sem", "--", "sh", "-c", "echo \"$DBLOCK_LOCK_MODE\""});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, "permit\n");
  auto two = dblock({"exec", "--permits", "2", "--name", "sem", "--", "echo", "never"});
  EXPECT_EQ(two.exit_code, 75) << two.err;
  EXPECT_NE(two.err.find("1 of 2 permits"), std::string::npos) << two.err;
  auto bad = dblock({"exec", "--permits", "1", "--max-permits", "3", "--name", "sem", "--", "echo", "never"});
  EXPECT_EQ(bad.exit_code, 64) << bad.err;
  EXPECT_NE(bad.err.find("2 permits"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("not 3"), std::string::npos) << bad.err;
  auto both = dblock({"exec", "--read", "--permits", "1", "--name", "sem", "--", "true"});
  EXPECT_EQ(both.exit_code, 64) << both.err;
  auto list = dblock({"locks", "--json"});
  auto arr = nlohmann::json::parse(list.out);
  ASSERT_EQ(arr.size(), 1u) << list.out;
  EXPECT_EQ(arr[0]["mode"], "permit");
  EXPECT_EQ(arr[0]["permits"], 2);
  ::kill(holder.pid(), SIGTERM);
  (void)holder.wait();
  auto unknown = dblock({"exec", "--permits", "1", "--name", "sem", "--", "true"});
  EXPECT_EQ(unknown.exit_code, 64) << unknown.err;
  EXPECT_NE(unknown.err.find("--max-permits"), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace dblock::test
