// bench/micro.cpp — the single-connection latencies, driven by Google Benchmark: for
// every combination, the SELECT 1 floor, each dblock operation and its hand-written twin
// (bench/twins.cpp). Operations are measured in groups: one benchmark iteration runs every
// op of its group once, in a random order drawn per iteration, and each op's own duration
// is recorded, so a dblock op and its floor are always sampled milliseconds apart (paired). The groups'
// repetitions of all combinations run in one random interleaved order
// (--benchmark_enable_random_interleaving). Reported per op: the median sample, the
// floor op's median sample, the median of the paired ratios, and their spread over
// repetitions. On a shared machine whose fsync takes 0.3 ms one second and 4 ms the next,
// pairing is what keeps a ratio meaningful.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>

#include "bench.hpp"
#include "dblock/dblock.hpp"
#include "placement.hpp"
#include "twins.hpp"
#ifdef DBLOCK_BENCH_IDEMPOTENCY
#include "dblock/idempotency.hpp"
#endif

namespace dblock_bench {
namespace {

constexpr auto session_ttl = std::chrono::minutes(10);  // no renewal traffic during the runs

struct micro_ctx {
  combo c;
  std::optional<dblock::database> db, big;
  // s releases durably (the target's "durable pair"); s_async with the library default
  // (async_release on: PostgreSQL's release skips its WAL flush).
  std::unique_ptr<dblock::session> s, s_async, holder, sbig;
  std::optional<dblock::lease> busy;  // "bench:busy", held live by `holder` throughout
  std::unique_ptr<raw_client> raw, raw_big;
  std::string raw_owner = random_hex(16);
  std::string run = random_hex(4);
  std::uint64_t seq = 0;
#ifdef DBLOCK_BENCH_IDEMPOTENCY
  std::unique_ptr<dblock::idempotency_store> store;
  std::string fp = dblock::fingerprint("{\"amount\":1000,\"currency\":\"EUR\"}");
#endif
  std::string next(const char* prefix) { return std::string(prefix) + run + ":" + std::to_string(++seq); }
};

// One timed operation: runs once and returns the microseconds of its timed part (an
// acquire-only op does not count the release after it), or nothing on a failure.
struct op {
  std::string name;
  std::function<std::optional<double>()> run;
};

// Operations measured together: every iteration runs each op once, in a random order
// drawn afresh per iteration, so each ratio is taken between samples a few milliseconds
// apart (paired), whatever the disk and the other tenants do meanwhile, and no op always
// follows the same other op.
struct group {
  micro_ctx* x = nullptr;
  std::string name;
  std::vector<op> ops;
  // One chunk per run of the benchmark function (Google Benchmark's repetitions and its
  // iteration-count probes): chunks[c][k] = the samples of ops[k] in chunk c.
  std::vector<std::vector<std::vector<double>>> chunks;
  std::string error;
  std::mt19937 rng{20261126};
  [[nodiscard]] std::size_t index(const std::string& op_name) const {
    for (std::size_t k = 0; k < ops.size(); ++k)
      if (ops[k].name == op_name) return k;
    return ops.size();
  }
};

template <typename F>
std::optional<double> timed(F&& f) {
  const auto t0 = bench_clock::now();
  if (!f()) return std::nullopt;
  return std::chrono::duration<double, std::micro>(bench_clock::now() - t0).count();
}

// Google Benchmark's own results are not used (we keep every sample): only errors.
class collector final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.run_type != Run::RT_Iteration) continue;
      if (r.error_occurred) errors.push_back(r.run_name.function_name + ": " + r.error_message);
    }
    if (!runs.empty())
      note("  " + runs.front().run_name.function_name + ": " + std::to_string(runs.front().iterations) +
           " iterations per repetition");
  }
  std::vector<std::string> errors;
};

}  // namespace

