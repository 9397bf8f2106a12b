// tests/support/process.hpp — run a program as a user would (fork + execve), with its
// own arguments, environment changes and working directory, capturing stdout and stderr
// into files and the exit status. Used to drive the real `dblock` binary.
//
//   auto r = dblock::test::run_process({DBLOCK_BINARY, "--version"});
//   EXPECT_EQ(r.exit_code, 0);
//
// Several processes can be started at once behind a start barrier, so they really race:
//   dblock::test::start_barrier gate;
//   std::vector<dblock::test::child> kids;
//   for (...) kids.push_back(dblock::test::start_process(opts, &gate));
//   gate.open();                         // all children exec() now
//   for (auto& k : kids) results.push_back(k.wait());
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.hpp"

extern char** environ;

namespace dblock::test {

struct process_options {
  std::vector<std::string> argv;  // argv[0] is the program path
  // Environment changes on top of this process's environment: a value sets the
  // variable, std::nullopt removes it.
  std::map<std::string, std::optional<std::string>> env;
  std::filesystem::path cwd;  // empty: inherit
  // A child still running after this long is killed (SIGKILL) and reported as
  // exit_code -1 with timed_out = true.
  std::chrono::milliseconds timeout{120'000};
};

struct process_result {
  int exit_code = -1;  // exit status, or 128 + signal number when killed by a signal
  bool timed_out = false;
  std::string out;  // everything written to stdout
  std::string err;  // everything written to stderr
};

// Holds started children back until open(): every child blocks reading a pipe before
// execve(), and open() closes the write end so they all proceed at the same instant.
class start_barrier {
 public:
  start_barrier() {
    if (::pipe2(fds_, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  }
  ~start_barrier() {
    open();
    if (fds_[0] >= 0) ::close(fds_[0]);
  }
  start_barrier(const start_barrier&) = delete;
  start_barrier& operator=(const start_barrier&) = delete;
  void open() noexcept {
    if (fds_[1] >= 0) ::close(fds_[1]);
    fds_[1] = -1;
  }
  [[nodiscard]] int read_fd() const noexcept { return fds_[0]; }
  [[nodiscard]] int write_fd() const noexcept { return fds_[1]; }

 private:
  int fds_[2] = {-1, -1};
};

class child {
 public:
  child(pid_t pid, std::unique_ptr<temp_dir> dir, std::chrono::milliseconds timeout)
      : pid_(pid), dir_(std::move(dir)), timeout_(timeout) {}
  child(child&& o) noexcept : pid_(o.pid_), dir_(std::move(o.dir_)), timeout_(o.timeout_) { o.pid_ = -1; }
  child& operator=(child&&) = delete;
  ~child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int st = 0;
      ::waitpid(pid_, &st, 0);
    }
  }
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

  // Waits for the child (killing it after the timeout) and collects its output.
  process_result wait() {
    process_result r;
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    int st = 0;
    for (;;) {
      pid_t w = ::waitpid(pid_, &st, WNOHANG);
      if (w == pid_) break;
      if (w < 0 && errno != EINTR) throw std::runtime_error("waitpid failed");
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &st, 0);
        r.timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a child's exit, not a timing claim
    }
    pid_ = -1;
    if (r.timed_out) r.exit_code = -1;
    else if (WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
    else if (WIFSIGNALED(st)) r.exit_code = 128 + WTERMSIG(st);
    r.out = read_file(dir_->path() / "stdout");
    r.err = read_file(dir_->path() / "stderr");
    return r;
  }

 private:
  pid_t pid_;
  std::unique_ptr<temp_dir> dir_;
  std::chrono::milliseconds timeout_;
};

// Starts the program; with a barrier, the child waits for barrier->open() before execve().
inline child start_process(const process_options& o, start_barrier* barrier = nullptr) {
  if (o.argv.empty()) throw std::invalid_argument("start_process: empty argv");
  auto dir = std::make_unique<temp_dir>("dblock-proc");
  const std::string out_path = (dir->path() / "stdout").string();
  const std::string err_path = (dir->path() / "stderr").string();

  // Everything the child needs is prepared before fork(): after it, only
  // async-signal-safe calls (open, dup2, chdir, read, execve, _exit).
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : o.env) {
    if (v) env[k] = *v;
    else env.erase(k);
  }
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = o.argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string cwd = o.cwd.string();

  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int in = ::open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    if (barrier) {
      if (barrier->write_fd() >= 0) ::close(barrier->write_fd());
      char c;
      for (;;) {  // returns at EOF: every write end closed by barrier->open()
        ssize_t n = ::read(barrier->read_fd(), &c, 1);
        if (n > 0 || (n < 0 && errno == EINTR)) continue;
        break;
      }
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  return child(pid, std::move(dir), o.timeout);
}

inline process_result run_process(const process_options& o) { return start_process(o).wait(); }

inline process_result run_process(std::vector<std::string> argv) {
  process_options o;
  o.argv = std::move(argv);
  return run_process(o);
}

// Number of '\n'-terminated lines in `s` (a final unterminated line counts too).
inline std::size_t line_count(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  if (!s.empty() && s.back() != '\n') ++n;
  return n;
}

}  // namespace dblock::test
