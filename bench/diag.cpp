// bench/diag.cpp — why the latencies are what they are: per operation, dblock and its
// hand-written twin are run N times (untimed) and we count
//   round_trips  statements sent (database::round_trips() for dblock, the twin's own count)
//   wal_bytes    PostgreSQL: WAL inserted (pg_current_wal_insert_lsn);
//                MariaDB: redo log written (Innodb_lsn_current)
//   log_flushes  PostgreSQL: transaction ids assigned (a commit that holds one waits for a
//                WAL flush: the fsync of a durable write); MariaDB: redo log writes
//                (Innodb_log_writes; each is flushed at commit with
//                innodb_flush_log_at_trx_commit = 1)
// The server counters are cluster-wide: on a shared server other sessions add to them,
// so scripts/bench runs on its own quiet servers. SQLite has no such counters.
#include <cmath>
#include <stdexcept>

#include "bench.hpp"
#include "dblock/dblock.hpp"
#include "twins.hpp"
#ifdef DBLOCK_BENCH_IDEMPOTENCY
#include "dblock/idempotency.hpp"
#endif

namespace dblock_bench {
namespace {

struct counts {
  double round_trips = 0, wal_bytes = 0, log_flushes = 0;
};

class probe {
 public:
  explicit probe(const combo& c) : kind_(c.kind) {
    if (kind_ != dblock::dialect::sqlite) raw_ = connect_raw(c.url);
  }
  [[nodiscard]] bool server() const { return raw_ != nullptr; }
  std::int64_t wal() {
    if (kind_ == dblock::dialect::postgresql)
      return raw_->query_int("SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint");
    return raw_->query_int("SHOW GLOBAL STATUS LIKE 'Innodb_lsn_current'");
  }
  std::int64_t flushes() {
    if (kind_ == dblock::dialect::postgresql)
      return raw_->query_int("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint");
    return raw_->query_int("SHOW GLOBAL STATUS LIKE 'Innodb_log_writes'");
  }

 private:
  dblock::dialect kind_;
  std::unique_ptr<raw_client> raw_;
};

// Runs op n times (after two warm-up calls that prepare statements) and averages.
template <typename Op, typename Rt>
counts measure(probe& p, int n, Op&& op, Rt&& round_trips) {
  op();
  op();
  counts c;
  const auto rt0 = round_trips();
  const auto w0 = p.server() ? p.wal() : 0;
  const auto f0 = p.server() ? p.flushes() : 0;
  for (int i = 0; i < n; ++i) op();
  const auto f1 = p.server() ? p.flushes() : 0;
  const auto w1 = p.server() ? p.wal() : 0;
  c.round_trips = static_cast<double>(round_trips() - rt0) / n;
  // Whole bytes per operation (a record is at least 24 bytes: a fraction is a background
  // write of the server, e.g. InnoDB purge, spread over the n operations).
  c.wal_bytes = std::round(static_cast<double>(w1 - w0) / n);
  c.log_flushes = std::round(100.0 * static_cast<double>(f1 - f0) / n) / 100.0;
  return c;
}

}  // namespace

void run_diagnostics(const options& o, const std::vector<combo>& combos, report& rep) {
  const int n = o.size == size_kind::tiny ? 3 : 50;
  note("diagnostics: round trips, WAL / redo bytes and log flushes per operation (" + std::to_string(n) + " ops each)");
  for (const auto& c : combos) {
    auto db = dblock::open(c.url);
    dblock::session_options so;
    so.ttl = std::chrono::minutes(10);
    so.async_release = false;  // the durable pair, like the twin's
    dblock::session s(db, so), holder(db, so);
    auto busy = holder.try_acquire("bench:diag:busy");
    if (!busy) throw std::runtime_error(c.name + ": could not take bench:diag:busy");
    auto raw = connect_raw(c.url);
    probe p(c);
    const std::string owner = random_hex(16);
    auto db_rt = [&] { return db.round_trips(); };
    auto raw_rt = [&] { return raw->statements(); };
    std::uint64_t k = 0;
    const std::string run = random_hex(4);

    struct pair_of {
      std::string metric;
      counts dblock, raw;
    };
    std::vector<pair_of> all;
    all.push_back({"acquire_release",
                   measure(
                       p, n,
                       [&] {
                         if (auto l = s.try_acquire("bench:diag:pair")) l->release();
                       },
                       db_rt),
                   measure(
                       p, n,
                       [&] {
                         (void)raw->acquire("bench:diag:pair:raw", owner, 600'000);
                         (void)raw->release("bench:diag:pair:raw", owner);
                       },
                       raw_rt)});
    all.push_back({"try_busy",
                   measure(
                       p, n, [&] { (void)s.try_acquire("bench:diag:busy"); }, db_rt),
                   measure(
                       p, n, [&] { (void)raw->acquire("bench:diag:busy", owner, 600'000); }, raw_rt)});
#ifdef DBLOCK_BENCH_IDEMPOTENCY
    dblock::idempotency_store store(db);
    const auto fp = dblock::fingerprint("diag");
    auto b = store.begin("bench", "diag:replay", fp);
    if (b.started()) (void)store.complete(b.attempt, {200, "{}"});
    all.push_back({"idem_new",
                   measure(
                       p, n, [&] { (void)store.begin("bench", "diag:new:" + run + std::to_string(++k), fp); }, db_rt),
                   measure(
                       p, n,
                       [&] {
                         raw->idem_insert("bench", "diag:rawnew:" + run + std::to_string(++k), fp, owner, 30'000,
                                          86'400'000);
                       },
                       raw_rt)});
    all.push_back({"idem_replay",
                   measure(
                       p, n, [&] { (void)store.begin("bench", "diag:replay", fp); }, db_rt),
                   measure(
                       p, n, [&] { (void)raw->idem_lookup("bench", "diag:replay"); }, raw_rt)});
#endif
    for (const auto& x : all) {
      auto line = [&](const std::string& what, double v, double f, const std::string& unit,
                      const std::string& floor_is) {
        result r;
        r.metric = x.metric + "_" + what;
        r.backend = c.name;
        r.value = v;
        r.floor = f;
        r.ratio = ratio_of(v, f);
        r.unit = unit;
        r.floor_is = floor_is;
        rep.add(std::move(r));
      };
      if (x.metric == "idem_replay") {
        line("round_trips", x.dblock.round_trips, 1, "round_trips", "one round trip");
      } else {
        line("round_trips", x.dblock.round_trips, x.raw.round_trips, "round_trips", "the hand-written twin");
      }
      if (p.server()) {
        line("wal_bytes", x.dblock.wal_bytes, x.raw.wal_bytes, "bytes", "the hand-written twin");
        line("log_flushes", x.dblock.log_flushes, x.raw.log_flushes, "flushes", "the hand-written twin");
      }
    }
    busy->release();
  }
}

}  // namespace dblock_bench
