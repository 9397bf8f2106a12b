// lib/cli/locks.cpp — `dblock exec` (flock(1) across machines: run a command while
// holding a lease lock) and `dblock locks [--json]` (what is held). Contract in
// DESIGN, "The dblock command"; exit codes in commands.hpp.
#include <signal.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "dblock/election.hpp"
#include "dblock/errors.hpp"
#include "dblock/lock.hpp"
#include "dblock/util.hpp"

namespace dblock::cli {

namespace {

std::set<int>& inherited_descriptors() {
  static std::set<int> fds;
  return fds;
}

// Calls fn(fd) for every open descriptor above stderr.
template <typename F>
void for_each_descriptor(F fn) {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return;
  const int self = ::dirfd(d);
  while (auto* e = ::readdir(d)) {
    const int fd = std::atoi(e->d_name);
    if (fd > 2 && fd != self) fn(fd);
  }
  ::closedir(d);
}

// Every descriptor opened since start (database sockets: Connector/C++ does not set
// FD_CLOEXEC on its own) is closed in the command at exec.
void close_own_descriptors_on_exec() {
  for_each_descriptor([](int fd) {
    if (inherited_descriptors().count(fd)) return;
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0) (void)::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  });
}

struct exec_args {
  std::string name;
  std::string ttl = "30s";
  std::string wait = "0";
  std::optional<std::string> grace;       // default: 5 s, or less where the TTL needs it
  std::optional<std::string> lock_delay;  // default: session_options::lock_delay
  bool read = false;                      // --read: a read hold of read-write lock NAME
  bool write = false;                     // --write: its write hold
  std::optional<int> permits;             // --permits K: K permits of semaphore NAME
  std::optional<int> max_permits;         // --max-permits N: its permit count
  std::vector<std::string> command;
  std::optional<std::string> value;       // `dblock elect`: run CMD while leader, campaigning with this value
};

// What exec holds while the command runs: one lease (a lease lock, a read or write hold), or
// the leases of K semaphore permits. Trusted until the earliest of them runs out.
struct holding {
  std::vector<lease> leases;
  [[nodiscard]] std::chrono::steady_clock::time_point trusted_until() const {
    auto t = std::chrono::steady_clock::time_point::max();
    for (auto& l : leases) t = std::min(t, l.trusted_until());
    return t;
  }
  // Releases every lease; the first lock_lost is thrown after the rest are released.
  void release() {
    std::optional<lock_lost> first;
    for (auto& l : leases) {
      try {
        l.release();
      } catch (const lock_lost& e) {
        if (!first) first = e;
      }
    }
    if (first) throw *first;
  }
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

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Once the child has started, exec ends through here: one stderr line, then _Exit. No
// destructor runs, so nothing can wait on a database that stopped answering (a renewal or
// a reconnect stuck in the network); the lock row, if still ours, expires with its lease.
[[noreturn]] void finish_now(int code, const std::string& message) {
  std::cout.flush();
  if (!message.empty()) {
    std::string line = "dblock: " + message;
    for (auto& c : line)
      if (c == '\n' || c == '\r') c = ' ';
    line += '\n';
    (void)!::write(2, line.data(), line.size());
  }
  std::_Exit(code);
}

// The release, on a thread of its own, given up after `limit` (the database may not
// answer). Empty = released; else what went wrong, and whether the lock was found lost.
struct release_result {
  bool done = false;
  bool lost = false;  // the row was gone or another's (lock_lost)
  std::string error;
};
release_result release_within(std::function<void()> release, milliseconds limit) {
  struct shared_state {
    std::mutex mu;
    std::condition_variable cv;
    bool finished = false;
    release_result r;
  };
  auto st = std::make_shared<shared_state>();
  try {
    std::thread([st, release] {
      release_result r;
      try {
        release();
        r.done = true;
      } catch (const lock_lost& e) {
        r.lost = true;
        r.error = e.what();
      } catch (const std::exception& e) {
        r.error = e.what();
      }
      std::lock_guard l(st->mu);
      st->r = std::move(r);
      st->finished = true;
      st->cv.notify_all();
    }).detach();
  } catch (const std::exception& e) {
    return {false, false, std::string("cannot start the release: ") + e.what()};
  }
  std::unique_lock l(st->mu);
  if (!st->cv.wait_for(l, limit, [&] { return st->finished; }))
    return {false, false, "the database did not answer within " + std::to_string(limit.count()) + " ms"};
  return st->r;
}

// Signals the command's process group (and the command itself, should the group be gone).
void signal_group(pid_t pid, int sig) noexcept {
  if (::kill(-pid, sig) != 0) ::kill(pid, sig);
}

// How long exec waits for the release after the command ended.
constexpr milliseconds release_limit{3'000};

int run_exec(const global_options& g, const exec_args& a) {
  validate_lock_name(a.name);
  const auto ttl = parse_duration(a.ttl);
  const auto wait = parse_duration(a.wait);
  if (a.command.empty()) throw invalid_argument("no command given after --");
  if (ttl < milliseconds(100)) throw invalid_argument("--ttl " + a.ttl + " is too short (at least 100ms)");

  session_options opts;
  opts.ttl = ttl;
  opts.replication = replication_of(g);
  // No crash detection for the command: its child would outlive a killed dblock process,
  // and a waiter granted within milliseconds would run beside it. The TTL (and --grace)
  // bound that overlap instead.
  opts.detect_crashes = false;
  if (a.lock_delay) opts.lock_delay = parse_duration(*a.lock_delay);
  // The child must get SIGTERM no earlier than one full renewal period after the next
  // renewal is due, or a healthy run would be stopped: grace <= TTL - 2 periods - margin.
  const auto period = ttl / opts.renew_divisor;
  const auto margin = milliseconds(static_cast<long long>(static_cast<double>(ttl.count()) * opts.max_clock_drift));
  const auto max_grace = ttl - 2 * period - margin;
  milliseconds grace = std::min(milliseconds(5'000), std::max(milliseconds(0), max_grace));
  if (a.grace) {
    grace = parse_duration(*a.grace);
    if (grace > max_grace)
      throw invalid_argument("--grace " + *a.grace + " leaves no room within the renewal period: with --ttl " + a.ttl +
                             " it must be at most " + std::to_string(std::max<long long>(0, max_grace.count())) +
                             "ms (TTL - 2 x renewal period TTL/3 - clock-drift margin " + std::to_string(margin.count()) +
                             "ms)");
  }

  // Signals: blocked in every thread (set before any thread exists, so all inherit the
  // mask) and taken by one thread of their own with sigwait, so that a signal is acted on
  // whatever the main thread is blocked in - connecting, acquiring, a release.
  // SIGTTOU too: handing the terminal to the command's process group and back
  // (tcsetpgrp) from a background group must not stop us. SIGCHLD may have been inherited
  // as ignored, and then waitpid would never report the command.
  ::signal(SIGCHLD, SIG_DFL);
  sigset_t handled, previous;
  sigemptyset(&handled);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTTOU}) sigaddset(&handled, sig);
  pthread_sigmask(SIG_BLOCK, &handled, &previous);
  sigset_t forwarded;
  sigemptyset(&forwarded);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&forwarded, sig);

  // The command's process: 0 before it starts (a signal then ends exec at once), forking
  // while fork() runs (the signal is kept and sent once the pid is known), then its pid,
  // then finished once reaped (nothing is sent to a pid that may be reused).
  // Static: the signal thread is detached and outlives this call when exec fails early.
  constexpr pid_t not_started = 0, forking = -1, finished = -2;
  static std::atomic<pid_t> child{not_started};
  static std::atomic<int> signalled{0};  // the last signal received, forwarded to the command
  std::thread([forwarded] {
    for (;;) {
      int sig = 0;
      if (::sigwait(&forwarded, &sig) != 0) continue;
      pid_t pid = child.load();
      if (pid == not_started)
        finish_now(128 + sig, std::string("interrupted by signal ") + std::to_string(sig) +
                                  " before the command started");
      signalled = sig;
      if (pid == forking) pid = child.load();  // the main thread sends `signalled` after fork
      if (pid > 0) signal_group(pid, sig);
    }
  }).detach();

  auto db = connect(g);
  std::atomic<bool> lost{false};
  std::string lost_reason;
  std::mutex reason_mu;
  opts.on_lost = [&](const lost_lease& l) {
    {
      std::lock_guard lk(reason_mu);
      lost_reason = l.reason;
    }
    lost = true;
  };
  // Destroyed normally only when exec fails before the child starts (nothing is held then);
  // once the child runs, exec ends with _Exit (finish_now) and no destructor can wait on a
  // database that stopped answering.
  auto s = std::make_unique<session>(db, opts);

  // What the command runs under: leases (one, or one per permit), or a leadership
  // (`dblock elect`, a.value set).
  auto held = std::make_shared<holding>();
  std::shared_ptr<leadership> leading;
  std::unique_ptr<election> elect;
  const lock_mode mode = a.read ? lock_mode::read : a.write ? lock_mode::write : a.permits ? lock_mode::permit
                                                                                         : lock_mode::exclusive;
  if (a.value) {
    elect = std::make_unique<election>(*s, a.name);
    if (wait.count() == 0) {
      auto l = elect->try_campaign(*a.value);
      if (!l) {
        auto now = elect->leader();
        throw timeout_error("election '" + a.name + "' not won: " +
                            (now ? "led by '" + now->value + "' (holder '" + now->holder + "', fence " +
                                       std::to_string(now->fence) + ", " + human_ms(now->expires_in) + " left)"
                                 : std::string("the lock is held by another owner")));
      }
      leading = std::make_shared<leadership>(std::move(*l));
    } else {
      leading = std::make_shared<leadership>(elect->campaign(*a.value, wait));  // timeout_error -> exit 75
    }
  } else if (mode == lock_mode::permit) {
    int n = a.max_permits.value_or(0);
    if (!a.max_permits) {  // the count the holders chose
      for (const auto& h : list_holders(db))
        if (h.name == a.name && h.mode == lock_mode::permit) n = h.permits;
      if (n == 0)
        throw invalid_argument("--max-permits is needed: no permit of '" + a.name +
                               "' is held, so its permit count is not known");
    }
    if (wait.count() == 0) {
      auto p = s->try_acquire_permits(a.name, n, *a.permits);
      if (!p) {
        int used = 0;
        for (const auto& h : list_holders(db))
          if (h.name == a.name) ++used;
        throw timeout_error("semaphore '" + a.name + "' not acquired: " + std::to_string(used) + " of " +
                            std::to_string(n) + " permits are held, " + std::to_string(*a.permits) + " wanted");
      }
      held->leases = std::move(p->permits());
    } else {
      held->leases = std::move(s->acquire_permits(a.name, n, *a.permits, wait).permits());
    }
  } else if (mode != lock_mode::exclusive) {
    if (wait.count() == 0) {
      auto l = s->try_acquire(a.name, mode);
      if (!l) {
        int readers = 0;
        bool writer = false;
        for (const auto& h : list_holders(db))
          if (h.name == a.name) {
            if (h.mode == lock_mode::write) writer = true;
            else ++readers;
          }
        throw timeout_error(std::string(to_string(mode)) + " lock '" + a.name + "' not acquired: " +
                            (writer ? std::string("a writer holds it")
                                    : readers ? std::to_string(readers) + " reader" + (readers == 1 ? "" : "s") +
                                                    " hold it"
                                              : std::string("a writer waits for it")));
      }
      held->leases.push_back(std::move(*l));
    } else {
      held->leases.push_back(s->acquire(a.name, mode, wait));
    }
  } else if (wait.count() == 0) {
    auto l = s->try_acquire(a.name);
    if (!l) {
      auto h = s->holder_of(a.name);
      std::string who = h ? "held by '" + h->holder + "' (fence " + std::to_string(h->fence) + ") until " +
                                h->expires_at + " server time (" + human_ms(h->expires_in) + " left" +
                                (h->in_lock_delay() ? ", in its lock delay" : "") + ")"
                          : "held by another owner";
      throw timeout_error("lock '" + a.name + "' not acquired: " + who);
    }
    held->leases.push_back(std::move(*l));
  } else {
    held->leases.push_back(s->acquire(a.name, wait));  // timeout_error names the holder -> exit 75
  }

  const std::string fence = std::to_string(leading ? leading->fence() : held->leases.front().fence());
  std::string fences;
  for (const auto& l : held->leases) fences += (fences.empty() ? "" : " ") + std::to_string(l.fence());
  auto trusted_until = [&] { return leading ? leading->trusted_until() : held->trusted_until(); };
  std::function<void()> release_hold = [held, leading] {
    if (leading) leading->resign();
    else held->release();
  };
  const std::string what = (leading ? "leadership of election '" : "lock '") + a.name + "'";
  ::setenv("DBLOCK_LOCK_NAME", a.name.c_str(), 1);
  ::setenv("DBLOCK_FENCING_TOKEN", fence.c_str(), 1);
  if (leading) ::setenv("DBLOCK_LEADER_VALUE", a.value->c_str(), 1);
  ::setenv("DBLOCK_LOCK_MODE", to_string(mode), 1);
  if (mode == lock_mode::permit) ::setenv("DBLOCK_FENCING_TOKENS", fences.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& c : a.command) argv.push_back(const_cast<char*>(c.c_str()));
  argv.push_back(nullptr);

  std::cout.flush();
  std::cerr.flush();
  // The command runs in a process group of its own, so that stopping it stops everything
  // it started (a shell's jobs, a wrapper's children). When exec runs in the foreground of
  // a terminal, that group gets the terminal (and the terminal's ^C) while it runs.
  const bool terminal = ::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
  close_own_descriptors_on_exec();
  child = forking;
  const pid_t pid = ::fork();
  if (pid < 0) throw internal_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::setpgid(0, 0);
    if (terminal) (void)::tcsetpgrp(STDIN_FILENO, ::getpid());  // SIGTTOU is still blocked here
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    ::execvp(argv[0], argv.data());
    // As POSIX shells, env and timeout do: 127 when the command is not found, 126 when it
    // was found but cannot be run (not executable, a directory, not a program).
    const bool missing = errno == ENOENT || errno == ENOTDIR;
    const char not_found[] = "dblock: cannot run the command: not found\n";
    const char cannot_run[] = "dblock: cannot run the command: found but not executable\n";
    if (missing) (void)!::write(2, not_found, sizeof not_found - 1);
    else (void)!::write(2, cannot_run, sizeof cannot_run - 1);
    ::_exit(missing ? 127 : 126);
  }
  (void)::setpgid(pid, pid);  // also here: whichever runs first, the group exists before any kill
  child = pid;
  if (const int sig = signalled.load(); sig != 0) signal_group(pid, sig);  // arrived during fork
  auto reaped = [&] {
    child = finished;
    if (terminal) (void)::tcsetpgrp(STDIN_FILENO, ::getpgrp());
  };

  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  // Stopping the child: SIGTERM at the lease's trusted end (deadline - margin) minus the
  // grace, SIGKILL at the trusted end - fixed when SIGTERM goes out. A lease reported lost
  // early (its row gone) gets SIGTERM at once and SIGKILL a grace later. A signal
  // forwarded to the child also ends in SIGKILL a grace later if the child ignores it.
  bool stopping = false;
  bool killed = false;
  steady::time_point kill_at = steady::time_point::max();
  std::string why;
  std::optional<steady::time_point> forwarded_at;  // when a signal was last forwarded
  int forwarded_seen = 0;
  steady::time_point last_trusted{};  // the trusted end last seen while the lease was held
  auto lease_why = [&] {
    std::lock_guard lk(reason_mu);
    return lost_reason.empty() ? std::string("it could not be renewed in time (the database did not answer)")
                               : lost_reason;
  };
  for (;;) {
    int status = 0;
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno == ECHILD)) {
      const int st = w == pid ? child_status(status) : exit_failure;
      reaped();
      if (stopping) {
        ::kill(-pid, SIGKILL);  // whatever the command started is stopped with it
        finish_now(exit_lock_lost, what + " (fence " + fence + ") was lost while the command ran: " +
                                       why + "; the command was stopped" + (killed ? " with SIGKILL" : "") +
                                       " (status " + std::to_string(st) + ")");
      }
      auto r = release_within(release_hold, release_limit);
      if (r.done) finish_now(st, "");
      if (r.lost)
        finish_now(exit_lock_lost, r.error + " (the command finished with status " + std::to_string(st) + ")");
      const std::string msg = "the command finished with status " + std::to_string(st) + ", but releasing " + what +
                              " (fence " + fence + ") failed: " + r.error +
                              "; the lock stays held until its lease runs out";
      finish_now(st == 0 ? exit_release_failed : st, msg);
    }
    const auto now = steady::now();
    const auto trusted = trusted_until();
    const bool live = trusted > steady::time_point{};
    if (live) last_trusted = trusted;
    if (!stopping && (lost || !live || now >= trusted - grace)) {
      stopping = true;
      why = lease_why();
      // Reported lost early (its row gone), or this loop woke late: SIGKILL no later than
      // the last trusted end seen, nor than a grace from now.
      kill_at = live ? trusted : std::min(now + grace, last_trusted == steady::time_point{} ? now : last_trusted);
      signal_group(pid, SIGTERM);
    }
    if (const int sig = signalled.load(); sig != 0 && sig != forwarded_seen) {
      forwarded_seen = sig;
      forwarded_at = now;
    }
    if (!killed && (now >= kill_at || (forwarded_at && now >= *forwarded_at + grace))) {
      killed = true;
      signal_group(pid, SIGKILL);
    }
    // Sleep until the next thing to do, woken at once by SIGCHLD.
    auto next = now + milliseconds(50);
    if (!stopping) next = std::min(next, trusted - grace);
    if (!killed) next = std::min(next, kill_at);
    if (!killed && forwarded_at) next = std::min(next, *forwarded_at + grace);
    const auto left = std::max(std::chrono::nanoseconds(0), std::chrono::nanoseconds(next - now));
    timespec ts{static_cast<time_t>(left.count() / 1'000'000'000), static_cast<long>(left.count() % 1'000'000'000)};
    siginfo_t info;
    (void)::sigtimedwait(&chld, &info, &ts);
  }
}

