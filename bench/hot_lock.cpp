// bench/hot_lock.cpp — one hot lock, N contender PROCESSES (as separate machines would
// be: no in-process hand-off helps them). Each contender loops until the round ends:
//   t0; take the lock; wait = now - t0; hold it hold_ms (exactly: hold_until); release;
//   think think_ms
// in one of four modes, their order rotated round by round:
//   naive   try_acquire() (dblock's own acquire statement) and sleep 1 ms until granted:
//           the polling loop people write by hand, over the same SQL;
//   dblock  session::acquire(name, wait): backoff with full jitter, capped by the holder's
//           expiry, woken by LISTEN/NOTIFY on PostgreSQL;
//   floor   not a lock design but the least any strict line with durable grants can do: the
//           line lives in shared memory (a process-shared mutex, a ring of contender
//           indexes, one semaphore per contender), and the release itself writes the next
//           holder's grant (raw_client::write_grant of bench/twins.hpp, one durable
//           autocommit upsert, the statement the physical limit times) before it wakes that
//           holder's semaphore. No notice, no polling, no waiter's round trip: a hand-off
//           costs the grant's commit and a semaphore wake-up. Its grants cycle through 64
//           names with a 1 ms TTL, so each write takes over an expired row of the same
//           table dblock uses.
//   threads the dblock mode's loop, but the N contenders are threads of ONE process, each
//           with its own dblock::database (connection) and session: a service whose
//           threads contend for one lock. A release there answers with the grant it
//           made, and the head, a thread of the same process, holds from that answer
//           without a statement (docs/locks.md, waiting). Reported apart, no target.
// A round runs hot_warmup seconds before its measured window of hot_seconds: the steady
// state is measured, not the start, where every process opens its connections at once
// (a wait-line connection costs 16-57 ms here; in a 4 s window those first waits alone
// would be the p99). The start is reported on its own: the slowest first wait.
// Reported per mode: acquisitions per second (grants inside the window), p99 of their
// wait, fairness = most successful contender's grants / least successful's, the hand-off
// (median time from a release's return to the return of the next grant, when its contender
// was already waiting; the clock is CLOCK_MONOTONIC, shared by the processes), the hold
// and release (median time from a grant's return to that holder's release returning: the
// sleep, which overshoots hold_ms, plus the release's commit), and the slowest first wait.
// The physical limit of a hot lock: a hand-off needs at least the hold, one durable commit
// and one round trip, so no design passes limit = 1 / (hold + commit + round trip) grants
// per second. Commit + round trip is measured in the same run, per database, as the median
// of raw_client::write_grant (one durable autocommit upsert, bench/twins.hpp);
// hot_lock_vs_limit reports dblock's throughput against it.
// The holder alone already spends part of that cycle: a lock cannot change hands more
// often than its holders hold and release it, so 1 / (the naive loop's hold and release)
// is the ceiling of any hand-off design, one that handed over in zero time. The naive loop
// holds and releases with the least client work, so its figure is the one taken;
// hot_lock_ceiling_vs_limit reports that ceiling against the same limit (no target: it
// says how close to the limit any design could get on this machine, in this run).
// hot_lock_floor_vs_limit and hot_lock_floor_p99_wait report the floor mode's throughput
// against the same limit and its p99 wait (no targets): where even the floor misses a
// target, no design whose grants are durable and in line meets it on this machine.
// Contenders are this binary (`dblock_bench contend`), started with posix_spawn; the URL
// goes through the environment (DBLOCK_BENCH_URL), never argv (it holds a password).
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "bench.hpp"
#include "procs.hpp"
#include "twins.hpp"
#include "dblock/dblock.hpp"

extern char** environ;

