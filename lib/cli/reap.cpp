// lib/cli/reap.cpp — `dblock reap [--once] [--interval DUR] [--grace DUR] [--batch N]
// [--duty-cycle X] [--async-commit BOOL] [--single-active]`:
// runs the reaper from the command line and prints what it removed (one line per pass
// that removed something; --once: one pass, one line). SIGINT/SIGTERM stop it cleanly.
#include <signal.h>

#include <iostream>

#include "cli/commands.hpp"
#include "dblock/reaper.hpp"
#include "dblock/util.hpp"

namespace dblock::cli {

namespace {

struct reap_args {
  bool once = false;
  std::string interval = "10s";
  std::string grace = "5s";
  int batch = 1000;
  double duty_cycle = reaper_options{}.duty_cycle;
  bool async_commit = reaper_options{}.async_commit;
  bool single_active = false;
};

void print(const reap_report& r) {
  std::cout << "reaped " << r.locks << " lock rows, " << r.waiters << " wait-line tickets, " << r.idempotency
            << " idempotency records, " << r.holders << " read-write/semaphore holds in " << r.took.count() << " ms"
            << std::endl;
}

int run_reap(const global_options& g, const reap_args& a) {
  reaper_options o;
  o.interval = parse_duration(a.interval);
  o.grace = parse_duration(a.grace);
  o.batch_size = a.batch;
  o.duty_cycle = a.duty_cycle;
  o.async_commit = a.async_commit;
  o.single_active = a.single_active;
  if (a.once) {
    auto db = connect(g);
    reaper r(db, o);
    print(r.run_once());
    return exit_ok;
  }
  sigset_t stop_signals, previous;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);  // before any thread starts
  auto db = connect(g);
  o.on_pass = [](const reap_report& r) {
    if (r.locks || r.waiters || r.idempotency || r.holders) print(r);
  };
  o.on_error = [](const error& e) { std::cerr << "dblock: reaper pass failed (will retry): " << e.what() << std::endl; };
  reaper r(db, o);
  r.start();
  int sig = 0;
  sigwait(&stop_signals, &sig);
  r.stop();
  return exit_ok;
}

}  // namespace

void add_reap_commands(CLI::App& app, global_options& g, command_registry& reg) {
  auto a = std::make_shared<reap_args>();
  auto* sub = app.add_subcommand("reap", "Delete expired lock rows and idempotency records (until SIGINT/SIGTERM)");
  sub->add_flag("--once", a->once, "One pass, then exit");
  sub->add_option("--interval", a->interval, "Time between passes (jittered +/-20%)")->capture_default_str();
  sub->add_option("--grace", a->grace, "Reap lock rows only once expired for this long")->capture_default_str();
  sub->add_option("--batch", a->batch, "Rows per DELETE statement")->capture_default_str()->check(CLI::Range(1, 100000));
  sub->add_option("--duty-cycle", a->duty_cycle,
                  "Share of a pass spent in DELETEs, (0, 1]; 1 = no rest between batches (a backlog)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1.0));
  sub->add_option("--async-commit", a->async_commit,
                  "PostgreSQL and SQLite: commit each batch without waiting for its WAL flush (true/false)")
      ->capture_default_str();
  sub->add_flag("--single-active", a->single_active, "Only one reaper across all processes (session lock)");
  reg.add(sub, [&g, a] { return run_reap(g, *a); });
}

}  // namespace dblock::cli
