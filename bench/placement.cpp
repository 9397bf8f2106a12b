// bench/placement.cpp — pinning the bench process and the local database servers to CPUs
// for the micro part (see placement.hpp for why). Linux only: /proc and sched_setaffinity.
#include "placement.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
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

// The parent pid from /proc/<pid>/stat: the field after the state, which follows the
// command name in parentheses (itself possibly holding spaces or parentheses).
pid_t parent_of(pid_t pid) {
  const std::string stat = read_first_line("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  long ppid = 0;
  rest >> state >> ppid;
  return static_cast<pid_t>(ppid);
}

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
      const auto backend = static_cast<pid_t>(c.query_int("SELECT pg_backend_pid()"));
      const pid_t postmaster = backend > 0 ? parent_of(backend) : 0;
      // A remote server's pids mean nothing here: the processes must be PostgreSQL's.
      if (postmaster <= 1 || comm_of(backend) != "postgres" || comm_of(postmaster) != "postgres") return {};
      out.push_back(postmaster);  // its children are pinned with it (threads_under)
    } else if (d == dblock::dialect::mysql) {
      const std::string pid_file = trimmed(c.query_text("SELECT @@pid_file"));
      if (pid_file.empty()) return {};
      const std::string pid_text = trimmed(read_first_line(pid_file));
      if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) return {};
      const auto pid = static_cast<pid_t>(std::stol(pid_text));
      const std::string comm = comm_of(pid);
      if (comm != "mysqld" && comm != "mariadbd") return {};
      out.push_back(pid);
    }
  } catch (const std::exception& e) {
    note(std::string("placement: server processes not found: ") + e.what());
    return {};
  }
  return out;
}

namespace {

// Every thread of `pid` and, for a PostgreSQL postmaster, of its children.
std::vector<pid_t> threads_under(pid_t pid) {
  auto out = threads_of(pid);
  for (pid_t child : numeric_entries("/proc"))
    if (child != pid && parent_of(child) == pid)
      for (pid_t tid : threads_of(child)) out.push_back(tid);
  return out;
}

}  // namespace

cpu_pin::cpu_pin(placement p, const std::vector<pid_t>& servers) {
  if (p == placement::free) {
    desc_ = "free: not pinned";
    return;
  }
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
  auto pin = [&](pid_t tid, int cpu) -> int {
    cpu_set_t before, want;
    CPU_ZERO(&want);
    CPU_SET(cpu, &want);
    for (const auto& s : saved_)
      if (s.first == tid) return 0;  // already pinned (a server given twice)
    if (sched_getaffinity(tid, sizeof before, &before) != 0) return errno == ESRCH ? 0 : errno;
    if (sched_setaffinity(tid, sizeof want, &want) != 0) return errno == ESRCH ? 0 : errno;
    saved_.emplace_back(tid, before);
    return 0;
  };
  std::string failure;
  std::size_t server_threads = 0;
  for (pid_t server : servers) {
    cpu_set_t mask;
    if (sched_getaffinity(server, sizeof mask, &mask) != 0) continue;  // gone
    servers_.emplace_back(server, mask);
    for (pid_t tid : threads_under(server)) {
      if (const int err = pin(tid, server_cpu); err != 0) {
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
      if (const int err = pin(tid, client_cpu); err != 0) {
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
          std::to_string(servers_.size()) + " server process tree(s) (" + std::to_string(server_threads) +
          " threads) on CPU " + std::to_string(server_cpu);
}

void cpu_pin::restore() {
  std::vector<pid_t> done;
  for (auto& [tid, mask] : saved_) {
    sched_setaffinity(tid, sizeof mask, &mask);
    done.push_back(tid);
  }
  // Backends forked and server threads started while pinned inherited the pin: they get
  // their server's mask back too. (The bench's own threads started meanwhile keep it.)
  for (auto& [server, mask] : servers_)
    for (pid_t tid : threads_under(server))
      if (std::find(done.begin(), done.end(), tid) == done.end()) sched_setaffinity(tid, sizeof mask, &mask);
  saved_.clear();
  servers_.clear();
}

cpu_pin::~cpu_pin() { restore(); }

}  // namespace dblock_bench
