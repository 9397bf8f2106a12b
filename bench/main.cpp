// bench/main.cpp — `dblock_bench run`: the whole benchmark in one run, for PostgreSQL
// (DBLOCK_TEST_PG_URL), MariaDB (DBLOCK_TEST_MYSQL_URL) and SQLite (a temp file): makes
// throwaway databases, migrates them, runs the parts (micro, diag, renew, hot, reaper, peers, crash),
// prints one metric line per result on stdout, writes <out>/bench.json and the chart
// <out>/bench.png (gnuplot, bench/chart.gp), and drops the databases. Progress goes to
// stderr. Exit status: 0 when every benchmark ran (targets missed do not fail it: they are
// results), 1 when something broke, 64 on bad usage.
//   dblock_bench run [--size full|tiny] [--out DIR] [--only COMBO,...] [--parts PART,...]
//   dblock_bench contend ...   (internal: one hot-lock contender process)
//   dblock_bench fleet-proc ...   (internal: one process of the fleet part)
#include <malloc.h>
#include <sqlite3.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <set>
#include <sstream>
#include <thread>

#include "bench.hpp"
#include "dblock/dblock.hpp"
#include "twins.hpp"

namespace dblock_bench {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

// The same server URL with another database name (scheme://auth@host:port/DB?options).
std::string with_database(const std::string& url, const std::string& db) {
  auto sep = url.find("://");
  auto slash = url.find('/', sep + 3);
  auto q = url.find('?', sep + 3);
  std::string out = url.substr(0, std::min(slash, q)) + "/" + db;
  if (q != std::string::npos) out += url.substr(q);
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string command_output(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  return trim(out);
}

// Throwaway databases on the servers, dropped at exit; SQLite files in a temp folder.
class databases {
 public:
  ~databases() { drop(); }
  combo make(const std::string& name, dblock::dialect kind, const std::string& server_url) {
    combo c;
    c.name = name;
    c.kind = kind;
    c.server_url = server_url;
    const std::string base = "dblock_bench_" + random_hex(6);
    if (kind == dblock::dialect::sqlite) {
      if (tmp_.empty()) {
        char t[] = "/tmp/dblock-bench.XXXXXX";
        if (!mkdtemp(t)) throw std::runtime_error("mkdtemp failed");
        tmp_ = t;
      }
      c.url = "sqlite://" + tmp_ + "/bench.db";
      c.big_url = "sqlite://" + tmp_ + "/big.db";
      return c;
    }
    for (const auto& db : {base, base + "_big"}) {
      if (kind == dblock::dialect::postgresql) {
        pqxx::connection conn(server_url);
        pqxx::nontransaction(conn).exec("CREATE DATABASE " + db);
      } else {
        connect_raw(server_url)->exec("CREATE DATABASE `" + db + "` CHARACTER SET utf8mb4");
      }
      made_.emplace_back(kind, server_url, db);
    }
    c.url = with_database(server_url, base);
    c.big_url = with_database(server_url, base + "_big");
    if (kind == dblock::dialect::mysql8) {  // MySQL 8.0's dialect forced on the server
      c.url += "?dialect=mysql8";
      c.big_url += "?dialect=mysql8";
    }
    return c;
  }
  void drop() noexcept {
    for (auto& [kind, url, db] : made_) {
      try {
        if (kind == dblock::dialect::postgresql) {
          pqxx::connection conn(url);
          pqxx::nontransaction(conn).exec("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
        } else {
          connect_raw(url)->exec("DROP DATABASE IF EXISTS `" + db + "`");
        }
      } catch (const std::exception& e) {
        note("could not drop database " + db + ": " + e.what());
      }
    }
    made_.clear();
    if (!tmp_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(tmp_, ec);
      tmp_.clear();
    }
  }

 private:
  std::vector<std::tuple<dblock::dialect, std::string, std::string>> made_;
  std::string tmp_;
};

std::string server_version(const combo& c) {
  try {
    auto raw = connect_raw(c.url);
    switch (c.kind) {
      case dblock::dialect::postgresql:
        return "PostgreSQL " + trim(raw->query_text("SHOW server_version"));
      case dblock::dialect::mysql:
        return trim(raw->query_text("SELECT VERSION()"));
      case dblock::dialect::mysql8:
        return trim(raw->query_text("SELECT VERSION()")) + " (dialect mysql8)";
      case dblock::dialect::sqlite:
        return std::string("SQLite ") + sqlite3_libversion();
    }
  } catch (const std::exception&) {
  }
  return "?";
}

nlohmann::json to_json(const stats& s) {
  return {{"median", s.median}, {"p25", s.p25}, {"p75", s.p75}, {"min", s.min}, {"max", s.max}, {"n", s.n}};
}

nlohmann::json to_json(const result& r) {
  nlohmann::json j{{"metric", r.metric}, {"backend", r.backend}, {"value", r.value},      {"unit", r.unit},
                   {"floor", r.floor},   {"ratio", r.ratio},     {"floor_is", r.floor_is}};
  if (std::isinf(r.ratio)) j["ratio"] = nullptr;
  if (r.value_spread) j["value_spread"] = to_json(*r.value_spread);
  if (r.floor_spread) j["floor_spread"] = to_json(*r.floor_spread);
  if (r.ratio_spread) j["ratio_spread"] = to_json(*r.ratio_spread);
  if (r.goal) {
    j["target"] = r.goal->text;
    j["met"] = *r.met();
  }
  if (!r.note.empty()) j["note"] = r.note;
  for (const auto& [k, v] : r.extra) j[k] = v;
  return j;
}

// How far a result is from its target, normalized so that <= 1 means met.
double target_score(const result& r) {
  const auto& g = *r.goal;
  switch (g.kind) {
    case target::on::ratio_max:
      return r.ratio / g.bound;
    case target::on::ratio_min:
      return g.bound / r.ratio;
    case target::on::value_max:
      return r.value / g.bound;
    case target::on::value_min:
      return g.bound / r.value;
  }
  return 0;
}

// Data files for bench/chart.gp (in a temp folder), then gnuplot writes <out>/bench.png.
// Returns false when the chart was not made.
bool write_chart(const report& rep, const std::filesystem::path& out, const std::string& title) {
  const std::vector<std::string> backends{"pqxx_postgresql", "mysql_mariadb", "soci_sqlite"};
  const std::vector<std::string> ratio_metrics{"acquire_release", "acquire_empty", "try_busy", "acquire_100k",
                                               "idem_new",        "idem_replay",   "ping",     "hot_lock_throughput",
                                               "reap_rows_per_s", "reap_live_p99"};
  auto find = [&](const std::string& m, const std::string& b) -> const result* {
    for (const auto& r : rep.all())
      if (r.metric == m && r.backend == b) return &r;
    return nullptr;
  };
  auto cell = [](std::ostream& o, double v) {
    if (std::isfinite(v))
      o << ' ' << v;
    else
      o << " NaN";
  };
  const auto dir = std::filesystem::temp_directory_path() / ("dblock-bench-chart-" + random_hex(4));
  std::filesystem::create_directories(dir);
  struct cleanup {
    std::filesystem::path p;
    ~cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
    }
  } remove_dir{dir};
  {
    std::ofstream f(dir / "bench_ratios.dat");
    f << "# metric pqxx_postgresql mysql_mariadb soci_sqlite (ratio to the floor)\n";
    for (const auto& m : ratio_metrics) {
      bool any = false;
      for (const auto& b : backends) any = any || find(m, b);
      if (!any) continue;
      f << m;
      for (const auto& b : backends) cell(f, find(m, b) ? find(m, b)->ratio : NAN);
      f << '\n';
    }
  }
  {
    std::ofstream f(dir / "bench_targets.dat");
    f << "# target pqxx_postgresql mysql_mariadb soci_sqlite (measured / allowed, <= 1 = met)\n";
    std::vector<std::string> seen;
    for (const auto& r : rep.all()) {
      if (!r.goal || std::find(seen.begin(), seen.end(), r.metric) != seen.end()) continue;
      seen.push_back(r.metric);
      f << r.metric;
      for (const auto& b : backends) {
        const result* x = find(r.metric, b);
        cell(f, x && x->goal ? target_score(*x) : NAN);
      }
      f << '\n';
    }
  }
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    note("gnuplot not found: no chart (install gnuplot-nox)");
    return false;
  }
  std::string cmd = "gnuplot -e \"ratios='" + (dir / "bench_ratios.dat").string() + "'; targets='" +
                    (dir / "bench_targets.dat").string() + "'; out='" + (out / "bench.png").string() +
                    "'; title_text='" + title + "'\" '" + std::string(DBLOCK_BENCH_SOURCE_DIR) + "/chart.gp'";
  if (std::system(cmd.c_str()) != 0) {
    note("gnuplot failed: no chart");
    return false;
  }
  return true;
}

int run(int argc, char** argv) {
  options o;
  std::string size = "full", only, parts = "micro,diag,renew,hot,reaper,peers,crash", out;
  CLI::App app{"dblock_bench run — dblock against hand-written raw SQL, in one run (docs/performance.md)"};
  app.add_option("--size", size, "full (a few minutes) or tiny (CI smoke test, seconds)")
      ->check(CLI::IsMember({"full", "tiny"}));
  app.add_option("--out", out, "folder for bench.json, bench.png and the chart data (default bench/results)");
  app.add_option("--only", only, "combinations to run: pqxx_postgresql,mysql_mariadb,soci_sqlite");
  app.add_option("--parts", parts, "parts to run: micro,diag,renew,hot,reaper,peers,crash,fleet (fleet is not in the default)");
  app.add_option("--reps", o.reps, "micro: repetitions per benchmark");
  app.add_option("--min-time", o.min_time, "micro: seconds per repetition");
  app.add_option("--contenders", o.contenders, "hot lock: contender processes");
  app.add_option("--hot-seconds", o.hot_seconds, "hot lock: measured seconds per round and mode");
  app.add_option("--hot-warmup", o.hot_warmup, "hot lock: seconds each round runs before it measures");
  app.add_option("--hot-trace", o.hot_trace, "hot lock: write every measured grant to DIR/<combo>-<mode>-<round>.csv");
  app.add_option("--hot-rounds", o.hot_rounds, "hot lock: rounds (each runs the three modes)");
  app.add_option("--hold-ms", o.hold_ms, "hot lock: ms the lock is held per acquisition");
  app.add_option("--think-ms", o.think_ms, "hot lock: ms between a release and the next acquire");
  app.add_option("--max-backoff-ms", o.max_backoff_ms,
                 "hot lock: dblock waiters' session_options::max_backoff (0 = the library default)");
  app.add_option("--live-rows", o.live_rows, "live rows in the big lock table");
  app.add_option("--expired-rows", o.expired_rows, "reaper: expired rows per round");
  app.add_option("--reap-rounds", o.reap_rounds, "reaper: rounds per reaper");
  app.add_option("--reap-batch", o.reap_batch, "reaper: rows per DELETE (dblock's batch_size, the twin's LIMIT)");
  app.add_option("--expired-rows-sqlite", o.expired_rows_sqlite, "reaper: expired rows per round on SQLite");
  app.add_option("--reap-async-commit", o.reap_async,
                 "reaper: dblock's reaper_options::async_commit, 0 or 1 (default: the library's default)");
  app.add_option("--fleet-procs-pg", o.fleet_procs_pg, "fleet: processes through PgBouncer");
  app.add_option("--fleet-procs-mysql", o.fleet_procs_mysql, "fleet: processes on MariaDB");
  app.add_option("--fleet-sessions", o.fleet_sessions, "fleet: sessions (threads) per process");
  app.add_option("--fleet-names", o.fleet_names, "fleet: hot names");
  app.add_option("--fleet-hold-ms", o.fleet_hold_ms, "fleet: ms a grant is held");
  app.add_option("--fleet-seconds", o.fleet_seconds, "fleet: measured seconds");
  app.add_option("--fleet-warmup", o.fleet_warmup, "fleet: seconds run before the measured window");
  std::string placement_arg;
  app.add_option("--placement", placement_arg,
                 "micro: split (bench and servers on two CPUs; the full size's default), same (one CPU) or "
                 "free (unpinned; the tiny size's default)")
      ->check(CLI::IsMember({"split", "same", "free"}));
  app.add_option("--reap-duty", o.reap_duty,
                 "reaper: dblock's reaper_options::duty_cycle, (0, 1] (default: the library's default)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 64;
  }
  o.size = size == "tiny" ? size_kind::tiny : size_kind::full;
  if (o.size == size_kind::tiny) o.reps = 2;
  o.micro_placement = !placement_arg.empty() ? placement_arg : o.size == size_kind::tiny ? "free" : "split";
  o.require_all = env("DBLOCK_TEST_REQUIRE_ALL") == std::optional<std::string>("1");
  o.out_dir = out.empty() ? std::filesystem::path(DBLOCK_BENCH_SOURCE_DIR) / "results" : std::filesystem::path(out);
  std::filesystem::create_directories(o.out_dir);
  auto wanted = [&](const std::string& list, const std::string& item) {
    return list.empty() || ("," + list + ",").find("," + item + ",") != std::string::npos;
  };

  report rep;
  databases dbs;
  std::vector<combo> combos;
  const auto started = bench_clock::now();
  const std::string load_start = trim(read_file("/proc/loadavg"));
  const std::string started_utc = [] {
    char buf[64];
    std::time_t t = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return std::string(buf);
  }();
  try {
    struct want {
      const char* name;
      dblock::dialect kind;
      const char* env_var;
    };
    for (const want& w : {want{"pqxx_postgresql", dblock::dialect::postgresql, "DBLOCK_TEST_PG_URL"},
                          want{"mysql_mariadb", dblock::dialect::mysql, "DBLOCK_TEST_MYSQL_URL"},
                          want{"mysql_mysql8", dblock::dialect::mysql8, "DBLOCK_TEST_MYSQL_URL"},
                          want{"soci_sqlite", dblock::dialect::sqlite, nullptr}}) {
      if (!wanted(only, w.name)) continue;
      std::string server;
      if (w.env_var) {
        auto u = env(w.env_var);
        if (!u) {
          if (o.require_all)
            throw std::runtime_error(std::string(w.env_var) + " is not set (DBLOCK_TEST_REQUIRE_ALL=1)");
          note(std::string("skipping ") + w.name + ": " + w.env_var + " is not set");
          continue;
        }
        server = *u;
      }
      combos.push_back(dbs.make(w.name, w.kind, server));
    }
    const int live = o.size == size_kind::tiny ? 1000 : o.live_rows;
    for (const auto& c : combos) {
      dblock::open(c.url).migrate();
      dblock::open(c.big_url).migrate();
      auto raw = connect_raw(c.big_url);
      const auto t0 = bench_clock::now();
      insert_lock_rows(*raw, c.kind, "bench:live:", live, 86'400);
      note(c.name + ": " + std::to_string(live) + " live lock rows in the big database (" +
           std::to_string(static_cast<int>(ms_since(t0))) + " ms)");
    }
    if (wanted(parts, "micro")) run_micro(o, combos, rep);
    if (wanted(parts, "diag")) run_diagnostics(o, combos, rep);
    if (wanted(parts, "renew")) run_renewal(o, combos, rep);
    if (wanted(parts, "hot")) run_hot_lock(o, combos, rep);
    if (wanted(parts, "reaper")) run_reaper(o, combos, rep);
    if (wanted(parts, "peers")) run_peers(o, combos, rep);
    if (wanted(parts, "crash")) run_crash(o, combos, rep);
    if (!parts.empty() && wanted(parts, "fleet")) run_fleet(o, combos, rep);
  } catch (const std::exception& e) {
    rep.fail(std::string("aborted: ") + e.what());
  }

  // The JSON, the chart, the summary.
  nlohmann::json meta{{"size", size},
                      {"started_utc", started_utc},
                      {"seconds", ms_since(started) / 1000.0},
                      {"cpus", std::thread::hardware_concurrency()},
                      {"loadavg_start", load_start},
                      {"loadavg_end", trim(read_file("/proc/loadavg"))},
                      {"dblock", DBLOCK_VERSION},
                      {"malloc_trim_threshold", malloc_trim_threshold},
                      {"git", command_output("git -C '" + std::string(DBLOCK_BENCH_SOURCE_DIR) +
                                             "' rev-parse --short HEAD 2>/dev/null")},
                      {"options",
                       {{"reps", o.reps},
                        {"min_time_s", o.min_time},
                        {"contenders", o.contenders},
                        {"hot_seconds", o.hot_seconds},
                        {"hot_warmup", o.hot_warmup},
                        {"hot_rounds", o.hot_rounds},
                        {"hold_ms", o.hold_ms},
                        {"think_ms", o.think_ms},
                        {"max_backoff_ms", o.max_backoff_ms},
                        {"live_rows", o.live_rows},
                        {"expired_rows", o.expired_rows},
                        {"expired_rows_sqlite", o.expired_rows_sqlite},
                        {"reap_rounds", o.reap_rounds},
                        {"reap_batch", o.reap_batch},
                        {"reap_duty", o.reap_duty},
                        {"reap_async_commit", o.reap_async},
                        {"renew_locks", o.renew_locks},
                        {"placement", o.micro_placement},
                        {"fleet_procs_pg", o.fleet_procs_pg},
                        {"fleet_procs_mysql", o.fleet_procs_mysql},
                        {"fleet_sessions", o.fleet_sessions},
                        {"fleet_names", o.fleet_names},
                        {"fleet_hold_ms", o.fleet_hold_ms},
                        {"fleet_seconds", o.fleet_seconds},
                        {"fleet_warmup", o.fleet_warmup}}}};
  for (const auto& [key, value] : rep.meta()) meta[key] = value;
  nlohmann::json servers = nlohmann::json::object();
  for (const auto& c : combos) servers[c.name] = server_version(c);
  meta["servers"] = servers;
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : rep.all()) results.push_back(to_json(r));
  nlohmann::json doc{{"meta", meta}, {"results", results}, {"failures", rep.failures()}};
  {
    std::ofstream f(o.out_dir / "bench.json");
    f << doc.dump(2) << '\n';
  }
  {
    std::ofstream f(o.out_dir / "bench.txt");
    for (const auto& r : rep.all()) f << metric_line(r) << '\n';
  }
  dbs.drop();
  const bool chart = write_chart(rep, o.out_dir,
                                 "dblock vs hand-written SQL, " + meta["started_utc"].get<std::string>() + ", " +
                                     std::to_string(std::thread::hardware_concurrency()) + " CPUs");
  note("wrote " + (o.out_dir / "bench.json").string() + (chart ? " and " + (o.out_dir / "bench.png").string() : ""));
  for (const auto& r : rep.all()) {
    if (!r.goal) continue;
    note(std::string(*r.met() ? "target met:    " : "target MISSED: ") + r.metric + " on " + r.backend + " (" +
         r.goal->text + ")");
  }
  for (const auto& f : rep.failures()) note("FAILED: " + f);
  return rep.failures().empty() ? 0 : 1;
}

}  // namespace
}  // namespace dblock_bench

int main(int argc, char** argv) {
  // glibc hands free memory at the top of the heap back to the kernel once more than
  // M_TRIM_THRESHOLD is free there (128 KiB, until the process first frees a block above the
  // mmap threshold, which raises it). SQLite empties a connection's page cache whenever another
  // connection wrote, and refills it at the next transaction: with the default threshold, the
  // connection whose freed cache lands at the heap's top (which one depends on the heap's
  // layout, not on the SQL) re-faults its pages on every transaction, 170-200 us of CPU per
  // pair on the reference machine. A fixed threshold makes the figures measure SQL and I/O on
  // both sides of a comparison (docs/performance.md, "Method").
  mallopt(M_TRIM_THRESHOLD, dblock_bench::malloc_trim_threshold);
  if (argc >= 2 && std::string(argv[1]) == "contend") return dblock_bench::contender_main(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "fleet-proc") return dblock_bench::fleet_main(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "run") return dblock_bench::run(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "table") return dblock_bench::table_main(argc - 1, argv + 1);
  std::cerr << "usage: dblock_bench run [--size full|tiny] [--out DIR] [options]   (dblock_bench run --help)\n"
               "       dblock_bench table PUBLISHED.json [OTHER.json ...]        (Markdown results table)\n";
  return 64;
}
