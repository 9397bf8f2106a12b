// bench/bench.hpp — shared pieces of dblock's benchmark harness (bench/, issue 7):
// run options, the backend combinations under test, result records with their spread,
// the targets, and small statistics helpers. Every figure the harness reports is a
// ratio against a "floor" measured in the same run: the hand-written raw-SQL twin of
// the operation on the same client library, or the SELECT 1 round trip.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dblock/url.hpp"

namespace dblock_bench {

enum class size_kind { tiny, full };

// The glibc heap trim threshold every bench process runs with (main.cpp says why).
inline constexpr int malloc_trim_threshold = 64 << 20;

struct options {
  size_kind size = size_kind::full;
  std::filesystem::path out_dir;
  std::vector<std::string> only;  // combination names to run (empty = all available)
  int reps = 15;                  // Google Benchmark repetitions per micro benchmark
  double min_time = 0.15;         // seconds per repetition
  int contenders = 8;             // hot lock processes
  int hot_rounds = 3;             // hot lock: rounds of (naive, dblock, floor) per backend
  double hot_seconds = 4;         // hot lock: length of one round's measured window
  double hot_warmup = 1;          // hot lock: seconds run before that window (first connections)
  std::filesystem::path hot_trace;  // hot lock: write every measured grant here (empty = no)
  int hold_ms = 1;                // hot lock: time the lock is held per acquisition
  int think_ms = 5;               // hot lock: time between a release and the next acquire
  int max_backoff_ms = 0;         // hot lock: session_options::max_backoff (0 = dblock's default)
  int live_rows = 100'000;        // live rows in the "big" lock table
  int expired_rows = 200'000;     // expired rows the reaper removes per round
  int reap_rounds = 3;  // odd: the median over rounds is a round, not the mean of two
  int reap_batch = 1000;             // reaper_options::batch_size (and the twin's LIMIT)
  int expired_rows_sqlite = 20'000;  // SQLite deletes far slower under a live writer
  double reap_duty = -1;             // reaper_options::duty_cycle (< 0: the library default)
  int reap_async = -1;               // reaper_options::async_commit (0/1; < 0: the library default)
  int renew_locks = 1000;
  // micro: where the bench process and the local servers run (bench/placement.hpp). `run`
  // sets split for the full size and free for the tiny CI size (CI's servers are shared
  // with tests running in parallel) unless --placement says otherwise.
  std::string micro_placement = "free";
  // fleet (bench/fleet.cpp): many processes of many sessions on a few hot names.
  int fleet_procs_pg = 50;      // processes through PgBouncer (?pooler=transaction)
  int fleet_procs_mysql = 150;  // processes on MariaDB, one connection each
  int fleet_sessions = 20;      // sessions per process (one thread each)
  int fleet_names = 10;         // hot names
  int fleet_hold_ms = 2;        // time a grant is held
  double fleet_seconds = 20;    // measured window
  double fleet_warmup = 5;      // seconds run before it
  bool require_all = false;  // DBLOCK_TEST_REQUIRE_ALL=1: a missing server URL fails
};

// One backend x database combination (same names as the conformance suite).
struct combo {
  std::string name;  // pqxx_postgresql, mysql_mariadb, soci_sqlite
  dblock::dialect kind = dblock::dialect::sqlite;
  std::string server_url;  // the server's URL as given (creating databases); empty for SQLite
  std::string url;         // the benchmark database (throwaway)
  std::string big_url;     // a second one holding `live_rows` live locks
};

struct stats {
  double median = 0, p25 = 0, p75 = 0, min = 0, max = 0;
  std::size_t n = 0;
};
[[nodiscard]] stats summarize(std::vector<double> v);
[[nodiscard]] double percentile(std::vector<double> v, double p);  // p in [0, 100]

// How a result is judged against the targets.
struct target {
  enum class on { ratio_max, ratio_min, value_max, value_min } kind = on::ratio_max;
  double bound = 0;
  std::string text;  // e.g. "<= 1.10x hand-written"
};

struct result {
  std::string metric;
  std::string backend;
  double value = 0;
  std::string unit;
  double floor = 0;
  double ratio = 0;
  std::string floor_is;               // what the floor measures, for the JSON and the docs
  std::optional<stats> value_spread;  // over repetitions / rounds
  std::optional<stats> floor_spread;
  std::optional<stats> ratio_spread;  // ratios of matched repetitions / rounds
  std::optional<target> goal;
  std::string note;
  std::vector<std::pair<std::string, double>> extra;  // more numbers for the JSON
  [[nodiscard]] std::optional<bool> met() const;
};

// Every result of the run, in order; printed as metric lines and written to JSON.
class report {
 public:
  void add(result r);
  [[nodiscard]] const std::vector<result>& all() const { return results_; }
  void fail(const std::string& what) { failures_.push_back(what); }
  [[nodiscard]] const std::vector<std::string>& failures() const { return failures_; }
  // How the run was set up, for the JSON's "meta" (e.g. micro_placement).
  void set_meta(const std::string& key, const std::string& value) { meta_.emplace_back(key, value); }
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& meta() const { return meta_; }

 private:
  std::vector<result> results_;
  std::vector<std::string> failures_;
  std::vector<std::pair<std::string, std::string>> meta_;
};

// The metric line of a result (what stdout and bench.txt carry).
[[nodiscard]] std::string metric_line(const result& r);

// ratio = value / floor; 1 + value when the floor is 0.
[[nodiscard]] double ratio_of(double value, double floor);

// A result from per-round pairs (the hot lock's and the reaper's rounds): value and floor are
// the medians of `values` and `floors`, ratio their ratio, the spreads over the rounds.
[[nodiscard]] result per_round_result(std::string metric, std::string backend, std::string unit,
                                      std::string floor_is, const std::vector<double>& values,
                                      const std::vector<double>& floors);

// Targets per metric (on PostgreSQL unless the issue names every dialect).
[[nodiscard]] std::optional<target> target_for(const std::string& metric, dblock::dialect d);

// Progress and diagnostics go to stderr; stdout carries only the metric lines.
void note(const std::string& line);

// A unique, random lower-case hex string of 2*n characters.
[[nodiscard]] std::string random_hex(std::size_t n);

using bench_clock = std::chrono::steady_clock;
[[nodiscard]] inline double ms_since(bench_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(bench_clock::now() - t0).count();
}

// The parts of the run (each in its own .cpp).
struct context;  // per-combination state, bench/micro.cpp
void run_micro(const options& o, const std::vector<combo>& combos, report& rep);
void run_diagnostics(const options& o, const std::vector<combo>& combos, report& rep);
void run_hot_lock(const options& o, const std::vector<combo>& combos, report& rep);
void run_renewal(const options& o, const std::vector<combo>& combos, report& rep);
void run_reaper(const options& o, const std::vector<combo>& combos, report& rep);
void run_fleet(const options& o, const std::vector<combo>& combos, report& rep);
// PostgreSQL's lease pair beside an advisory-lock pair and two Redis servers (bench/peers.cpp).
void run_peers(const options& o, const std::vector<combo>& combos, report& rep);
void run_crash(const options& o, const std::vector<combo>& combos, report& rep);
// `dblock_bench fleet-proc ...`: one fleet process (bench/fleet.cpp).
int fleet_main(int argc, char** argv);
// `dblock_bench contend ...`: one hot-lock contender process (bench/hot_lock.cpp).
int contender_main(int argc, char** argv);
int table_main(int argc, char** argv);  // bench/table.cpp: `dblock_bench table`

}  // namespace dblock_bench
