// bench/reaper_bench.cpp — the reaper on a busy table: the "big" database holds
// `live_rows` live locks; each round adds `expired_rows` rows expired an hour ago, then
//   base    a live client acquires and releases fresh names back to back (acquire timed)
//   reap    the same client keeps going while the expired rows are deleted — by
//           dblock::reaper::run_once() (batches of 1000 paced by the library's default
//           duty_cycle and async_commit unless --reap-duty / --reap-async-commit say
//           otherwise; its own connection), or, in the
//           alternate round, by the hand-written twin: a loop of
//           DELETE ... ORDER BY expires_at LIMIT 1000 (bench/twins.cpp)
//   base    again, so the baseline brackets the reaping in time.
// On PostgreSQL each fill is followed by a CHECKPOINT (the bench role holds pg_checkpoint,
// scripts/servers), so that no checkpoint the fill set off runs inside a measured window.
// Reported: rows deleted per second, and the live acquires' p99 during reaping against
// their p99 outside it.
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "bench.hpp"
#include "dblock/dblock.hpp"
#include "twins.hpp"

namespace dblock_bench {
namespace {

struct sample {
  bench_clock::time_point at;  // when the acquire was sent
  double ms;
};

// Acquires fresh names in a loop on its own session until stopped.
class live_client {
 public:
  explicit live_client(const std::string& url) : db_(dblock::open(url)) {
    dblock::session_options so;
    so.ttl = std::chrono::minutes(10);
    s_ = std::make_unique<dblock::session>(db_, so);
    run_ = random_hex(4);
    t_ = std::thread([this] { loop(); });
  }
  ~live_client() { stop(); }
  void stop() {
    stop_ = true;
    if (t_.joinable()) t_.join();
  }
  std::vector<sample> samples() {
    std::lock_guard l(mu_);
    return samples_;
  }
  std::string error() {
    std::lock_guard l(mu_);
    return error_;
  }