// One line of `dblock locks`: a lease lock (an election's leader when its grant carries the
// election's value), a read-write lock's holder or a semaphore permit.
struct lock_line {
  std::string name, mode, holder, expires_at;
  std::string value;  // a leader's
  int holds = 0;
  std::int64_t fence = 0;
  std::chrono::milliseconds expires_in{0}, lock_delay{0};
  int slot = 0, permits = 0, readers = 0;
  [[nodiscard]] bool in_lock_delay() const { return expires_in.count() >= 0 && expires_in < lock_delay; }
  // The MODE column: exclusive, read (N readers), write, permit i/N, leader (VALUE).
  [[nodiscard]] std::string mode_text() const {
    if (mode == "read") return "read (" + std::to_string(readers) + " reader" + (readers == 1 ? ")" : "s)");
    if (mode == "permit") return "permit " + std::to_string(slot) + "/" + std::to_string(permits);
    if (mode == "leader") {
      std::string v = value;  // one line per lock: control characters shown as spaces
      for (auto& ch : v)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
      return "leader (" + v + ")";
    }
    return mode;
  }
};

int run_locks(const global_options& g, bool json) {
  auto db = connect(g);
  std::vector<lock_line> rows;
  const auto locks = list_locks(db);
  // An election's leader holds the lease lock of the election's name: the grant (its fence)
  // whose value is stored is shown as the leader, with that value.
  std::map<std::string, leader_info> leaders;
  if (!locks.empty())
    for (auto& l : list_leaders(db)) leaders.emplace(l.name, std::move(l));
  for (const auto& r : locks) {
    lock_line l{r.name, "exclusive", r.holder, r.expires_at, {}, r.holds, r.fence, r.expires_in, r.lock_delay};
    if (auto it = leaders.find(r.name); it != leaders.end() && it->second.fence == r.fence) {
      l.mode = "leader";
      l.value = it->second.value;
    }
    rows.push_back(std::move(l));
  }
  const auto holds = list_holders(db);
  std::map<std::string, int> readers;
  for (const auto& h : holds)
    if (h.mode == lock_mode::read) ++readers[h.name];
  for (const auto& h : holds) {
    lock_line l{h.name, to_string(h.mode), h.holder, h.expires_at, {}, h.holds, h.fence, h.expires_in, h.lock_delay};
    l.slot = h.slot;
    l.permits = h.permits;
    l.readers = readers.count(h.name) ? readers[h.name] : 0;
    rows.push_back(std::move(l));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const lock_line& a, const lock_line& b) { return a.name < b.name; });
  if (json) {
    auto arr = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json o{{"name", r.name},
                       {"mode", r.mode},
                       {"holder", r.holder},
                       {"holds", r.holds},
                       {"fence", r.fence},
                       {"expires_at", r.expires_at},
                       {"expires_in_ms", r.expires_in.count()},
                       {"lock_delay_ms", r.lock_delay.count()},
                       {"in_lock_delay", r.in_lock_delay()}};
      if (r.mode == "read" || r.mode == "write") o["readers"] = r.readers;
      if (r.mode == "leader") o["value"] = r.value;
      if (r.mode == "permit") {
        o["slot"] = r.slot;
        o["permits"] = r.permits;
      }
      arr.push_back(std::move(o));
    }
    std::cout << arr.dump(2) << "\n";
    return exit_ok;
  }
  std::size_t w = 4;
  for (const auto& r : rows) w = std::max(w, r.name.size());
  std::cout << std::left << std::setw(static_cast<int>(w)) << "NAME" << "  " << std::setw(24) << "HOLDER" << "  "
            << std::setw(5) << "HOLDS" << "  " << std::setw(12) << "FENCE" << "  " << std::setw(14) << "MODE"
            << "  EXPIRES\n";
  for (const auto& r : rows)
    std::cout << std::left << std::setw(static_cast<int>(w)) << r.name << "  " << std::setw(24) << r.holder << "  "
              << std::setw(5) << r.holds << "  " << std::setw(12) << r.fence << "  " << std::setw(14) << r.mode_text()
              << "  " << human_ms(r.expires_in) << " (" << r.expires_at << ")"
              << (r.in_lock_delay() ? " in lock delay (lease ended, nobody may take it yet)" : "") << "\n";
  return exit_ok;
}