namespace dblock_bench {

child spawn_child(const std::string& url, const std::vector<std::string>& args_in) {
  int to_child[2], from_child[2];
  if (pipe(to_child) != 0 || pipe(from_child) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
  for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) posix_spawn_file_actions_addclose(&fa, fd);
  // Nothing else of ours: Connector/C++ sockets are not close-on-exec, and a child holding
  // the bench's connections would show them as its own.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  std::vector<std::string> args{"dblock_bench"};
  args.insert(args.end(), args_in.begin(), args_in.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "DBLOCK_BENCH_URL=", 17) != 0) env_s.emplace_back(*e);
  env_s.push_back("DBLOCK_BENCH_URL=" + url);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  child c;
  const int rc = posix_spawn(&c.pid, "/proc/self/exe", &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(to_child[0]);
  close(from_child[1]);
  if (rc != 0) {
    close(to_child[1]);
    close(from_child[0]);
    throw std::runtime_error(std::string("posix_spawn failed: ") + std::strerror(rc));
  }
  c.in = fdopen(to_child[1], "w");
  c.out = fdopen(from_child[0], "r");
  return c;
}

std::string read_line(FILE* f) {
  std::string s;
  int ch;
  while ((ch = std::fgetc(f)) != EOF && ch != '\n') s += static_cast<char>(ch);
  return s;
}

std::pair<bench_clock::time_point, bench_clock::time_point> ready_then_window() {
  std::cout << "ready" << std::endl;
  std::string go;
  long long from_us = 0, end_us = 0;
  std::cin >> go >> from_us >> end_us;
  return {bench_clock::time_point{std::chrono::microseconds(from_us)},
          bench_clock::time_point{std::chrono::microseconds(end_us)}};
}

bool reap_child(child& c) {
  if (c.in) std::fclose(c.in);
  if (c.out) std::fclose(c.out);
  c.in = c.out = nullptr;
  int status = 0;
  if (c.pid > 0) waitpid(c.pid, &status, 0);
  c.pid = -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

namespace {

// The floor mode's line, in a POSIX shared memory object every contender of the round maps.
constexpr int max_floor_contenders = 64;
struct floor_line {
  pthread_mutex_t mu;  // process-shared; guards everything below but the semaphores
  int holder;          // contender index, -1 = free
  int head, count;     // the waiting contenders, oldest first, in ring[]
  int ring[max_floor_contenders];
  long long writes;  // grants written, to pick the next of the 64 names
  sem_t wake[max_floor_contenders];
};

// Creates and maps the line (the parent, before it spawns a floor round) or maps an
// existing one (a contender). Throws on failure.
floor_line* map_floor_line(const std::string& shm_name, bool create) {
  const int fd = shm_open(shm_name.c_str(), create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
  if (fd < 0) throw std::runtime_error("shm_open " + shm_name + ": " + std::strerror(errno));
  if (create && ftruncate(fd, sizeof(floor_line)) != 0) {
    close(fd);
    throw std::runtime_error("ftruncate " + shm_name + ": " + std::strerror(errno));
  }
  void* p = mmap(nullptr, sizeof(floor_line), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) throw std::runtime_error("mmap " + shm_name + ": " + std::strerror(errno));
  auto* line = static_cast<floor_line*>(p);
  if (create) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    // Robust: a contender that dies holding it (a failed write) fails the next locker
    // instead of blocking it for good.
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&line->mu, &a);
    pthread_mutexattr_destroy(&a);
    line->holder = -1;
    line->head = line->count = 0;
    line->writes = 0;
    for (auto& w : line->wake) sem_init(&w, 1, 0);
  }
  return line;
}

// Locks the floor line's mutex; throws when a contender died holding it.
void lock_line(floor_line* line) {
  const int rc = pthread_mutex_lock(&line->mu);
  if (rc == EOWNERDEAD) {
    pthread_mutex_consistent(&line->mu);
    pthread_mutex_unlock(&line->mu);
    throw std::runtime_error("another floor contender died holding the line");
  }
  if (rc != 0) throw std::runtime_error(std::string("pthread_mutex_lock: ") + std::strerror(rc));
}

// index: the floor contender's place (0-63); in the threads mode, how many threads.
child spawn_contender(const std::string& url, const std::string& mode, const std::string& name, int hold_ms,
                      int think_ms, int max_backoff_ms, const std::string& shm_name, int index) {
  return spawn_child(url, {"contend", "--mode", mode, "--name", name, "--hold-ms", std::to_string(hold_ms),
                           "--think-ms", std::to_string(think_ms), "--max-backoff-ms",
                           std::to_string(max_backoff_ms), "--shm", shm_name, "--index", std::to_string(index)});
}

struct round_result {
  double throughput = 0;                  // grants per second
  double p99 = 0, p50 = 0, max_wait = 0;  // ms
  double fairness = 0;                    // max grants / min grants
  double handoff = 0;                     // us, median release return -> next grant return
  double hold_release = 0;                // us, median grant return -> its release's return
  double first_wait = 0;                  // ms, the slowest contender's first wait (cold start)
  std::vector<int> grants;
  int timeouts = 0;
};

round_result run_round(const combo& c, const std::string& mode, const options& o, int contenders, double warmup,
                       double seconds, const std::string& name, int round) {
  std::string shm_name = "-";
  floor_line* line = nullptr;
  if (mode == "floor") {
    if (contenders > max_floor_contenders) throw std::runtime_error("the floor mode takes at most 64 contenders");
    shm_name = "/dblock_bench_hot_" + std::to_string(getpid()) + "_" + std::to_string(round);
    line = map_floor_line(shm_name, true);
  }
  struct unmap {
    floor_line* line;
    std::string shm;
    ~unmap() {
      if (!line) return;
      munmap(line, sizeof(floor_line));
      shm_unlink(shm.c_str());
    }
  } unmap_line{line, shm_name};
  std::vector<child> kids;
  // The threads mode: one process, `contenders` threads, one result line each.
  const bool threads = mode == "threads";
  const int lines_per_kid = threads ? contenders : 1;
  if (threads)
    kids.push_back(spawn_contender(c.url, mode, name, o.hold_ms, o.think_ms, o.max_backoff_ms, shm_name, contenders));
  else
    for (int i = 0; i < contenders; ++i)
      kids.push_back(spawn_contender(c.url, mode, name, o.hold_ms, o.think_ms, o.max_backoff_ms, shm_name, i));
  bool ok = true;
  for (auto& k : kids)
    if (read_line(k.out) != "ready") ok = false;
  // One window for all (steady_clock is CLOCK_MONOTONIC: the same in every process).
  const auto from = bench_clock::now() + std::chrono::duration_cast<bench_clock::duration>(
                                             std::chrono::duration<double>(ok ? warmup : 0.0));
  const auto end =
      from + std::chrono::duration_cast<bench_clock::duration>(std::chrono::duration<double>(ok ? seconds : 0.0));
  for (auto& k : kids) {
    std::fprintf(k.in, "go %lld %lld\n", static_cast<long long>(mono_us(from)), static_cast<long long>(mono_us(end)));
    std::fflush(k.in);
  }
  round_result r;
  std::vector<double> waits, firsts;
  struct grant_at {
    long long granted, released;  // us
    double asked;                 // us
    std::size_t contender;
    bool operator<(const grant_at& o) const { return granted < o.granted; }
  };
  std::vector<grant_at> grants_at;
  std::size_t contender = 0;  // across kids: the threads mode's threads are contenders too
  for (auto& k : kids) {
    for (int li = 0; li < lines_per_kid; ++li, ++contender) {
      std::istringstream line(read_line(k.out));
      std::string tag;
      int grants = 0, timeouts = 0;
      double first = 0;
      line >> tag >> grants >> timeouts >> first;
      if (tag != "result") {
        ok = false;
        break;
      }
      r.grants.push_back(grants);
      r.timeouts += timeouts;
      firsts.push_back(first);
      double w;
      long long g, rel;
      while (line >> w >> g >> rel) {
        waits.push_back(w);
        grants_at.push_back({g, rel, static_cast<double>(g) - w * 1000, contender});
      }
    }
    if (!reap_child(k)) ok = false;
  }
  if (!ok) throw std::runtime_error(c.name + ": a " + mode + " contender failed (see its stderr)");
  int total = 0;
  for (int g : r.grants) total += g;
  r.throughput = total / seconds;
  r.p99 = percentile(waits, 99);
  r.p50 = percentile(waits, 50);
  r.max_wait = waits.empty() ? 0 : *std::max_element(waits.begin(), waits.end());
  r.first_wait = firsts.empty() ? 0 : *std::max_element(firsts.begin(), firsts.end());
  std::sort(grants_at.begin(), grants_at.end());
  std::vector<double> handoffs;
  for (std::size_t i = 1; i < grants_at.size(); ++i)  // only where the next one was already waiting
    if (grants_at[i].asked < static_cast<double>(grants_at[i - 1].released))
      handoffs.push_back(static_cast<double>(grants_at[i].granted - grants_at[i - 1].released));
  r.handoff = percentile(handoffs, 50);
  std::vector<double> holds;
  for (const auto& g : grants_at) holds.push_back(static_cast<double>(g.released - g.granted));
  r.hold_release = percentile(holds, 50);
  if (!o.hot_trace.empty()) {
    // Every measured grant, for analysis (docs/performance.md, Hot lock): CLOCK_MONOTONIC
    // microseconds, and the offset that turns them into UTC (to compare with server logs).
    std::filesystem::create_directories(o.hot_trace);
    const auto file = o.hot_trace / (c.name + "-" + mode + "-" + std::to_string(round) + ".csv");
    std::ofstream t(file);
    const auto wall = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
    t << "# utc_us = monotonic_us + " << (wall - mono_us(bench_clock::now())) << "\n";
    t << "contender,asked_us,granted_us,released_us\n";
    for (const auto& g : grants_at)
      t << g.contender << ',' << static_cast<long long>(g.asked) << ',' << g.granted << ',' << g.released << '\n';
  }
  if (r.grants.empty()) throw std::runtime_error(c.name + ": a " + mode + " round reported no contender");
  const int lo = *std::min_element(r.grants.begin(), r.grants.end());
  const int hi = *std::max_element(r.grants.begin(), r.grants.end());
  r.fairness = lo == 0 ? static_cast<double>(hi) : static_cast<double>(hi) / lo;
  return r;
}

// Median of one durable commit + round trip (write_grant of a free name; its release is
// not timed), in ms.
double commit_and_round_trip_ms(const combo& c, int samples) {
  auto raw = connect_raw(c.url);
  const std::string owner = random_hex(16);
  std::vector<double> ms;
  for (int i = 0; i < samples; ++i) {
    const std::string name = "bench:limit:" + std::to_string(i % 8);
    const auto t0 = bench_clock::now();
    const bool granted = raw->write_grant(name, owner, 60'000);
    ms.push_back(std::chrono::duration<double, std::milli>(bench_clock::now() - t0).count());
    if (granted) (void)raw->release(name, owner);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::string grants_text(const std::vector<int>& g) {
  std::string s;
  for (int x : g) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}

}  // namespace

void run_hot_lock(const options& o, const std::vector<combo>& combos, report& rep) {
  const bool tiny = o.size == size_kind::tiny;
  const int n = tiny ? 2 : o.contenders;
  const double seconds = tiny ? 0.5 : o.hot_seconds;
  const double warmup = tiny ? 0.2 : o.hot_warmup;
  const int rounds = tiny ? 1 : o.hot_rounds;
  note("hot lock: " + std::to_string(n) + " contender processes, hold " + std::to_string(o.hold_ms) + " ms, think " +
       std::to_string(o.think_ms) + " ms, " + std::to_string(rounds) + " rounds x (" + std::to_string(warmup) +
       " s warm-up + " + std::to_string(seconds) + " s measured) per mode" +
       (o.max_backoff_ms > 0 ? ", max_backoff " + std::to_string(o.max_backoff_ms) + " ms" : ""));
  for (const auto& c : combos) {
    std::vector<round_result> naive, smart, floor, threads;
    std::vector<double> limits;  // grants/s, measured before each round
    // What any design would reach with a zero-time hand-off: one grant per hold and release.
    auto ceiling = [](const round_result& r) { return r.hold_release > 0 ? 1e6 / r.hold_release : 0.0; };
    for (int i = 0; i < rounds; ++i) {
      const double commit_rtt = commit_and_round_trip_ms(c, tiny ? 20 : 200);
      limits.push_back(1000.0 / (o.hold_ms + commit_rtt));
      note("  " + c.name + " round " + std::to_string(i + 1) + " physical limit: " + std::to_string(limits.back()) +
           " grants/s (hold " + std::to_string(o.hold_ms) + " ms + commit and round trip " +
           std::to_string(commit_rtt) + " ms)");
      // Rotate which mode goes first, so drift on the machine does not favour one.
      static const char* const modes[] = {"naive", "dblock", "floor", "threads"};
      for (int m = 0; m < 4; ++m) {
        const std::string mode = modes[(m + i) % 4];
        const bool dblock_mode = mode == "dblock";
        auto r = run_round(c, mode, o, n, warmup, seconds, "bench:hot", i + 1);
        note("  " + c.name + " round " + std::to_string(i + 1) + " " + (mode == "naive" ? "naive " : mode) + ": " +
             std::to_string(r.throughput) + " acq/s, wait p50 " + std::to_string(r.p50) + " ms p99 " +
             std::to_string(r.p99) + " ms max " + std::to_string(r.max_wait) + " ms, hand-off " +
             std::to_string(r.handoff) + " us, hold and release " + std::to_string(r.hold_release) + " us" +
             (mode != "naive" ? std::string()
                              : " (ceiling " + std::to_string(ceiling(r)) + " grants/s = " +
                                std::to_string(ceiling(r) / limits.back()) + "x the limit)") +
             ", first wait " + std::to_string(r.first_wait) + " ms, grants " +
             grants_text(r.grants) +
             (r.timeouts ? ", timeouts " + std::to_string(r.timeouts) : ""));
        if (r.timeouts) rep.fail(c.name + ": hot lock: " + std::to_string(r.timeouts) + " acquire timeouts");
        (dblock_mode ? smart : mode == "naive" ? naive : mode == "floor" ? floor : threads).push_back(r);
      }
    }
    auto emit = [&](const std::string& metric, const std::string& unit, auto field) {
      std::vector<double> v, f;
      for (std::size_t i = 0; i < smart.size(); ++i) {
        v.push_back(field(smart[i]));
        f.push_back(field(naive[i]));
      }
      rep.add(per_round_result(metric, c.name, unit, "the naive 1 ms polling loop over the same SQL, same round count",
                               v, f));
    };
    emit("hot_lock_throughput", "acq/s", [](const round_result& r) { return r.throughput; });
    {
      // Grants/s of one mode's rounds against the limits measured before them.
      auto against_limit = [&](const char* metric, const std::vector<double>& values, const char* note_text) {
        auto r = per_round_result(metric, c.name, "acq/s",
                                  "the physical limit 1 / (hold + commit + round trip), measured before each round",
                                  values, limits);
        if (note_text) r.note = note_text;
        rep.add(std::move(r));
      };
      std::vector<double> v;
      for (const auto& r : smart) v.push_back(r.throughput);
      against_limit("hot_lock_vs_limit", v, nullptr);
      std::vector<double> ceilings, f;
      for (const auto& r : naive) ceilings.push_back(ceiling(r));
      against_limit("hot_lock_ceiling_vs_limit", ceilings,
                    "value: 1 / the naive loop's median hold and release, the grants/s of a zero-time hand-off; "
                    "no target");
      for (const auto& r : floor) f.push_back(r.throughput);
      against_limit("hot_lock_floor_vs_limit", f,
                    "value: the floor mode's grants/s (a line in shared memory, the grant written by the release); "
                    "no target");
      std::vector<double> fp, dp;
      for (std::size_t i = 0; i < floor.size() && i < smart.size(); ++i) {
        fp.push_back(floor[i].p99);
        dp.push_back(smart[i].p99);
      }
      auto floor_p99 = per_round_result("hot_lock_floor_p99_wait", c.name, "ms", "dblock's p99 wait, same round", fp,
                                        dp);
      floor_p99.note = "value: the floor mode's p99 wait; no target";
      rep.add(std::move(floor_p99));
      // The same contenders as threads of one process (same rounds, same limits).
      std::vector<double> t, tp, th, dh;
      for (const auto& r : threads) t.push_back(r.throughput);
      against_limit("hot_lock_threads_vs_limit", t,
                    "value: grants/s of the contenders as threads of one process (each with its own connection and "
                    "session); no target");
      for (std::size_t i = 0; i < threads.size() && i < smart.size(); ++i) {
        tp.push_back(threads[i].p99);
        th.push_back(threads[i].handoff);
        dh.push_back(smart[i].handoff);
      }
      auto threads_p99 =
          per_round_result("hot_lock_threads_p99_wait", c.name, "ms", "dblock's p99 wait, same round", tp, dp);
      threads_p99.note = "value: the threads mode's p99 wait; no target";
      rep.add(std::move(threads_p99));
      auto threads_handoff =
          per_round_result("hot_lock_threads_handoff", c.name, "us", "dblock's hand-off, same round", th, dh);
      threads_handoff.note = "value: the threads mode's hand-off (release return to the next grant's return); no target";
      rep.add(std::move(threads_handoff));
    }
    emit("hot_lock_p99_wait", "ms", [](const round_result& r) { return r.p99; });
    emit("hot_lock_fairness", "x", [](const round_result& r) { return r.fairness; });
    emit("hot_lock_handoff", "us", [](const round_result& r) { return r.handoff; });
    emit("hot_lock_hold_release", "us", [](const round_result& r) { return r.hold_release; });
    emit("hot_lock_first_wait", "ms", [](const round_result& r) { return r.first_wait; });
  }
}

// ------------------------------------------------------------------ the contender process

namespace {

struct measured_grant {
  double wait_ms;
  long long granted_us, released_us;
};

// The contender's one line to the parent: "result GRANTS TIMEOUTS FIRST_WAIT_MS" and then
// "WAIT_MS GRANTED_US RELEASED_US" per measured grant.
void print_result(int grants, int timeouts, double first_wait, const std::vector<measured_grant>& measured) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "result %d %d %.3f", grants, timeouts, std::max(first_wait, 0.0));
  std::cout << buf;
  for (const auto& g : measured) {
    std::snprintf(buf, sizeof buf, " %.3f %lld %lld", g.wait_ms, g.granted_us, g.released_us);
    std::cout << buf;
  }
  std::cout << std::endl;
}

// Holds the lock from `granted` for exactly `hold`. sleep_for alone overshoots by the timer
// slack and the wake-up (a 1 ms sleep took about 1,090 us on the 2-CPU test VM): time the
// physical limit does not count and that every mode would pay. So the hold sleeps to
// hold_margin before its end and waits out the rest on the clock (a spin of about 60 us).
constexpr auto hold_margin = std::chrono::microseconds(150);
void hold_until(bench_clock::time_point granted, std::chrono::milliseconds hold) {
  const auto until = granted + hold;
  if (hold > hold_margin) std::this_thread::sleep_until(until - hold_margin);
  while (bench_clock::now() < until) {
  }
}

// The loop every contender runs until the round ends: take the lock (false: it timed out,
// counted and tried again), hold it hold_ms, release it, think think_ms; then the result
// line (printed under print_mu: the threads mode's threads share stdout).
std::mutex print_mu;
template <class Take, class Release>
void contend_in(bench_clock::time_point from, bench_clock::time_point end, int hold_ms, int think_ms, Take take,
                Release release) {
  std::vector<measured_grant> measured;
  double first_wait = -1;
  int grants = 0, timeouts = 0;
  while (bench_clock::now() < end) {
    const auto t0 = bench_clock::now();
    if (!take()) {
      ++timeouts;
      continue;
    }
    const auto granted = bench_clock::now();
    const double wait_ms = std::chrono::duration<double, std::milli>(granted - t0).count();
    if (first_wait < 0) first_wait = wait_ms;
    if (hold_ms > 0) hold_until(granted, std::chrono::milliseconds(hold_ms));
    release();
    if (granted >= from && granted <= end) {
      ++grants;
      measured.push_back({wait_ms, mono_us(granted), mono_us(bench_clock::now())});
    }
    if (think_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(think_ms));
  }
  std::lock_guard l(print_mu);
  print_result(grants, timeouts, first_wait, measured);
}

// contend_in() for one contender process: call it after the connections are open; it says
// "ready" first and waits for the round's window.
template <class Take, class Release>
void contend(int hold_ms, int think_ms, Take take, Release release) {
  const auto [from, end] = ready_then_window();
  contend_in(from, end, hold_ms, think_ms, take, release);
}

// A dblock waiter's take: session::acquire with a 10 s bound (false: it timed out).
bool acquire_into(dblock::session& s, const std::string& name, std::optional<dblock::lease>& l) {
  try {
    l = s.acquire(name, std::chrono::seconds(10));
  } catch (const dblock::timeout_error&) {
    return false;
  }
  return true;
}

// The threads mode: `n` threads of this process, each with its own database handle
// (connection) and session, run the dblock mode's loop in one window; one result line each.
void threads_contender(const std::string& url, const std::string& name, int n, int hold_ms, int think_ms,
                       int max_backoff_ms) {
  struct seat {
    dblock::database db;
    std::unique_ptr<dblock::session> s;
    std::optional<dblock::lease> l;
  };
  dblock::session_options so;
  if (max_backoff_ms > 0) so.max_backoff = std::chrono::milliseconds(max_backoff_ms);
  std::vector<std::unique_ptr<seat>> seats;
  for (int i = 0; i < n; ++i) {
    auto st = std::make_unique<seat>(seat{dblock::open(url), nullptr, std::nullopt});
    st->s = std::make_unique<dblock::session>(st->db, so);
    st->db.ping();
    seats.push_back(std::move(st));
  }
  const auto [from, end] = ready_then_window();
  std::vector<std::thread> ts;
  std::atomic<bool> failed{false};
  for (auto& st : seats)
    ts.emplace_back([&, p = st.get()] {
      try {
        contend_in(
            from, end, hold_ms, think_ms, [&] { return acquire_into(*p->s, name, p->l); }, [&] { p->l->release(); });
      } catch (const std::exception& e) {
        std::lock_guard l(print_mu);
        std::cerr << "dblock_bench contend (threads): " << e.what() << "\n";
        failed = true;
      }
    });
  for (auto& t : ts) t.join();
  if (failed) throw std::runtime_error("a contender thread failed");  // contender_main says "failed"
}

// A contender of the floor mode (see the top of this file): joins the line in shared
// memory, and on release writes the next holder's grant, then wakes it.
void floor_contender(const std::string& url, const std::string& name, const std::string& shm_name, int me,
                     int hold_ms, int think_ms) {
  floor_line* line = map_floor_line(shm_name, false);
  auto raw = connect_raw(url);
  // One durable upsert per change of holder, on the next of 64 names (1 ms TTL: by the
  // time a name comes round again its row has expired and the upsert takes it over).
  auto grant_to = [&](long long k, int who) {
    const std::string owner = who < 0 ? std::string("bench:floor:free") : "bench:floor:" + std::to_string(who);
    if (!raw->write_grant(name + ":floor:" + std::to_string(k % 64), owner, 1))
      throw std::runtime_error("a grant write of the floor mode was refused (name " + name + ":floor:" +
                               std::to_string(k % 64) + " still live)");
  };
  raw->select1();
  auto take = [&] {
    lock_line(line);
    long long k = -1;
    if (line->holder < 0) {
      line->holder = me;
      k = line->writes++;
    } else {
      line->ring[(line->head + line->count) % max_floor_contenders] = me;
      ++line->count;
    }
    pthread_mutex_unlock(&line->mu);
    if (k >= 0) {
      grant_to(k, me);
      return true;
    }
    timespec deadline{};
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    int rc;
    while ((rc = sem_timedwait(&line->wake[me], &deadline)) != 0 && errno == EINTR) {
    }
    // Still in the ring: a later release would hand it a grant nobody takes.
    if (rc != 0) throw std::runtime_error("no hand-off within 10 s");
    return true;
  };
  auto release = [&] {
    lock_line(line);
    if (line->count > 0) {
      const int next = line->ring[line->head];
      line->head = (line->head + 1) % max_floor_contenders;
      --line->count;
      line->holder = next;
      const long long k = line->writes++;
      pthread_mutex_unlock(&line->mu);
      grant_to(k, next);
      sem_post(&line->wake[next]);
      return;
    }
    // Freeing is a durable write too; under the mutex, so a newcomer's grant lands after it.
    const long long k = line->writes++;
    try {
      grant_to(k, -1);
    } catch (...) {
      pthread_mutex_unlock(&line->mu);
      throw;
    }
    line->holder = -1;
    pthread_mutex_unlock(&line->mu);
  };
  contend(hold_ms, think_ms, take, release);
}

}  // namespace

int contender_main(int argc, char** argv) {
  std::string mode, name, shm_name;
  int hold_ms = 0, think_ms = 0, max_backoff_ms = 0, index = -1;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--mode")
      mode = v;
    else if (k == "--name")
      name = v;
    else if (k == "--hold-ms")
      hold_ms = std::stoi(v);
    else if (k == "--think-ms")
      think_ms = std::stoi(v);
    else if (k == "--max-backoff-ms")
      max_backoff_ms = std::stoi(v);
    else if (k == "--shm")
      shm_name = v;
    else if (k == "--index")
      index = std::stoi(v);
  }
  const char* url = std::getenv("DBLOCK_BENCH_URL");
  const bool floor_mode = mode == "floor";
  const bool threads_mode = mode == "threads";
  if (!url || (mode != "naive" && mode != "dblock" && !floor_mode && !threads_mode) || name.empty() ||
      (floor_mode && (index < 0 || index >= max_floor_contenders)) || (threads_mode && (index < 1 || index > 256))) {
    std::cerr << "dblock_bench contend: needs DBLOCK_BENCH_URL, --mode naive|dblock|floor|threads, --name NAME "
                 "(floor: --shm NAME --index 0-63; threads: --index THREADS, 1-256)\n";
    return 64;
  }
  try {
    if (floor_mode) {
      floor_contender(url, name, shm_name, index, hold_ms, think_ms);
      return 0;
    }
    if (threads_mode) {
      threads_contender(url, name, index, hold_ms, think_ms, max_backoff_ms);
      return 0;
    }
    auto db = dblock::open(url);
    dblock::session_options so;
    if (max_backoff_ms > 0) so.max_backoff = std::chrono::milliseconds(max_backoff_ms);
    dblock::session s(db, so);
    db.ping();
    std::optional<dblock::lease> l;
    auto take = [&] {
      if (mode == "dblock") return acquire_into(s, name, l);
      const auto t0 = bench_clock::now();
      while (!(l = s.try_acquire(name))) {
        if (bench_clock::now() - t0 > std::chrono::seconds(10)) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return true;
    };
    contend(hold_ms, think_ms, take, [&] { l->release(); });
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "dblock_bench contend (" << mode << "): " << e.what() << "\n";
    std::cout << "failed" << std::endl;
    return 1;
  }
}

}  // namespace dblock_bench
