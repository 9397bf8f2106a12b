// bench/renew.cpp — renewal of 1,000 locks held by one session: how many statements the
// watchdog sends per renewal period. The session runs on an ATTACHED connection
// (dblock::attach on the plain client's connection), where the watchdog shares the
// connection, so database::round_trips() counts its renewals; the renewal passes are
// counted by dblock's own metrics (counter::lock_renewals). Snapshots are taken just after
// a pass completes (the watchdog then sleeps a whole period), so none is cut in half.
#include <atomic>
#include <stdexcept>
#include <thread>

#include "bench.hpp"
#include "dblock/dblock.hpp"
#include "twins.hpp"

namespace dblock_bench {
namespace {

std::uint64_t renewals() { return dblock::metrics()[dblock::counter::lock_renewals]; }

// Waits until the next renewal pass has completed; false after `limit`.
bool await_renewal(std::chrono::milliseconds limit) {
  const auto n0 = renewals();
  const auto until = bench_clock::now() + limit;
  while (renewals() == n0) {
    if (bench_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return true;
}

}  // namespace

void run_renewal(const options& o, const std::vector<combo>& combos, report& rep) {
  const bool tiny = o.size == size_kind::tiny;
  const int locks = tiny ? 20 : o.renew_locks;
  const auto ttl = std::chrono::milliseconds(tiny ? 300 : 1500);  // renewal every ttl / 3
  const int passes = tiny ? 2 : 8;
  note("renewal: " + std::to_string(locks) + " locks in one session, TTL " + std::to_string(ttl.count()) + " ms, " +
       std::to_string(passes) + " renewal passes counted");
  for (const auto& c : combos) {
    auto raw = connect_raw(c.url, /*found_rows=*/true);
    auto db = raw->attach();
    std::atomic<int> lost{0};
    dblock::session_options so;
    so.ttl = ttl;
    so.listen = false;
    so.on_lost = [&](const dblock::lost_lease&) { ++lost; };
    std::vector<dblock::lease> held;
    {
      dblock::session s(db, so);
      const auto t_acq = bench_clock::now();
      const auto rt_acq = db.round_trips();
      for (int i = 0; i < locks; ++i) {
        auto l = s.try_acquire("bench:renew:" + std::to_string(i));
        if (!l) throw std::runtime_error(c.name + ": renewal set-up: lock " + std::to_string(i) + " not acquired");
        held.push_back(std::move(*l));
      }
      note("  " + c.name + ": " + std::to_string(locks) + " locks acquired in " + std::to_string(ms_since(t_acq)) +
           " ms, " + std::to_string(db.round_trips() - rt_acq) + " statements");
      // One pass first (statements get prepared), then count whole passes.
      if (!await_renewal(ttl * 3)) throw std::runtime_error(c.name + ": no renewal within 3 TTLs");
      const auto rt0 = db.round_trips();
      const auto n0 = renewals();
      const auto t0 = bench_clock::now();
      for (int i = 0; i < passes; ++i)
        if (!await_renewal(ttl * 3)) throw std::runtime_error(c.name + ": renewal stalled");
      const auto rt1 = db.round_trips();
      const auto n1 = renewals();
      const double elapsed = ms_since(t0);
      const double statements = static_cast<double>(rt1 - rt0) / static_cast<double>(n1 - n0);
      const double period = static_cast<double>(ttl.count()) / 3.0;
      note("  " + c.name + ": " + std::to_string(n1 - n0) + " passes in " + std::to_string(elapsed) + " ms (period " +
           std::to_string(period) + " ms), " + std::to_string(rt1 - rt0) + " statements");
      if (lost.load() != 0) rep.fail(c.name + ": renewal: " + std::to_string(lost.load()) + " leases reported lost");
      result r;
      r.metric = "renew_1000_statements";
      r.backend = c.name;
      r.value = statements;
      r.floor = 1;
      r.ratio = statements;
      r.unit = "statements";
      r.floor_is = "one statement per period for all " + std::to_string(locks) + " locks";
      r.note = std::to_string(n1 - n0) + " renewal passes of " + std::to_string(locks) + " locks";
      rep.add(std::move(r));
      for (auto& l : held) l.release();
      held.clear();
    }
  }
}

}  // namespace dblock_bench
