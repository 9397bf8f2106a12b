// bench/placement.cpp — pinning the bench process and the local database servers to CPUs
// for the micro part (see placement.hpp for why). Linux only: /proc and sched_setaffinity.
#include "placement.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "bench.hpp"
#include "twins.hpp"

namespace dblock_bench {
namespace {

std::string read_first_line(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::string line;
  std::getline(f, line);
  return line;
}

std::string comm_of(pid_t pid) { return read_first_line("/proc/" + std::to_string(pid) + "/comm"); }

std::vector<pid_t> numeric_entries(const std::filesystem::path& dir) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const auto name = e.path().filename().string();
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos)
      out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

std::vector<pid_t> threads_of(pid_t pid) { return numeric_entries("/proc/" + std::to_string(pid) + "/task"); }

std::string trimmed(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

placement parse_placement(const std::string& s) {
  if (s == "split") return placement::split;
  if (s == "same") return placement::same;
  if (s == "free") return placement::free;
  throw std::invalid_argument("--placement: expected split, same or free, got '" + s + "'");
}

const char* to_string(placement p) {
  switch (p) {
    case placement::split:
      return "split";
    case placement::same:
      return "same";
    case placement::free:
      break;
  }
  return "free";
}

std::vector<pid_t> server_processes(raw_client& c, dblock::dialect d) {
  std::vector<pid_t> out;
  try {
    if (d == dblock::dialect::postgresql) {
      // The backends of this database's connections (the bench's own: it made the database),
      // not the postmaster: a pin that outlives a killed bench then dies with them.
      std::istringstream pids(c.query_text("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"));
      for (std::string line; std::getline(pids, line);) {
        line = trimmed(line);
        if (line.empty() || line.find_first_not_of("0123456789") != std::string::npos) continue;
        const auto pid = static_cast<pid_t>(std::stol(line));
        // A remote server's pids mean nothing here: the process must be PostgreSQL's.
        if (comm_of(pid) == "postgres") out.push_back(pid);
      }
    } else if (d == dblock::dialect::mysql) {
      const std::string pid_file = trimmed(c.query_text("SELECT @@pid_file"));
      if (pid_file.empty()) return {};
      const std::string pid_text = trimmed(read_first_line(pid_file));
      if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) return {};
      const auto pid = static_cast<pid_t>(std::stol(pid_text));
      const std::string comm = comm_of(pid);
      if (comm != "mysqld" && comm != "mariadbd") return {};
      out.push_back(pid);  // all its threads: its connections' threads are not told apart
    }
  } catch (const std::exception& e) {
    note(std::string("placement: server processes not found: ") + e.what());
    return {};
  }
  return out;
}

namespace {

// The pin a signal must undo (SIGINT, SIGTERM, SIGHUP while pinned): a killed bench must not
// leave mysqld on one CPU. The handler uses only async-signal-safe calls.
const std::vector<cpu_pin_entry>* active_pins = nullptr;
struct sigaction old_actions[3];
constexpr int pin_signals[3] = {SIGINT, SIGTERM, SIGHUP};

// Threads a server started while pinned (MariaDB's connection threads) inherited the pin and
// are in no list: every thread of the server gets the server's own mask back. open,
// getdents64 and sched_setaffinity are system calls, safe in a signal handler.
struct server_mask {
  char task_dir[48];  // /proc/<pid>/task
  cpu_set_t before;   // the server's main thread's mask before the pin
};
server_mask server_masks[16];
std::size_t server_mask_count = 0;

void reset_server_threads() {
  for (std::size_t i = 0; i < server_mask_count; ++i) {
    const int fd = ::open(server_masks[i].task_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;
    alignas(8) char buf[4096];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
        pid_t tid = 0;
        bool numeric = d->d_name[0] != '\0';
        for (const char* c = d->d_name; *c; ++c) {
          if (*c < '0' || *c > '9') {
            numeric = false;
            break;
          }
          tid = tid * 10 + (*c - '0');
        }
        if (numeric) sched_setaffinity(tid, sizeof server_masks[i].before, &server_masks[i].before);
        off += d->d_reclen;
      }
    }
    ::close(fd);
  }
}

void undo_pins_and_reraise(int sig) {
  if (active_pins)
    for (const auto& e : *active_pins) sched_setaffinity(e.tid, sizeof e.before, &e.before);
  reset_server_threads();
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

cpu_pin::cpu_pin(placement p, const std::vector<pid_t>& servers) {
  if (p == placement::free) {
    desc_ = "free: not pinned";
    return;
  }
  try {
    pin_all(p, servers);
  } catch (const std::exception& e) {
    restore();
    desc_ = std::string("free: pinning failed (") + e.what() + ")";
  }
}

void cpu_pin::pin_all(placement p, const std::vector<pid_t>& servers) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int i = 0; i < CPU_SETSIZE; ++i)
      if (CPU_ISSET(i, &allowed)) cpus.push_back(i);
  if (cpus.empty() || (p == placement::split && cpus.size() < 2)) {
    desc_ = std::string("free: ") + to_string(p) + " needs " + (p == placement::split ? "two CPUs" : "a CPU") +
            ", this process may use " + std::to_string(cpus.size());
    return;
  }
  const int client_cpu = cpus[0];
  const int server_cpu = p == placement::split ? cpus[1] : cpus[0];
  // 0 when pinned (or the thread is gone), else the errno.
  auto pin = [&](pid_t pid, pid_t tid, int cpu) -> int {
    for (const auto& e : saved_)
      if (e.tid == tid) return 0;  // already pinned (a server given twice)
    cpu_pin_entry e{pid, tid, {}};
    cpu_set_t want;
    CPU_ZERO(&want);
    CPU_SET(cpu, &want);
    if (sched_getaffinity(tid, sizeof e.before, &e.before) != 0) return errno == ESRCH ? 0 : errno;
    if (sched_setaffinity(tid, sizeof want, &want) != 0) return errno == ESRCH ? 0 : errno;
    saved_.push_back(e);
    return 0;
  };
  saved_.reserve(256);
  active_pins = &saved_;  // from the first pin on, a signal undoes them
  for (std::size_t i = 0; i < 3; ++i) {
    struct sigaction sa {};
    sa.sa_handler = undo_pins_and_reraise;
    sigemptyset(&sa.sa_mask);
    sigaction(pin_signals[i], &sa, &old_actions[i]);
  }
  handlers_ = true;
  std::string failure;
  std::size_t server_threads = 0;
  for (pid_t server : servers) {
    if (server_mask_count < std::size(server_masks)) {
      server_mask& m = server_masks[server_mask_count];
      if (sched_getaffinity(server, sizeof m.before, &m.before) == 0) {
        std::snprintf(m.task_dir, sizeof m.task_dir, "/proc/%d/task", static_cast<int>(server));
        ++server_mask_count;
      }
    }
    for (pid_t tid : threads_of(server)) {
      if (const int err = pin(server, tid, server_cpu); err != 0) {
        failure = "cannot pin server thread " + std::to_string(tid) + " (" + std::strerror(err) +
                  "; needs root or CAP_SYS_NICE)";
        break;
      }
      ++server_threads;
    }
    if (!failure.empty()) break;
  }
  if (failure.empty()) {
    for (pid_t tid : threads_of(::getpid())) {
      if (const int err = pin(::getpid(), tid, client_cpu); err != 0) {
        failure = "cannot pin bench thread " + std::to_string(tid) + " (" + std::strerror(err) + ")";
        break;
      }
    }
  }
  if (!failure.empty()) {
    restore();
    desc_ = std::string("free: ") + failure;
    return;
  }
  desc_ = std::string(to_string(p)) + ": bench process on CPU " + std::to_string(client_cpu) + ", " +
          std::to_string(servers.size()) + " server process(es) (" + std::to_string(server_threads) +
          " threads) on CPU " + std::to_string(server_cpu);
}

void cpu_pin::restore() {
  for (const auto& e : saved_) {
    // A thread id reused since (its thread ended) belongs to someone else now: skip it.
    std::error_code ec;
    if (std::filesystem::exists("/proc/" + std::to_string(e.pid) + "/task/" + std::to_string(e.tid), ec))
      sched_setaffinity(e.tid, sizeof e.before, &e.before);
  }
  saved_.clear();
  reset_server_threads();
  server_mask_count = 0;
  if (handlers_) {
    for (std::size_t i = 0; i < 3; ++i) sigaction(pin_signals[i], &old_actions[i], nullptr);
    handlers_ = false;
  }
  active_pins = nullptr;
}

cpu_pin::~cpu_pin() { restore(); }

}  // namespace dblock_bench
