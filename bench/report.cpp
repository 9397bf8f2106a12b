// bench/report.cpp — statistics, the targets, and the metric lines
// (`metric=<name> backend=<combo> value=<number> unit=<unit> floor=<number> ratio=<number>`,
// stdout, one per result as it is measured).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <random>

#include "bench.hpp"

namespace dblock_bench {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Linear interpolation between closest ranks.
  const double pos = (p / 100.0) * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

stats summarize(std::vector<double> v) {
  stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = percentile(v, 50);
  s.p25 = percentile(v, 25);
  s.p75 = percentile(v, 75);
  return s;
}

double ratio_of(double value, double floor) {
  // A floor of 0 (no WAL, no flush) has no finite ratio: 1 + value keeps 1 = "same as the
  // floor" and stays a number on the metric line.
  if (floor == 0) return 1.0 + value;
  return value / floor;
}

result per_round_result(std::string metric, std::string backend, std::string unit, std::string floor_is,
                        const std::vector<double>& values, const std::vector<double>& floors) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < values.size() && i < floors.size(); ++i) ratios.push_back(ratio_of(values[i], floors[i]));
  result r;
  r.metric = std::move(metric);
  r.backend = std::move(backend);
  r.value_spread = summarize(values);
  r.floor_spread = summarize(floors);
  r.ratio_spread = summarize(ratios);
  r.value = r.value_spread->median;
  r.floor = r.floor_spread->median;
  r.ratio = ratio_of(r.value, r.floor);
  r.unit = std::move(unit);
  r.floor_is = std::move(floor_is);
  return r;
}

std::optional<bool> result::met() const {
  if (!goal) return std::nullopt;
  switch (goal->kind) {
    case target::on::ratio_max:
      return ratio <= goal->bound;
    case target::on::ratio_min:
      return ratio >= goal->bound;
    case target::on::value_max:
      return value <= goal->bound;
    case target::on::value_min:
      return value >= goal->bound;
  }
  return std::nullopt;
}

std::optional<target> target_for(const std::string& metric, dblock::dialect d) {
  using on = target::on;
  // Every target holds on every dialect.
  (void)d;
  if (metric == "acquire_release") return target{on::ratio_max, 1.10, "<= 1.10x the hand-written pair (every dialect)"};
  if (metric == "renew_1000_statements") return target{on::value_max, 1, "one statement per renewal period"};
  if (metric == "idem_replay_round_trips") return target{on::value_max, 1, "a replay in one round trip"};
  if (metric == "try_busy") return target{on::ratio_max, 1.5, "<= 1.5x SELECT 1 (SQLite: the raw primary-key read)"};
  if (metric == "idem_replay") return target{on::ratio_max, 1.2, "<= 1.2x a raw read"};
  if (metric == "hot_lock_vs_limit")
    return target{on::ratio_min, 0.9, ">= 0.9x the physical limit 1 / (hold + commit + round trip)"};
  // hot_lock_ceiling_vs_limit (1 / the holder's own hold and release, against the same limit) and
  // hot_lock_hold_release have none on purpose: they say how far any hand-off design could get.
  if (metric == "hot_lock_p99_wait") return target{on::value_max, 20, "p99 wait <= 20 ms"};
  if (metric == "hot_lock_fairness") return target{on::value_max, 1.5, "most / least successful <= 1.5"};
  if (metric == "idem_new") return target{on::ratio_max, 1.10, "<= 1.10x a raw insert"};
  if (metric == "acquire_100k") return target{on::ratio_max, 1.2, "<= 1.2x the cost on an empty table"};
  if (metric == "reap_rows_per_s") return target{on::value_min, 50'000, ">= 50,000 rows/s"};
  if (metric == "reap_live_p99") return target{on::ratio_max, 1.5, "live acquires' p99 within 1.5x"};
  if (metric == "unlogged_pair_vs_redis_volatile")
    return target{on::ratio_max, 2.0, "<= 2x Redis without persistence (PostgreSQL, unlogged lock tables)"};
  return std::nullopt;
}

namespace {
std::mutex io_mu;

std::string number(double v) {
  if (std::isinf(v)) return "inf";
  char buf[64];
  if (v != 0 && std::fabs(v) < 0.01)
    std::snprintf(buf, sizeof buf, "%.6f", v);
  else if (std::fabs(v) < 100)
    std::snprintf(buf, sizeof buf, "%.3f", v);
  else
    std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}
}  // namespace

std::string metric_line(const result& r) {
  return "metric=" + r.metric + " backend=" + r.backend + " value=" + number(r.value) + " unit=" + r.unit +
         " floor=" + number(r.floor) + " ratio=" + number(r.ratio);
}

void report::add(result r) {
  if (!r.goal) {
    // Caller did not set one: look it up from the metric and the combination's dialect.
    dblock::dialect d = r.backend.find("postgresql") != std::string::npos ? dblock::dialect::postgresql
                        : r.backend.find("mariadb") != std::string::npos  ? dblock::dialect::mysql
                                                                          : dblock::dialect::sqlite;
    r.goal = target_for(r.metric, d);
  }
  {
    std::lock_guard l(io_mu);
    std::cout << metric_line(r) << std::endl;
  }
  results_.push_back(std::move(r));
}

void note(const std::string& line) {
  std::lock_guard l(io_mu);
  std::cerr << "bench: " << line << std::endl;
}

std::string random_hex(std::size_t n) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    auto b = static_cast<unsigned>(rng() & 0xff);
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

}  // namespace dblock_bench
