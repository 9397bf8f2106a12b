// bench/peers.cpp — dblock's PostgreSQL lease pair beside what users would otherwise run,
// in the same process, interleaved: one iteration runs each pair once in a random order, so
// every ratio compares samples a few milliseconds apart. The pairs (acquire + release of one
// name, one client, no contention):
//   dblock         session::try_acquire + lease::release (the library defaults)
//   pg_advisory    SELECT pg_try_advisory_lock($1) + SELECT pg_advisory_unlock($1) (libpqxx,
//                  prepared): a session lock, no fence, no lease, gone with the connection
//   redis_fsync    Redis: SET key token NX PX ttl + the compare-and-delete script (EVALSHA),
//                  appendfsync always: every write is on disk before the reply
//   redis_volatile the same on a Redis without persistence (no AOF, no RDB)
//   dblock_unlogged dblock's pair on a database of its own whose lock tables are unlogged
//                  (migrate_options::lock_tables): no WAL, no commit flush
// Besides dblock / peer for each peer, the unlogged pair is reported against Redis without
// persistence (unlogged_pair_vs_redis_volatile, target <= 2x).
// The two Redis servers are started here (`redis-server` from PATH, loopback, a temporary
// directory) and stopped at the end; without redis-server or hiredis the Redis pairs are
// skipped with a note. Reported per peer: dblock's median pair, the peer's, and the median
// of the paired ratios dblock / peer.
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <pqxx/pqxx>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include "bench.hpp"
#include "dblock/dblock.hpp"

#if DBLOCK_BENCH_REDIS
#include <hiredis/hiredis.h>
#endif

extern char** environ;

