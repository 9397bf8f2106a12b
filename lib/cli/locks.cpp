// lib/cli/locks.cpp — `dblock exec` (flock(1) across machines: run a command while
// holding a lease lock) and `dblock locks [--json]` (what is held). Contract in
// DESIGN, "The dblock command"; exit codes in commands.hpp.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "dblock/errors.hpp"
#include "dblock/lock.hpp"
#include "dblock/util.hpp"

namespace dblock::cli {

namespace {

struct exec_args {
  std::string name;
  std::string ttl = "30s";
  std::string wait = "0";
  std::string grace = "5s";
  std::vector<std::string> command;
};

std::string human_ms(std::chrono::milliseconds ms) {
  std::ostringstream o;
  auto v = ms.count();
  if (v < 0) {
    o << "expired " << std::fixed << std::setprecision(1) << (-v / 1000.0) << "s ago";
  } else {
    o << std::fixed << std::setprecision(1) << (v / 1000.0) << "s";
  }
  return o.str();
}

// Exit status of the child the way a shell reports it.
int child_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return exit_failure;
}

int run_exec(const global_options& g, const exec_args& a) {
  validate_lock_name(a.name);
  const auto ttl = parse_duration(a.ttl);
  const auto wait = parse_duration(a.wait);
  const auto grace = parse_duration(a.grace);
  if (a.command.empty()) throw invalid_argument("no command given after --");

  // Signals are handled synchronously in this thread: block them before any thread
  // (watchdog, listener) exists so every thread inherits the mask.
  sigset_t handled, previous;
  sigemptyset(&handled);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&handled, s);
  pthread_sigmask(SIG_BLOCK, &handled, &previous);

  auto db = connect(g);
  std::atomic<bool> lost{false};
  std::string lost_reason;
  std::mutex reason_mu;
  session_options opts;
  opts.ttl = ttl;
  opts.on_lost = [&](const lost_lease& l) {
    {
      std::lock_guard lk(reason_mu);
      lost_reason = l.reason;
    }
    lost = true;
  };
  session s(db, opts);

  std::optional<lease> held;
  if (wait.count() == 0) {
    held = s.try_acquire(a.name);
    if (!held) {
      auto h = s.holder_of(a.name);
      std::string who = h ? "held by '" + h->holder + "' (fence " + std::to_string(h->fence) + ") until " +
                                h->expires_at + " server time (" + human_ms(h->expires_in) + " left)"
                          : "held by another owner";
      throw timeout_error("lock '" + a.name + "' not acquired: " + who);
    }
  } else {
    held.emplace(s.acquire(a.name, wait));  // timeout_error names the holder -> exit 75
  }

  const std::string fence = std::to_string(held->fence());
  ::setenv("DBLOCK_LOCK_NAME", a.name.c_str(), 1);
  ::setenv("DBLOCK_FENCING_TOKEN", fence.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& c : a.command) argv.push_back(const_cast<char*>(c.c_str()));
  argv.push_back(nullptr);

  std::cout.flush();
  std::cerr.flush();
  pid_t child = ::fork();
  if (child < 0) throw internal_error(std::string("fork failed: ") + std::strerror(errno));
  if (child == 0) {
    // Only async-signal-safe calls between fork and exec.
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    ::execvp(argv[0], argv.data());
    const char msg[] = "dblock: cannot run the command\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }

  auto wait_child = [&](std::chrono::milliseconds limit) -> std::optional<int> {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (;;) {
      int status = 0;
      pid_t r = ::waitpid(child, &status, WNOHANG);
      if (r == child) return child_status(status);
      if (std::chrono::steady_clock::now() >= until) return std::nullopt;
      timespec ts{0, 20'000'000};
      siginfo_t info;
      int sig = ::sigtimedwait(&handled, &info, &ts);
      if (sig > 0 && sig != SIGCHLD) ::kill(child, sig);  // forward INT/TERM/HUP/QUIT
    }
  };

  for (;;) {
    if (auto st = wait_child(std::chrono::milliseconds(50))) {
      try {
        held->release();
      } catch (const lock_lost& e) {
        throw lock_lost(std::string(e.what()) + " (the command finished with status " + std::to_string(*st) + ")");
      }
      return *st;
    }
    // The watchdog reports a lost row; is_held() also turns false when the local
    // safety deadline passes (e.g. this process was paused past its TTL).
    if (lost || !held->is_held()) {
      std::string why;
      {
        std::lock_guard lk(reason_mu);
        why = lost_reason.empty() ? "the lease ran out before it could be renewed" : lost_reason;
      }
      ::kill(child, SIGTERM);
      if (!wait_child(grace)) {
        ::kill(child, SIGKILL);
        (void)wait_child(std::chrono::milliseconds(60'000));
      }
      try {
        held->release();
      } catch (...) {
      }
      throw lock_lost("lock '" + a.name + "' (fence " + fence + ") was lost while the command ran: " + why +
                      "; the command was stopped");
    }
  }
}

int run_locks(const global_options& g, bool json) {
  auto db = connect(g);
  auto rows = list_locks(db);
  if (json) {
    auto arr = nlohmann::json::array();
    for (const auto& r : rows)
      arr.push_back({{"name", r.name},
                     {"holder", r.holder},
                     {"holds", r.holds},
                     {"fence", r.fence},
                     {"expires_at", r.expires_at},
                     {"expires_in_ms", r.expires_in.count()}});
    std::cout << arr.dump(2) << "\n";
    return exit_ok;
  }
  std::size_t w = 4;
  for (const auto& r : rows) w = std::max(w, r.name.size());
  std::cout << std::left << std::setw(static_cast<int>(w)) << "NAME" << "  " << std::setw(24) << "HOLDER" << "  "
            << std::setw(5) << "HOLDS" << "  " << std::setw(12) << "FENCE" << "  EXPIRES\n";
  for (const auto& r : rows)
    std::cout << std::left << std::setw(static_cast<int>(w)) << r.name << "  " << std::setw(24) << r.holder << "  "
              << std::setw(5) << r.holds << "  " << std::setw(12) << r.fence << "  " << human_ms(r.expires_in) << " ("
              << r.expires_at << ")\n";
  return exit_ok;
}

}  // namespace

void add_lock_commands(CLI::App& app, global_options& g, command_registry& reg) {
  auto a = std::make_shared<exec_args>();
  auto* ex = app.add_subcommand("exec", "Run a command while holding lease lock NAME (the watchdog renews it)");
  ex->add_option("--name", a->name, "Lock name (1-255 bytes of UTF-8)")->required();
  ex->add_option("--ttl", a->ttl, "Lease TTL, e.g. 250ms, 30s, 5m")->capture_default_str();
  ex->add_option("--wait", a->wait, "How long to wait for the lock (0 = fail at once with exit 75)")
      ->capture_default_str();
  ex->add_option("--grace", a->grace, "After a lost lease: time between SIGTERM and SIGKILL to the command")
      ->capture_default_str();
  ex->add_option("command", a->command, "The command and its arguments (after --)")->required();
  reg.add(ex, [&g, a] { return run_exec(g, *a); });

  auto json = std::make_shared<bool>(false);
  auto* ls = app.add_subcommand("locks", "List the lease locks: holder, holds, fencing token, time to expiry");
  ls->add_flag("--json", *json, "Print a JSON array of objects");
  reg.add(ls, [&g, json] { return run_locks(g, *json); });
}

}  // namespace dblock::cli
