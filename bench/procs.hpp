// bench/procs.hpp — child processes of the benchmark (hot lock contenders, fleet
// processes): this binary started again with posix_spawn, the database URL in its
// environment (DBLOCK_BENCH_URL, never argv: it holds a password), a line protocol on its
// stdin and stdout, its stderr shared with ours. Implemented in bench/hot_lock.cpp.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "bench.hpp"

namespace dblock_bench {

struct child {
  pid_t pid = -1;
  FILE* in = nullptr;   // its stdin
  FILE* out = nullptr;  // its stdout
};

// Starts `dblock_bench <args...>` (args[0] is the subcommand) with DBLOCK_BENCH_URL=url.
[[nodiscard]] child spawn_child(const std::string& url, const std::vector<std::string>& args);

// One line of a child's output without its newline ("" at end of file).
[[nodiscard]] std::string read_line(FILE* f);

// Closes the pipes and waits for the child; true when it exited with status 0.
bool reap_child(child& c);

// In a child: says "ready", then waits for the parent's "go FROM_US END_US" and returns the
// measured window [from, end] (CLOCK_MONOTONIC, the same in every process).
[[nodiscard]] std::pair<bench_clock::time_point, bench_clock::time_point> ready_then_window();

// CLOCK_MONOTONIC microseconds (steady_clock), comparable across the processes.
[[nodiscard]] inline std::int64_t mono_us(bench_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace dblock_bench
