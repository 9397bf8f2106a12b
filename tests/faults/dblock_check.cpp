// tests/faults/dblock_check.cpp — the checker as a command: reads a workload run's folder
// (history/*.jsonl, faults.jsonl, final.json, as written by `dblock_workload run`) and
// prints the totals and every violation found (checker.hpp).
//
//   dblock_check DIR [--json]          check one run
//   dblock_check --totals DIR...       add up the summary.json of several runs (scripts/soak)
//
// Exit status: 0 no violation, 1 violations found (or a run without a summary), 2
// unreadable input, 64 bad usage.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "faults/checker.hpp"

namespace {

using dblock::faults::json;

int totals(const std::vector<std::string>& dirs) {
  std::int64_t ops = 0, violations = 0, grants = 0, accepted = 0, rejected = 0, answered = 0, effects = 0, missing = 0;
  double seconds = 0;
  json faults = json::object();
  for (const auto& d : dirs) {
    const auto p = std::filesystem::path(d) / "summary.json";
    std::ifstream in(p);
    if (!in) {
      std::cout << d << ": no summary.json (the run did not finish)\n";
      ++missing;
      continue;
    }
    json s = json::parse(in);
    const std::int64_t v = s.value("violations", 0) + s.value("worker_unexpected_exits", 0);
    std::cout << s.value("database", std::string("?")) << ": " << s.value("operations", 0) << " operations in "
              << static_cast<std::int64_t>(s.value("elapsed_s", 0.0)) << " s, faults " << s["faults"].dump()
              << ", violations " << s.value("violations", 0) << ", unexpected worker exits "
              << s.value("worker_unexpected_exits", 0) << "\n";
    for (const auto& x : s.value("violation_details", json::array()))
      std::cout << "  " << x.value("kind", "") << ": " << x.value("detail", "") << "\n";
    ops += s.value("operations", 0);
    violations += v;
    grants += s.value("grants", 0);
    accepted += s.value("writes_accepted", 0);
    rejected += s.value("writes_rejected", 0);
    answered += s.value("keys_answered", 0);
    effects += s.value("side_effects", 0);
    seconds += s.value("elapsed_s", 0.0);
    for (auto& [k, n] : s["faults"].items()) faults[k] = faults.value(k, 0) + n.get<std::int64_t>();
  }
  std::int64_t nfaults = 0;
  for (auto& [k, n] : faults.items()) nfaults += n.get<std::int64_t>();
  std::cout << "total: " << ops << " operations (" << grants << " lock grants, " << accepted
            << " writes accepted, " << rejected << " refused, " << answered << " idempotency keys answered, "
            << effects << " side effects), " << nfaults << " faults injected " << faults.dump() << ", " << violations
            << " violations\n";
  return violations == 0 && missing == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--totals") {
    if (args.size() < 2) {
      std::cerr << "usage: dblock_check --totals DIR...\n";
      return 64;
    }
    try {
      return totals({args.begin() + 1, args.end()});
    } catch (const std::exception& e) {
      std::cerr << "dblock_check: " << e.what() << "\n";
      return 2;
    }
  }
  std::string dir;
  bool as_json = false;
  for (const auto& a : args) {
    if (a == "--json") as_json = true;
    else if (a == "-h" || a == "--help") {
      std::cout << "usage: dblock_check DIR [--json] | dblock_check --totals DIR...\n";
      return 0;
    } else if (dir.empty()) dir = a;
    else {
      std::cerr << "dblock_check: unexpected argument '" << a << "'\n";
      return 64;
    }
  }
  if (dir.empty() || !std::filesystem::is_directory(dir)) {
    std::cerr << "dblock_check: give the folder of a workload run (dblock_workload run --dir DIR)\n";
    return 64;
  }
  try {
    auto r = dblock::faults::check_run_dir(dir);
    if (as_json) std::cout << r.to_json().dump(2) << "\n";
    else std::cout << dblock::faults::format_report(r);
    return r.violation_total() == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "dblock_check: " << e.what() << "\n";
    return 2;
  }
}
