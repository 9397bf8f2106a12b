// tests/faults/history.hpp — the history files of the fault-injection workload
// (docs/correctness.md): one JSON object per line, appended with one write(2) each, so a
// worker killed with SIGKILL leaves every line it finished and at most one torn last line
// (which readers skip and count).
//
// Every event carries "m" (CLOCK_MONOTONIC, ns: shared by all processes of the machine,
// never jumps) and "r" (CLOCK_REALTIME, ns: the wall clock, which the clock fault makes
// jump). The checker orders events by "m" only.
#pragma once

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace dblock::faults {

using json = nlohmann::json;

inline std::int64_t clock_ns(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
inline std::int64_t mono_ns() { return clock_ns(CLOCK_MONOTONIC); }
inline std::int64_t wall_ns() { return clock_ns(CLOCK_REALTIME); }

// Appends JSON lines to one file; thread-safe; each line is one write(2) on an O_APPEND
// descriptor, so it reaches the kernel before append() returns (survives SIGKILL).
class history_writer {
 public:
  explicit history_writer(const std::filesystem::path& file) {
    fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("cannot open history file " + file.string());
  }
  ~history_writer() {
    if (fd_ >= 0) ::close(fd_);
  }
  history_writer(const history_writer&) = delete;
  history_writer& operator=(const history_writer&) = delete;

  // Adds "m" and "r" unless present, then writes the line.
  void append(json ev) {
    if (!ev.contains("m")) ev["m"] = mono_ns();
    if (!ev.contains("r")) ev["r"] = wall_ns();
    std::string line = ev.dump(-1, ' ', false, json::error_handler_t::replace);
    line += '\n';
    std::lock_guard l(mu_);
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error("write to history file failed");
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }

 private:
  int fd_ = -1;
  std::mutex mu_;
};

// Reads a JSON-lines file. Lines that do not parse (a line torn by SIGKILL) are skipped
// and counted in *torn.
inline std::vector<json> read_jsonl(const std::filesystem::path& file, std::size_t* torn = nullptr) {
  std::vector<json> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      out.push_back(json::parse(line));
    } catch (const json::exception&) {
      if (torn) ++*torn;
    }
  }
  return out;
}

}  // namespace dblock::faults