int run_leader(const global_options& g, const std::string& name, bool json) {
  auto db = connect(g);
  auto l = current_leader(db, name);
  if (json) {
    nlohmann::json j = nullptr;
    if (l)
      j = {{"name", l->name}, {"value", l->value}, {"fence", l->fence}, {"holder", l->holder},
           {"expires_in_ms", l->expires_in.count()}};
    std::cout << j.dump(2) << "\n";
  } else if (l) {
    std::cout << l->value << "\t" << l->fence << "\t" << l->holder << "\t" << human_ms(l->expires_in) << "\n";
  }
  return l ? exit_ok : exit_no_leader;
}

}  // namespace

void add_lock_commands(CLI::App& app, global_options& g, command_registry& reg) {
  auto a = std::make_shared<exec_args>();
  auto* ex = app.add_subcommand("exec", "Run a command while holding lease lock NAME (the watchdog renews it)");
  ex->add_option("--name", a->name, "Lock name (1-255 bytes of UTF-8)")->required();
  ex->add_option("--ttl", a->ttl, "Lease TTL, e.g. 250ms, 30s, 5m")->capture_default_str();
  ex->add_option("--wait", a->wait, "How long to wait for the lock (0 = fail at once with exit 75)")
      ->capture_default_str();
  ex->add_option("--grace", a->grace,
                 "Time between SIGTERM and SIGKILL when the lease may run out (default 5s, at most "
                 "TTL - 2 x TTL/3 - margin)");
  ex->add_option("--lock-delay", a->lock_delay,
                 "After this lease runs out unreleased, nobody may take the lock for this long (default 1s)");
  auto* rd = ex->add_flag("--read", a->read, "Hold NAME as a read-write lock, for reading (shared with other readers)");
  auto* wr = ex->add_flag("--write", a->write, "Hold NAME as a read-write lock, for writing (alone)");
  auto* pm = ex->add_option("--permits", a->permits, "Hold K permits of counting semaphore NAME")
                 ->check(CLI::Range(1, 10000));
  auto* mx = ex->add_option("--max-permits", a->max_permits,
                            "The semaphore's permit count N (default: the count its holders chose)")
                 ->check(CLI::Range(1, 10000));
  rd->excludes(wr)->excludes(pm);
  wr->excludes(pm);
  mx->needs(pm);
  ex->add_option("command", a->command, "The command and its arguments (after --)")->required();
  reg.add(ex, [&g, a] { return run_exec(g, *a); });

  auto e = std::make_shared<exec_args>();
  e->value.emplace();
  auto* el = app.add_subcommand("elect", "Run a command while leader of election NAME (campaigning with VALUE)");
  el->add_option("--name", e->name, "Election name (1-255 bytes of UTF-8; the lease lock of the same name)")
      ->required();
  el->add_option("--value", *e->value, "What the leader is known by (at most 4096 bytes of UTF-8)")->required();
  el->add_option("--ttl", e->ttl, "Lease TTL, e.g. 250ms, 30s, 5m")->capture_default_str();
  el->add_option("--wait", e->wait, "How long to campaign (0 = fail at once with exit 75 when another leads)")
      ->capture_default_str();
  el->add_option("--grace", e->grace,
                 "Time between SIGTERM and SIGKILL when leadership may run out (default 5s, at most "
                 "TTL - 2 x TTL/3 - margin)");
  el->add_option("--lock-delay", e->lock_delay,
                 "After this lease runs out unreleased, nobody may lead for this long (default 1s)");
  el->add_option("command", e->command, "The command and its arguments (after --)")->required();
  reg.add(el, [&g, e] { return run_exec(g, *e); });

  auto leader_name = std::make_shared<std::string>();
  auto leader_json = std::make_shared<bool>(false);
  auto* ld = app.add_subcommand("leader", "Print the leader of election NAME: value, fence, holder, time left");
  ld->add_option("--name", *leader_name, "Election name")->required();
  ld->add_flag("--json", *leader_json, "Print a JSON object (null when nobody leads)");
  reg.add(ld, [&g, leader_name, leader_json] { return run_leader(g, *leader_name, *leader_json); });

  auto json = std::make_shared<bool>(false);
  auto* ls = app.add_subcommand(
      "locks", "List the locks: holder, holds, fencing token, mode (readers, permits), time to expiry");
  ls->add_flag("--json", *json, "Print a JSON array of objects");
  reg.add(ls, [&g, json] { return run_locks(g, *json); });
}

void remember_inherited_descriptors() {
  for_each_descriptor([](int fd) { inherited_descriptors().insert(fd); });
}

}  // namespace dblock::cli