namespace dblock_bench {
namespace {

using us_clock = bench_clock;

double micros_since(us_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(us_clock::now() - t0).count();
}

#if DBLOCK_BENCH_REDIS
// A free loopback TCP port: bound with port 0, then closed (redis-server binds it next).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("bind to a free port failed");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

std::optional<std::string> find_in_path(const std::string& exe) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  p += ":/usr/sbin:/usr/bin";
  std::size_t start = 0;
  while (start <= p.size()) {
    const auto end = std::min(p.find(':', start), p.size());
    const std::filesystem::path cand = std::filesystem::path(p.substr(start, end - start)) / exe;
    if (::access(cand.c_str(), X_OK) == 0) return cand.string();
    start = end + 1;
  }
  return std::nullopt;
}

// One redis-server of our own and a hiredis connection to it.
class redis_peer {
 public:
  redis_peer(const std::string& exe, bool fsync_always) : dir_(std::filesystem::temp_directory_path()) {
    char tmpl[] = "/tmp/dblock-bench-redis.XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    port_ = free_port();
    std::vector<std::string> args{exe, "--bind", "127.0.0.1", "--port", std::to_string(port_), "--dir", dir_.string(),
                                  "--save", "", "--daemonize", "no", "--protected-mode", "no",
                                  "--logfile", (dir_ / "redis.log").string()};
    if (fsync_always) {
      for (const char* a : {"--appendonly", "yes", "--appendfsync", "always"}) args.emplace_back(a);
    } else {
      for (const char* a : {"--appendonly", "no"}) args.emplace_back(a);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);  // none of our descriptors
    const int rc = ::posix_spawn(&pid_, exe.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("posix_spawn redis-server failed");
    // Up within 5 s: PING answers.
    const auto until = us_clock::now() + std::chrono::seconds(5);
    while (!c_) {
      timeval tv{1, 0};
      redisContext* c = ::redisConnectWithTimeout("127.0.0.1", port_, tv);
      if (c && !c->err && ping(c)) {
        c_ = c;
        break;
      }
      if (c) ::redisFree(c);
      if (us_clock::now() > until) {
        stop();
        throw std::runtime_error("redis-server on port " + std::to_string(port_) + " did not answer within 5 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // The compare-and-delete release: deletes the key only if it still holds our token.
    auto* r = command("SCRIPT LOAD %s",
                      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end");
    if (r->type != REDIS_REPLY_STRING) throw std::runtime_error("SCRIPT LOAD failed");
    sha_.assign(r->str, r->len);
    ::freeReplyObject(r);
  }
  redis_peer(const redis_peer&) = delete;
  redis_peer& operator=(const redis_peer&) = delete;
  ~redis_peer() { stop(); }

  // SET NX PX + EVALSHA release; false when either step did not do what it should.
  bool pair(const std::string& key, const std::string& token) {
    auto* set = command("SET %s %s NX PX %d", key.c_str(), token.c_str(), 30000);
    const bool got = set->type == REDIS_REPLY_STATUS;
    ::freeReplyObject(set);
    if (!got) return false;
    auto* del = command("EVALSHA %s 1 %s %s", sha_.c_str(), key.c_str(), token.c_str());
    const bool freed = del->type == REDIS_REPLY_INTEGER && del->integer == 1;
    ::freeReplyObject(del);
    return freed;
  }

 private:
  static bool ping(redisContext* c) {
    auto* r = static_cast<redisReply*>(::redisCommand(c, "PING"));
    const bool ok = r && r->type == REDIS_REPLY_STATUS;
    if (r) ::freeReplyObject(r);
    return ok;
  }
  template <class... A>
  redisReply* command(const char* fmt, A... args) {
    auto* r = static_cast<redisReply*>(::redisCommand(c_, fmt, args...));
    if (!r) throw std::runtime_error(std::string("redis: ") + (c_->errstr[0] ? c_->errstr : "no reply"));
    if (r->type == REDIS_REPLY_ERROR) {
      std::string e(r->str, r->len);
      ::freeReplyObject(r);
      throw std::runtime_error("redis: " + e);
    }
    return r;
  }
  void stop() noexcept {
    if (c_) ::redisFree(c_);
    c_ = nullptr;
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int st = 0;
      ::waitpid(pid_, &st, 0);
      pid_ = -1;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::filesystem::path dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  redisContext* c_ = nullptr;
  std::string sha_;
};
#endif

struct pair_op {
  std::string name;
  std::string floor_is;            // what the peer is, for the report
  std::function<bool()> run;       // one pair; false = it did not do what it should
  std::vector<double> samples;     // microseconds, one per iteration
};

}  // namespace

void run_peers(const options& o, const std::vector<combo>& combos, report& rep) {
  const combo* pg = nullptr;
  for (const auto& c : combos)
    if (c.name == "pqxx_postgresql") pg = &c;
  if (!pg) {
    note("peers: no pqxx_postgresql combination: skipped");
    return;
  }
  const bool tiny = o.size == size_kind::tiny;
  const int warmup = tiny ? 5 : 200, iterations = tiny ? 40 : 3000;

  auto db = dblock::open(pg->url);
  dblock::session_options so;
  so.ttl = std::chrono::minutes(10);  // no renewal traffic during the run
  dblock::session s(db, so);
  const std::string run_tag = random_hex(4);
  const std::string lock_name = "bench:peer:" + run_tag;

  std::string raw_url = pg->url;  // libpq reads postgresql:// URLs; dblock's own query options are not libpq's
  if (auto q = raw_url.find('?'); q != std::string::npos) raw_url.resize(q);
  pqxx::connection raw(raw_url);
  raw.prepare("adv_lock", "SELECT pg_try_advisory_lock($1)");
  raw.prepare("adv_unlock", "SELECT pg_advisory_unlock($1)");
  const std::int64_t key = static_cast<std::int64_t>(std::random_device{}()) << 20;

  // The unlogged pair runs on a throwaway database (the test user has CREATEDB), so the
  // durable figures above keep their logged tables; dropped at the end.
  const std::string unlogged_db = "dblock_bench_unlogged_" + run_tag;
  pqxx::nontransaction(raw).exec("CREATE DATABASE " + unlogged_db);
  struct drop_db {
    pqxx::connection& c;
    std::string name;
    ~drop_db() {
      try {
        pqxx::nontransaction(c).exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
      } catch (...) {
      }
    }
  } drop_unlogged{raw, unlogged_db};
  std::string unlogged_url = pg->url;
  {
    const auto scheme = unlogged_url.find("://");
    const auto slash = unlogged_url.find('/', scheme + 3);
    const auto q = unlogged_url.find('?', slash);
    unlogged_url = unlogged_url.substr(0, slash + 1) + unlogged_db + (q == std::string::npos ? "" : unlogged_url.substr(q));
  }
  std::optional<dblock::database> udb(dblock::open(unlogged_url));
  {
    dblock::migrate_options mo;
    mo.lock_tables = dblock::lock_table_mode::unlogged;
    mo.replication = dblock::replication_policy::ignore;
    (void)udb->migrate(mo);
  }
  std::optional<dblock::session> us(std::in_place, *udb, so);

  std::vector<pair_op> ops;
  ops.push_back({"dblock", "", [&] {
                   auto l = s.try_acquire(lock_name);
                   if (!l) return false;
                   l->release();
                   return true;
                 }, {}});
  ops.push_back({"pg_advisory", "PostgreSQL session advisory lock pair: SELECT pg_try_advisory_lock + pg_advisory_unlock (libpqxx, prepared)",
                 [&] {
                   pqxx::nontransaction tx(raw);
                   const bool got = tx.exec_prepared1("adv_lock", key)[0].as<bool>();
                   const bool freed = tx.exec_prepared1("adv_unlock", key)[0].as<bool>();
                   return got && freed;
                 }, {}});
  ops.push_back({"dblock_unlogged", "dblock's lease pair on unlogged lock tables (migrate_options::lock_tables)",
                 [&] {
                   auto l = us->try_acquire(lock_name);
                   if (!l) return false;
                   l->release();
                   return true;
                 }, {}});
#if DBLOCK_BENCH_REDIS
  std::unique_ptr<redis_peer> fsynced, volatile_;
  if (auto exe = find_in_path("redis-server")) {
    fsynced = std::make_unique<redis_peer>(*exe, true);
    volatile_ = std::make_unique<redis_peer>(*exe, false);
    const std::string token = random_hex(16), rkey = "bench:peer:" + run_tag;
    ops.push_back({"redis_fsync", "Redis SET NX PX + compare-and-delete script (EVALSHA), appendfsync always (hiredis)",
                   [&, token, rkey] { return fsynced->pair(rkey, token); }, {}});
    ops.push_back({"redis_volatile", "Redis SET NX PX + compare-and-delete script (EVALSHA), no persistence (hiredis)",
                   [&, token, rkey] { return volatile_->pair(rkey, token); }, {}});
  } else {
    if (o.require_all) throw std::runtime_error("peers: redis-server not found in PATH (DBLOCK_TEST_REQUIRE_ALL=1)");
    note("peers: redis-server not found in PATH: Redis pairs skipped");
  }
#else
  note("peers: built without hiredis (libhiredis-dev): Redis pairs skipped");
#endif

  note("peers: " + std::to_string(ops.size()) + " lease pairs, " + std::to_string(iterations) +
       " interleaved iterations after " + std::to_string(warmup));
  std::mt19937_64 rng(std::random_device{}());
  std::vector<std::size_t> order(ops.size());
  for (int i = 0; i < warmup + iterations; ++i) {
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::shuffle(order.begin(), order.end(), rng);
    for (auto k : order) {
      const auto t0 = us_clock::now();
      if (!ops[k].run()) throw std::runtime_error("peers: the " + ops[k].name + " pair did not acquire and release");
      const double us = micros_since(t0);
      if (i >= warmup) ops[k].samples.push_back(us);
    }
  }
  const auto& mine = ops.front().samples;
  for (std::size_t k = 1; k < ops.size(); ++k) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < mine.size(); ++i) ratios.push_back(mine[i] / ops[k].samples[i]);
    result r;
    r.metric = "lease_pair_vs_" + ops[k].name;
    r.backend = pg->name;
    r.unit = "us";
    r.value_spread = summarize(mine);
    r.floor_spread = summarize(ops[k].samples);
    r.ratio_spread = summarize(ratios);
    r.value = r.value_spread->median;
    r.floor = r.floor_spread->median;
    r.ratio = r.ratio_spread->median;
    r.floor_is = ops[k].floor_is;
    r.note = "dblock's lease pair (try_acquire + release, library defaults) against this peer, interleaved";
    r.goal = target_for(r.metric, pg->kind);
    rep.add(std::move(r));
  }
  // The unlogged pair against Redis without persistence, paired per iteration likewise.
  const pair_op* unlogged = nullptr;
  const pair_op* redis_volatile = nullptr;
  for (const auto& op : ops) {
    if (op.name == "dblock_unlogged") unlogged = &op;
    if (op.name == "redis_volatile") redis_volatile = &op;
  }
  if (unlogged && redis_volatile) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < unlogged->samples.size(); ++i)
      ratios.push_back(unlogged->samples[i] / redis_volatile->samples[i]);
    result r;
    r.metric = "unlogged_pair_vs_redis_volatile";
    r.backend = pg->name;
    r.unit = "us";
    r.value_spread = summarize(unlogged->samples);
    r.floor_spread = summarize(redis_volatile->samples);
    r.ratio_spread = summarize(ratios);
    r.value = r.value_spread->median;
    r.floor = r.floor_spread->median;
    r.ratio = r.ratio_spread->median;
    r.floor_is = redis_volatile->floor_is;
    r.note = "dblock's lease pair on unlogged lock tables against Redis without persistence, interleaved";
    r.goal = target_for(r.metric, pg->kind);
    rep.add(std::move(r));
  }
  us.reset();  // its connections end before the database is dropped
  udb.reset();
}

}  // namespace dblock_bench