void run_micro(const options& o, const std::vector<combo>& combos, report& rep) {
  note("micro benchmarks (Google Benchmark, random interleaving): " + std::to_string(o.reps) + " repetitions x " +
       (o.size == size_kind::tiny ? std::string("2 ops") : std::to_string(o.min_time) + " s"));
  std::vector<std::unique_ptr<micro_ctx>> ctxs;
  for (const auto& c : combos) {
    auto x = std::make_unique<micro_ctx>();
    x->c = c;
    x->db = dblock::open(c.url);
    x->big = dblock::open(c.big_url);
    dblock::session_options so;
    so.ttl = session_ttl;
    x->s_async = std::make_unique<dblock::session>(*x->db, so);
    so.async_release = false;
    x->s = std::make_unique<dblock::session>(*x->db, so);
    x->holder = std::make_unique<dblock::session>(*x->db, so);
    x->sbig = std::make_unique<dblock::session>(*x->big, so);
    x->busy = x->holder->try_acquire("bench:busy");
    if (!x->busy) throw std::runtime_error(c.name + ": could not take bench:busy");
    x->raw = connect_raw(c.url);
    x->raw_big = connect_raw(c.big_url);
#ifdef DBLOCK_BENCH_IDEMPOTENCY
    x->store = std::make_unique<dblock::idempotency_store>(*x->db);
    auto b = x->store->begin("bench", "replay", x->fp);
    if (!b.started()) throw std::runtime_error(c.name + ": idempotency set-up: key 'replay' not started");
    (void)x->store->complete(b.attempt, {200, "{\"id\":\"ord_1\",\"status\":\"paid\"}"});
#endif
    ctxs.push_back(std::move(x));
  }

  std::vector<std::unique_ptr<group>> groups;
  auto add_group = [&](micro_ctx* x, const std::string& name, std::vector<op> ops) {
    auto g = std::make_unique<group>();
    g->x = x;
    g->name = name;
    g->ops = std::move(ops);
    group* gp = g.get();
    auto* b = benchmark::RegisterBenchmark((x->c.name + "/" + name).c_str(), [gp](benchmark::State& st) {
      const std::size_t n = gp->ops.size();
      gp->chunks.emplace_back(n);
      auto& chunk = gp->chunks.back();
      // A fresh random order every iteration (seeded: a run is reproducible). The first
      // design rotated one fixed cycle, so each op always ran right after the same other
      // op, and which op came before moved the figures: reversing the cycle took new-key
      // from 1.16-1.20x to 1.01-1.03x and the refused try from 1.73-1.83x to 1.32-1.53x
      // (docs/performance.md, "Order of the ops"). Shuffled, every op follows every other
      // op equally often.
      std::vector<std::size_t> order(n);
      for (std::size_t k = 0; k < n; ++k) order[k] = k;
      bool failed = false;
      for (auto _ : st) {
        std::shuffle(order.begin(), order.end(), gp->rng);
        for (std::size_t j = 0; j < n && !failed; ++j) {
          const std::size_t k = order[j];
          auto t = gp->ops[k].run();
          if (!t) {
            gp->error = gp->ops[k].name + " failed";
            st.SkipWithError(gp->error.c_str());
            failed = true;
          } else {
            chunk[k].push_back(*t);
          }
        }
        if (failed) break;
      }
    });
    b->Repetitions(o.reps)->UseRealTime()->Unit(benchmark::kMicrosecond);
    if (o.size == size_kind::tiny)
      b->Iterations(2);
    else
      b->MinTime(o.min_time);
    groups.push_back(std::move(g));
  };

  for (auto& up : ctxs) {
    micro_ctx* x = up.get();
    auto select1 = op{"round_trip", [x] {
                        return timed([x] {
                          x->raw->select1();
                          return true;
                        });
                      }};
    std::vector<op> lock_ops{
        select1,
        {"ping",
         [x] {
           return timed([x] {
             x->db->ping();
             return true;
           });
         }},
        {"acquire_release_raw",
         [x] {
           return timed([x] {
             return x->raw->acquire("bench:pair:raw", x->raw_owner, 600'000) &&
                    x->raw->release("bench:pair:raw", x->raw_owner);
           });
         }},
        {"acquire_release",
         [x] {
           return timed([x] {
             auto l = x->s->try_acquire("bench:pair");
             if (!l) return false;
             l->release();
             return true;
           });
         }},
        {"try_busy_raw", [x] { return timed([x] { return !x->raw->acquire("bench:busy", x->raw_owner, 600'000); }); }},
        {"try_busy_probe_raw", [x] { return timed([x] { return x->raw->probe("bench:busy", x->raw_owner); }); }},
        {"try_busy", [x] { return timed([x] { return !x->s->try_acquire("bench:busy"); }); }}};
    if (x->c.kind == dblock::dialect::postgresql) {
      lock_ops.push_back({"acquire_release_async_raw", [x] {
                            return timed([x] {
                              return x->raw->acquire("bench:pair:async", x->raw_owner, 600'000) &&
                                     x->raw->release_async("bench:pair:async", x->raw_owner);
                            });
                          }});
      lock_ops.push_back({"acquire_release_async", [x] {
                            return timed([x] {
                              auto l = x->s_async->try_acquire("bench:pair:dblock_async");
                              if (!l) return false;
                              l->release();
                              return true;
                            });
                          }});
    }
    if (x->raw->line_twins()) {
      lock_ops.push_back({"acquire_release_line_raw", [x] {
                            return timed([x] {
                              return x->raw->acquire_in_line("bench:pair:line", x->raw_owner, 600'000) &&
                                     x->raw->release("bench:pair:line", x->raw_owner);
                            });
                          }});
      lock_ops.push_back({"acquire_release_line_fenced_raw", [x] {
                            return timed([x] {
                              return x->raw->acquire_in_line_fenced("bench:pair:line_fenced", x->raw_owner,
                                                                    600'000) &&
                                     x->raw->release("bench:pair:line_fenced", x->raw_owner);
                            });
                          }});
    }
    add_group(x, "lock", std::move(lock_ops));

    // Read-write lock and semaphore pairs (a group of their own: the lock group's order and
    // figures stay as they were), each against its hand-written one-statement floor.
    add_group(x, "family",
              {select1,
               {"rw_pair_raw",
                [x] {
                  return timed([x] {
                    return x->raw->rw_read_acquire("bench:rw:raw", x->raw_owner, 600'000) &&
                           x->raw->holder_release("bench:rw:raw", x->raw_owner);
                  });
                }},
               {"rw_pair",
                [x] {
                  return timed([x] {
                    auto l = x->s->try_acquire("bench:rw", dblock::lock_mode::read);
                    if (!l) return false;
                    l->release();
                    return true;
                  });
                }},
               {"permit_pair_raw",
                [x] {
                  return timed([x] {
                    return x->raw->permit_acquire("bench:sem:raw", x->raw_owner, 3, 600'000) &&
                           x->raw->holder_release("bench:sem:raw", x->raw_owner);
                  });
                }},
               {"permit_pair", [x] {
                  return timed([x] {
                    auto p = x->s->try_acquire_permits("bench:sem", 3, 1);
                    if (!p) return false;
                    p->release();
                    return true;
                  });
                }}});

    // A 3-name multi-lock pair: dblock's try_acquire_all + release against the hand-written
    // transaction (BEGIN, three upserts, COMMIT) and three DELETEs; and a set of one
    // exclusive, one read and one write member against the exclusive set.
    add_group(x, "multi",
              {select1,
               {"multi3_pair_raw",
                [x] {
                  return timed([x] {
                    const std::vector<std::string> names{"bench:m:raw:a", "bench:m:raw:b", "bench:m:raw:c"};
                    if (!x->raw->acquire_set(names, x->raw_owner, 600'000)) return false;
                    bool ok = true;
                    for (const auto& n : names) ok = x->raw->release(n, x->raw_owner) && ok;
                    return ok;
                  });
                }},
               {"multi3_pair", [x] {
                  return timed([x] {
                    auto set = dblock::try_acquire_all(*x->s, {"bench:m:a", "bench:m:b", "bench:m:c"});
                    if (!set) return false;
                    set->release();
                    return true;
                  });
                }},
               // The same set with a read and a write member (read-write locks in the set).
               {"multi3_mixed_pair", [x] {
                  return timed([x] {
                    auto set = dblock::try_acquire_all(*x->s, {"bench:mx:a",
                                                               {"bench:mx:b", dblock::lock_mode::read},
                                                               {"bench:mx:c", dblock::lock_mode::write}});
                    if (!set) return false;
                    set->release();
                    return true;
                  });
                }}});

    // Acquire only: the release after it is not timed.
    auto raw_acquire = [](raw_client* c, micro_ctx* x) {
      return [c, x]() -> std::optional<double> {
        auto t = timed([&] { return c->acquire("bench:acq:raw", x->raw_owner, 600'000).has_value(); });
        if (t) c->release("bench:acq:raw", x->raw_owner);
        return t;
      };
    };
    auto dblock_acquire = [](dblock::session* s) {
      return [s]() -> std::optional<double> {
        std::optional<dblock::lease> l;
        auto t = timed([&] { return (l = s->try_acquire("bench:acq")).has_value(); });
        if (t) l->release();
        return t;
      };
    };
    add_group(x, "acquire",
              {{"acquire_empty_raw", raw_acquire(x->raw.get(), x)},
               {"acquire_empty", dblock_acquire(x->s.get())},
               {"acquire_100k_raw", raw_acquire(x->raw_big.get(), x)},
               {"acquire_100k", dblock_acquire(x->sbig.get())}});
#ifdef DBLOCK_BENCH_IDEMPOTENCY
    add_group(x, "idempotency",
              {select1,
               {"idem_new_raw",
                [x] {
                  return timed([x] {
                    x->raw->idem_insert("bench", x->next("raw-new:"), x->fp, x->raw_owner, 30'000, 86'400'000);
                    return true;
                  });
                }},
               {"idem_new",
                [x] { return timed([x] { return x->store->begin("bench", x->next("new:"), x->fp).started(); }); }},
               {"idem_replay_raw", [x] { return timed([x] { return x->raw->idem_lookup("bench", "replay"); }); }},
               {"idem_replay", [x] {
                  return timed([x] {
                    return x->store->begin("bench", "replay", x->fp).outcome == dblock::idempotency_outcome::replay;
                  });
                }}});
#endif
  }

  // Random interleaving of all repetitions; our reporter instead of the console one.
  std::vector<std::string> args_s{"dblock_bench", "--benchmark_enable_random_interleaving=true"};
  std::vector<char*> args;
  for (auto& a : args_s) args.push_back(a.data());
  int argc = static_cast<int>(args.size());
  benchmark::Initialize(&argc, args.data());
  collector col;
  {
    // Every connection is open: pin them (bench/placement.hpp) for the timed part only.
    std::vector<pid_t> servers;
    for (auto& x : ctxs)
      for (raw_client* rc : {x->raw.get(), x->raw_big.get()})
        for (pid_t p : server_processes(*rc, x->c.kind))
          if (std::find(servers.begin(), servers.end(), p) == servers.end()) servers.push_back(p);
    cpu_pin pin(parse_placement(o.micro_placement), servers);
    note("micro placement: " + pin.description());
    rep.set_meta("micro_placement", pin.description());
    benchmark::RunSpecifiedBenchmarks(&col);
  }
  benchmark::ClearRegisteredBenchmarks();
  for (const auto& e : col.errors) rep.fail(e);

  // value = median of the op's samples, floor = median of the floor op's samples (same
  // group), ratio = median of the paired ratios; spreads over chunks (repetitions).
  auto emit = [&](micro_ctx* x, const std::string& metric, const std::string& floor_op, const std::string& floor_is) {
    for (const auto& g : groups) {
      if (g->x != x) continue;
      const auto a = g->index(metric), b = g->index(floor_op);
      if (a == g->ops.size() || b == g->ops.size()) continue;
      std::vector<double> va, vb, ratios, diffs, chunk_a, chunk_b, chunk_r;
      for (const auto& ch : g->chunks) {
        const std::size_t m = std::min(ch[a].size(), ch[b].size());
        std::vector<double> cr;
        for (std::size_t i = 0; i < m; ++i) {
          cr.push_back(ratio_of(ch[a][i], ch[b][i]));
          diffs.push_back(ch[a][i] - ch[b][i]);
        }
        va.insert(va.end(), ch[a].begin(), ch[a].end());
        vb.insert(vb.end(), ch[b].begin(), ch[b].end());
        ratios.insert(ratios.end(), cr.begin(), cr.end());
        if (m >= 2) {
          chunk_a.push_back(percentile(ch[a], 50));
          chunk_b.push_back(percentile(ch[b], 50));
          chunk_r.push_back(percentile(cr, 50));
        }
      }
      if (va.empty() || vb.empty()) return;
      result r;
      r.metric = metric;
      r.backend = x->c.name;
      r.value = percentile(va, 50);
      r.floor = percentile(vb, 50);
      r.ratio = a == b ? 1.0 : percentile(ratios, 50);
      r.value_spread = summarize(chunk_a);
      r.floor_spread = summarize(chunk_b);
      r.ratio_spread = summarize(chunk_r);
      r.unit = "us";
      r.floor_is = floor_is;
      r.note = std::to_string(va.size()) + " paired samples";
      r.extra.emplace_back("paired_difference_us", percentile(diffs, 50));
      rep.add(std::move(r));
      return;
    }
  };
  for (auto& up : ctxs) {
    micro_ctx* x = up.get();
    emit(x, "round_trip", "round_trip", "itself: SELECT 1 through the plain client library");
    emit(x, "ping", "round_trip", "SELECT 1 through the plain client library");
    emit(x, "acquire_release_raw", "round_trip", "SELECT 1");
    emit(x, "acquire_release", "acquire_release_raw", "the hand-written acquire+release pair");
    if (x->c.kind == dblock::dialect::postgresql)
      emit(x, "acquire_release_async_raw", "acquire_release_raw",
           "the hand-written pair whose release waits for its WAL flush (synchronous_commit on)");
    if (x->c.kind == dblock::dialect::postgresql)
      emit(x, "acquire_release_async", "acquire_release_async_raw",
           "the hand-written pair whose release skips its WAL flush (dblock's default, async_release)");
    if (x->raw->line_twins()) {
      emit(x, "acquire_release_line_raw", "acquire_release_raw",
           "the hand-written pair, whose upsert has no wait-line probe");
      emit(x, "acquire_release_line_fenced_raw", "acquire_release_raw",
           "the hand-written pair, whose upsert has no wait-line probe");
    }
    emit(x, "rw_pair_raw", "round_trip", "SELECT 1");
    emit(x, "rw_pair", "rw_pair_raw", "a hand-written read grant (one INSERT ... SELECT) and its DELETE");
    emit(x, "permit_pair_raw", "round_trip", "SELECT 1");
    emit(x, "permit_pair", "permit_pair_raw", "a hand-written permit grant (one INSERT ... SELECT) and its DELETE");
    emit(x, "try_busy_raw", "round_trip", "SELECT 1");
    emit(x, "try_busy_probe_raw", "round_trip", "SELECT 1");
    // In process (SQLite) a SELECT 1 costs no round trip, only the library call: the floor of
    // a refusal there is the cheapest read that sees the holder.
    if (x->c.kind == dblock::dialect::sqlite)
      emit(x, "try_busy", "try_busy_probe_raw", "the hand-written primary-key read that sees the holder");
    else
      emit(x, "try_busy", "round_trip", "SELECT 1");
    emit(x, "multi3_pair_raw", "round_trip", "SELECT 1");
    emit(x, "multi3_pair", "multi3_pair_raw", "the hand-written transaction of three upserts, then three DELETEs");
    emit(x, "multi3_mixed_pair", "multi3_pair", "the same set of three exclusive members");
    emit(x, "acquire_empty", "acquire_empty_raw", "the hand-written acquire on the same table");
    emit(x, "acquire_100k_raw", "acquire_empty_raw", "the hand-written acquire on the (almost) empty table");
    emit(x, "acquire_100k", "acquire_empty", "dblock's acquire on the (almost) empty table");
    emit(x, "idem_new_raw", "round_trip", "SELECT 1");
    emit(x, "idem_new", "idem_new_raw", "a raw INSERT of the same record");
    emit(x, "idem_replay_raw", "round_trip", "SELECT 1");
    emit(x, "idem_replay", "idem_replay_raw", "a raw SELECT of the record by primary key");
  }

  // Leave nothing held: the hot-lock and reaper parts use the same databases.
  for (auto& up : ctxs) {
    up->busy->release();
    up->busy.reset();
  }
}

}  // namespace dblock_bench