 private:
  void loop() {
    std::uint64_t i = 0;
    try {
      while (!stop_) {
        const auto name = "bench:live-acq:" + run_ + ":" + std::to_string(++i);
        const auto t0 = bench_clock::now();
        auto l = s_->try_acquire(name);
        const double ms = ms_since(t0);
        if (!l) throw std::runtime_error("live acquire of a fresh name was refused");
        l->release();
        std::lock_guard g(mu_);
        samples_.push_back({t0, ms});
      }
    } catch (const std::exception& e) {
      std::lock_guard g(mu_);
      error_ = e.what();
    }
  }
  dblock::database db_;
  std::unique_ptr<dblock::session> s_;
  std::string run_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<sample> samples_;
  std::string error_;
  std::thread t_;
};

struct round_result {
  double rows_per_s = 0;
  double p99_reap = 0, p99_base = 0;
  std::int64_t rows = 0;
  double took_ms = 0;
};

}  // namespace

void run_reaper(const options& o, const std::vector<combo>& combos, report& rep) {
  const bool tiny = o.size == size_kind::tiny;
  const int expired_default = tiny ? 2000 : o.expired_rows;
  const int rounds = tiny ? 1 : o.reap_rounds;
  const auto base = std::chrono::milliseconds(tiny ? 200 : 2000);
  dblock::reaper_options pacing;  // what the dblock rounds use (the twin is never paced)
  if (o.reap_duty >= 0) pacing.duty_cycle = o.reap_duty;
  if (o.reap_async >= 0) pacing.async_commit = o.reap_async != 0;
  note("reaper: " + std::to_string(expired_default) + " expired rows per round (SQLite " +
       std::to_string(tiny ? 2000 : o.expired_rows_sqlite) + ") among " + std::to_string(tiny ? 1000 : o.live_rows) +
       " live ones, batches of " + std::to_string(o.reap_batch) + ", " + std::to_string(rounds) +
       " rounds per reaper; dblock's pacing: duty_cycle " + std::to_string(pacing.duty_cycle) +
       ", async_commit " + (pacing.async_commit ? "on" : "off"));
  for (const auto& c : combos) {
    auto setup = connect_raw(c.big_url);
    const int expired = c.kind == dblock::dialect::sqlite && !tiny ? o.expired_rows_sqlite : expired_default;
    std::vector<round_result> smart, raw_rounds;
    int seq = 0;
    bool checkpoint = true;
    for (int i = 0; i < rounds; ++i) {
      for (int m = 0; m < 2; ++m) {
        const bool dblock_mode = (m == 0) == (i % 2 == 0);
        insert_lock_rows(*setup, c.kind, "bench:exp:" + std::to_string(++seq) + ":", expired, -3600);
        // PostgreSQL: the fill wrote some 50 MB of WAL. Left alone, the checkpoint it sets off
        // runs for tens of seconds inside whichever window comes next: checkpoint now, so every
        // round starts from the same state. A server of --use-env whose bench role may not
        // checkpoint (no pg_checkpoint) runs the part without it, said once.
        if (c.kind == dblock::dialect::postgresql && checkpoint) {
          try {
            setup->exec("CHECKPOINT");
          } catch (const std::exception& e) {
            checkpoint = false;
            note("reaper: " + c.name + ": no CHECKPOINT after the fills (" + e.what() + ")");
          }
        }
        live_client live(c.big_url);
        std::this_thread::sleep_for(base);
        round_result r;
        // Connections are made before the clock starts.
        dblock::reaper_options ro;
        ro.reap_idempotency = false;
        ro.batch_size = o.reap_batch;
        ro.duty_cycle = pacing.duty_cycle;
        ro.async_commit = pacing.async_commit;
        std::optional<dblock::reaper> reaper;
        std::unique_ptr<raw_client> twin;
        if (dblock_mode)
          reaper.emplace(dblock::open(c.big_url), ro);
        else
          twin = connect_raw(c.big_url);
        const auto t0 = bench_clock::now();
        if (dblock_mode) {
          r.rows = static_cast<std::int64_t>(reaper->run_once().locks);
        } else {
          for (;;) {
            const auto k = twin->reap_batch(5000, o.reap_batch);
            r.rows += k;
            if (k < o.reap_batch) break;
          }
        }
        const auto t1 = bench_clock::now();
        std::this_thread::sleep_for(base);
        live.stop();
        if (!live.error().empty()) rep.fail(c.name + ": reaper: live client: " + live.error());
        r.took_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        r.rows_per_s = r.rows / (r.took_ms / 1000.0);
        std::vector<double> during, outside;
        for (const auto& s : live.samples()) (s.at >= t0 && s.at < t1 ? during : outside).push_back(s.ms);
        r.p99_reap = percentile(during, 99);
        r.p99_base = percentile(outside, 99);
        note("  " + c.name + " round " + std::to_string(i + 1) + " " + (dblock_mode ? "dblock" : "twin  ") + ": " +
             std::to_string(r.rows) + " rows in " + std::to_string(r.took_ms) +
             " ms = " + std::to_string(r.rows_per_s) + " rows/s; live acquire p99 " + std::to_string(r.p99_reap) +
             " ms (" + std::to_string(during.size()) + " acquires) vs " + std::to_string(r.p99_base) + " ms outside (" +
             std::to_string(outside.size()) + ")");
        if (r.rows < expired)
          rep.fail(c.name + ": reaper removed " + std::to_string(r.rows) + " of " + std::to_string(expired) +
                   " expired rows");
        (dblock_mode ? smart : raw_rounds).push_back(r);
      }
    }
    auto emit = [&](const std::string& metric, const std::string& unit, const std::string& floor_is,
                    const std::vector<round_result>& rs, auto value, auto floor) {
      std::vector<double> v, f;
      for (std::size_t i = 0; i < rs.size(); ++i) {
        v.push_back(value(i));
        f.push_back(floor(i));
      }
      rep.add(per_round_result(metric, c.name, unit, floor_is, v, f));
    };
    emit(
        "reap_rows_per_s", "rows/s", "the hand-written batched DELETE loop", smart,
        [&](std::size_t i) { return smart[i].rows_per_s; }, [&](std::size_t i) { return raw_rounds[i].rows_per_s; });
    emit(
        "reap_live_p99", "ms", "the same client's p99 outside the reaping, same round", smart,
        [&](std::size_t i) { return smart[i].p99_reap; }, [&](std::size_t i) { return smart[i].p99_base; });
    emit(
        "reap_live_p99_raw", "ms", "the same client's p99 outside the twin's reaping, same round", raw_rounds,
        [&](std::size_t i) { return raw_rounds[i].p99_reap; }, [&](std::size_t i) { return raw_rounds[i].p99_base; });
  }
}

}  // namespace dblock_bench
