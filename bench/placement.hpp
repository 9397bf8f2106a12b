// bench/placement.hpp — where the single-connection benchmarks (bench/micro.cpp) run.
// On a VM a round trip's cost depends on whether the client and the server process that
// answers it share a CPU: a wake-up across CPUs costs an inter-processor interrupt, which a
// guest pays with an exit to the hypervisor. Left to the scheduler, each connection's
// server process settles on one CPU or the other, so two connections running the same
// `SELECT 1` differ by up to 2x (docs/performance.md, Method, "CPU placement"), and a dblock
// op and its twin, on different connections, differ by that lottery. So, for the micro
// part only, the bench process and the local servers are pinned, and restored afterwards:
//   split  the bench process on one CPU, the servers on another (the full size's default: like a client
//          and a database on separate hosts, every answer is a cross-CPU wake-up)
//   same   everything on one CPU (the cheapest round trip: overheads weigh most)
//   free   no pinning (the scheduler decides, as before round 6)
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "dblock/database.hpp"

namespace dblock_bench {

class raw_client;

enum class placement { split, same, free };

[[nodiscard]] placement parse_placement(const std::string& s);  // throws std::invalid_argument
[[nodiscard]] const char* to_string(placement p);

// The local server processes behind connection `c`, for pinning: PostgreSQL - the backends
// connected to c's database (the bench's own connections: a pin that outlives a killed
// bench ends with them); MariaDB - mysqld (from @@pid_file), all of its threads. Empty when
// they are not on this machine (checked by process name) or not found.
[[nodiscard]] std::vector<pid_t> server_processes(raw_client& c, dblock::dialect d);

struct cpu_pin_entry {
  pid_t pid;  // the process the thread belongs to
  pid_t tid;
  cpu_set_t before;  // its mask before the pin
};

// Pins while it lives (threads that exist when it is made); restores the threads it pinned
// when destroyed, or when SIGINT, SIGTERM or SIGHUP ends the bench meanwhile. Threads started
// while pinned keep the pin (the micro part starts none that outlive it). Pinning other
// users' processes needs root (CAP_SYS_NICE); where that, or a second CPU for `split`, is
// missing, nothing is pinned and description() says why.
class cpu_pin {
 public:
  cpu_pin(placement p, const std::vector<pid_t>& servers);
  cpu_pin(const cpu_pin&) = delete;
  cpu_pin& operator=(const cpu_pin&) = delete;
  ~cpu_pin();

  [[nodiscard]] const std::string& description() const noexcept { return desc_; }
  [[nodiscard]] bool pinned() const noexcept { return !saved_.empty(); }

 private:
  void pin_all(placement p, const std::vector<pid_t>& servers);
  void restore();

  std::vector<cpu_pin_entry> saved_;
  bool handlers_ = false;
  std::string desc_;
};

}  // namespace dblock_bench
