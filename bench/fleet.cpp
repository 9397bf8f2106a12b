// bench/fleet.cpp — fleets: what many processes of many sessions cost the server, in
// connections, and how a wait line of a thousand sessions on a few hot names behaves.
// Two measurements, each with its own processes (this binary, `dblock_bench fleet-proc`,
// started with posix_spawn; the URL goes through the environment, never argv):
//
//  * Connections per process. One process opens its database once (dblock::open, with
//    open_options::application_name set to a tag of its own) and makes N sessions; each
//    session holds a lock, and one more thread per session waits (acquire) for a name the
//    bench itself holds. After the waiters have joined their lines and the renewals run,
//    the bench counts that process's server connections by the tag: pg_stat_activity's
//    application_name on PostgreSQL, performance_schema.session_connect_attrs'
//    program_name on MariaDB. It also counts the process's own TCP connections to the
//    server (or to PgBouncer: through PgBouncer the server connections are the pool's,
//    shared by every client, and the client connections are what the process costs).
//    For N = 1, 5, 20 (tiny: 1, 5), PostgreSQL direct, through PgBouncer
//    (?pooler=transaction) and MariaDB, with session_options::renew_on shared and
//    database (and, on PostgreSQL direct, database with listen off).
//
//  * Many waiters. P processes x S sessions, each session on a thread of its own looping
//    acquire(one of K hot names, 60 s) -> hold hold_ms -> release, session s of process p
//    on name (p * S + s) % K, for a warm-up and a measured window. PostgreSQL through
//    PgBouncer in transaction pooling (renew_on shared), and MariaDB without a pooler
//    (renew_on database: one connection per process). Reported: errors (every exception
//    in a process, every process that failed), grants per second, p50/p99 wait of the
//    grants inside the window, fairness (most / fewest grants of one session in the
//    window), overtakes (grants whose session had asked more than 10 ms before another
//    session of the same name that was granted first: arrival order as the clients saw
//    it, CLOCK_MONOTONIC shared by the processes), on PostgreSQL line inversions from a
//    server-side trace (a trigger on dblock_locks records at every new grant how many live
//    tickets of other owners older than the grantee's ticket were waiting on that name),
//    and the peak of server connections (polled every 250 ms: pg_stat_activity's client
//    backends, MariaDB's Threads_connected, each counting the bench's one monitoring
//    connection) and of client connections to the port the processes use.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "bench.hpp"
#include "dblock/dblock.hpp"
#include "procs.hpp"
#include "twins.hpp"

namespace dblock_bench {
namespace {

using std::chrono::milliseconds;

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

// server_url's scheme://auth@host:port with db_url's /database?options.
std::string via(const std::string& server_url, const std::string& db_url) {
  auto cut = [](const std::string& u) {
    const auto sep = u.find("://");
    return std::min(u.find('/', sep + 3), u.find('?', sep + 3));
  };
  return server_url.substr(0, cut(server_url)) + db_url.substr(cut(db_url));
}

std::string with_option(const std::string& url, const std::string& kv) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + kv;
}

int port_of(const std::string& url) {
  const auto sep = url.find("://");
  const auto at = url.find('@', sep + 3);
  const auto host = at == std::string::npos ? sep + 3 : at + 1;
  const auto end = std::min(url.find('/', host), url.find('?', host));
  const auto colon = url.rfind(':', end);
  if (colon == std::string::npos || colon < host) return 0;
  return std::stoi(url.substr(colon + 1, end - colon - 1));
}

// Established TCP connections (IPv4 and IPv6) to remote port `port`: by inode.
std::map<unsigned long, bool> tcp_to_port(int port) {
  std::map<unsigned long, bool> out;
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream f(file);
    std::string line;
    std::getline(f, line);  // header
    while (std::getline(f, line)) {
      std::istringstream s(line);
      std::string sl, local, remote, state, queues, timer, retr, uid, timeout;
      unsigned long inode = 0;
      s >> sl >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode;
      if (state != "01") continue;
      const auto colon = remote.rfind(':');
      if (colon == std::string::npos) continue;
      if (std::stoi(remote.substr(colon + 1), nullptr, 16) == port) out[inode] = true;
    }
  }
  return out;
}

// How many established TCP connections to `port` process pid has (distinct sockets: dblock
// keeps a second descriptor of a connection's socket, to cut it from another thread).
int process_conns(pid_t pid, int port) {
  const auto conns = tcp_to_port(port);
  std::set<unsigned long> mine;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      char target[128];
      const auto len = readlink((dir + "/" + e->d_name).c_str(), target, sizeof target - 1);
      if (len <= 0) continue;
      target[len] = 0;
      unsigned long inode = 0;
      if (std::sscanf(target, "socket:[%lu]", &inode) == 1 && conns.count(inode)) mine.insert(inode);
    }
    closedir(d);
  }
  return static_cast<int>(mine.size());
}

// The bench's monitoring connection (plain client library, on the server directly).
class monitor {
 public:
  monitor(const std::string& direct_url, dblock::dialect kind) : kind_(kind), raw_(connect_raw(direct_url)) {}
  // Server connections whose application_name / program_name is `tag`.
  int by_name(const std::string& tag) {
    if (kind_ == dblock::dialect::postgresql)
      return q("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + tag + "'");
    return q("SELECT COUNT(*) FROM performance_schema.session_connect_attrs WHERE ATTR_NAME = 'program_name' "
             "AND ATTR_VALUE = '" + tag + "'");
  }
  // Client backends on the whole server (this connection included).
  int server_total() {
    if (kind_ == dblock::dialect::postgresql)
      return q("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'");
    return q("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = "
             "'THREADS_CONNECTED'");
  }
  // Backends on the benchmark's database other than this one and the bench's own.
  int database_backends() {
    return q("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = "
             "'client backend' AND pid <> pg_backend_pid() AND application_name NOT LIKE 'dblock-fleet-bench%'");
  }
  int max_connections() {
    if (kind_ == dblock::dialect::postgresql) return std::stoi(raw_->query_text("SHOW max_connections"));
    return q("SELECT @@max_connections");
  }
  raw_client& raw() { return *raw_; }

 private:
  int q(const std::string& sql) { return static_cast<int>(raw_->query_int(sql)); }
  dblock::dialect kind_;
  std::unique_ptr<raw_client> raw_;
};

dblock::open_options bench_open_options() {
  dblock::open_options oo;
  oo.application_name = "dblock-fleet-bench " + std::to_string(getpid());
  return oo;
}

result count_result(std::string metric, std::string backend, double value, std::string unit, double bound,
                    std::string goal_text, std::string floor_is) {
  result r;
  r.metric = std::move(metric);
  r.backend = std::move(backend);
  r.value = value;
  r.unit = std::move(unit);
  r.floor = bound;
  r.ratio = ratio_of(value, bound);
  r.floor_is = std::move(floor_is);
  r.goal = target{target::on::value_max, bound, std::move(goal_text)};
  return r;
}

// ------------------------------------------------------------ connections per process

struct conn_case {
  std::string backend;     // pqxx_postgresql, pqxx_pgbouncer, mysql_mariadb
  std::string url;         // what the process opens
  std::string direct_url;  // the server itself (the bench's connections)
  dblock::dialect kind;
  std::string renew_on;  // shared | database
  bool listen = true;
  bool pooled = false;
};

void run_connections(const options& o, const std::vector<conn_case>& cases, report& rep) {
  const bool tiny = o.size == size_kind::tiny;
  const std::vector<int> sizes = tiny ? std::vector<int>{1, 5} : std::vector<int>{1, 5, 20};
  const double settle = tiny ? 1.5 : 3.0;  // > one renewal period (TTL 3 s / 3) after the waiters queue
  const int samples = tiny ? 2 : 4;
  for (const auto& cc : cases) {
    monitor mon(cc.direct_url, cc.kind);
    const int port = port_of(cc.url);
    for (int n : sizes) {
      const std::string tag = "dblock-fleet " + random_hex(4);
      const std::string blocked = "fleet:blocked:" + tag + ":";
      // The names the waiters wait for, held by the bench (on the server directly).
      auto db = dblock::open(cc.direct_url, bench_open_options());
      dblock::session holder(db);
      std::vector<dblock::lease> blockers;
      for (int i = 0; i < n; ++i) blockers.push_back(holder.acquire(blocked + std::to_string(i), milliseconds(10'000)));
      child k = spawn_child(cc.url, {"fleet-proc", "--role", "conn", "--tag", tag, "--sessions", std::to_string(n),
                                     "--renew-on", cc.renew_on, "--listen", cc.listen ? "1" : "0", "--blocked",
                                     blocked, "--ttl-ms", "3000"});
      bool ok = read_line(k.out) == "ready";
      int by_name = 0, sockets = 0, pool = 0;
      if (ok) {
        std::this_thread::sleep_for(std::chrono::duration<double>(settle));
        for (int s = 0; s < samples; ++s) {
          by_name = std::max(by_name, mon.by_name(tag));
          sockets = std::max(sockets, process_conns(k.pid, port));
          if (cc.pooled) pool = std::max(pool, mon.database_backends());
          std::this_thread::sleep_for(milliseconds(tiny ? 300 : 500));
        }
      }
      blockers.clear();  // the waiters get their names now, and return
      std::fprintf(k.in, "stop\n");
      std::fflush(k.in);
      std::istringstream line(read_line(k.out));
      std::string tagword;
      int errors = -1;
      line >> tagword >> errors;
      if (!reap_child(k) || tagword != "result" || errors != 0) ok = false;
      const std::string setting = cc.renew_on + (cc.listen || cc.pooled || cc.kind != dblock::dialect::postgresql
                                                     ? ""
                                                     : "_nolisten");
      note("  fleet connections: " + cc.backend + " renew_on=" + setting + ", " + std::to_string(n) +
           " sessions + " + std::to_string(n) + " waiters: " + std::to_string(by_name) +
           " server connections named by the process, " + std::to_string(sockets) + " TCP connections of the process" +
           (cc.pooled ? ", " + std::to_string(pool) + " server connections of the pool" : "") +
           (ok ? "" : " (the process FAILED)"));
      if (!ok) rep.fail(cc.backend + ": fleet connections: the process with " + std::to_string(n) + " sessions failed");
      // Expected: 1 (the database connection) + 1 background connection unless renewals
      // run on the database connection and nothing listens.
      const bool one = cc.renew_on == "database" && (!cc.listen || cc.pooled || cc.kind != dblock::dialect::postgresql);
      const double bound = one ? 1 : 2;
      const std::string metric = "fleet_conns_s" + std::to_string(n) + "_" + setting;
      auto r = count_result(metric, cc.backend, cc.pooled ? sockets : by_name, "connections", bound,
                            "<= " + std::to_string(static_cast<int>(bound)) + " per process",
                            cc.pooled ? "the issue's bound (client connections to PgBouncer)"
                                      : "the issue's bound (server connections named by the process)");
      r.extra = {{"server_connections_by_name", by_name},
                 {"tcp_connections_of_process", sockets},
                 {"pool_server_connections", pool},
                 {"sessions", n}};
      rep.add(std::move(r));
    }
  }
}

// ------------------------------------------------------------ many waiters

struct load_case {
  std::string backend;
  std::string url;
  std::string direct_url;
  dblock::dialect kind;
  std::string renew_on;
  int procs = 0;
  bool trace = false;  // PostgreSQL: the server-side grant trace
};

void install_trace(raw_client& raw) {
  raw.exec("DROP TABLE IF EXISTS fleet_grant_trace");
  raw.exec("CREATE TABLE fleet_grant_trace (id bigserial PRIMARY KEY, name text, fence bigint, owner text, "
           "ticket bigint, passed bigint, at timestamptz DEFAULT clock_timestamp())");
  // At each new grant: the grantee's ticket (its grant deletes it after this row is written)
  // and how many live tickets of other owners older than it wait on the name.
  raw.exec(R"(CREATE OR REPLACE FUNCTION fleet_trace_grant() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE t bigint;
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.fence = OLD.fence THEN RETURN NULL; END IF;
  SELECT min(ticket) INTO t FROM dblock_lock_waiters WHERE name = NEW.name AND owner = NEW.owner;
  INSERT INTO fleet_grant_trace (name, fence, owner, ticket, passed)
  SELECT NEW.name, NEW.fence, NEW.owner, t, count(*) FROM dblock_lock_waiters w
   WHERE w.name = NEW.name AND w.owner <> NEW.owner AND w.expires_at > now() AND (t IS NULL OR w.ticket < t);
  RETURN NULL;
END $$)");
  raw.exec("DROP TRIGGER IF EXISTS fleet_trace_grant ON dblock_locks");
  raw.exec("CREATE TRIGGER fleet_trace_grant AFTER INSERT OR UPDATE ON dblock_locks FOR EACH ROW "
           "EXECUTE FUNCTION fleet_trace_grant()");
}

void remove_trace(raw_client& raw) {
  raw.exec("DROP TRIGGER IF EXISTS fleet_trace_grant ON dblock_locks");
  raw.exec("DROP FUNCTION IF EXISTS fleet_trace_grant()");
}

struct grant_rec {
  std::int64_t asked, granted;  // us
};

void run_load(const options& o, const load_case& lc, report& rep) {
  const bool tiny = o.size == size_kind::tiny;
  const int sessions = tiny ? 4 : o.fleet_sessions;
  const int names = tiny ? 2 : o.fleet_names;
  const double warmup = tiny ? 1 : o.fleet_warmup;
  const double seconds = tiny ? 2 : o.fleet_seconds;
  const int procs = lc.procs;
  note("fleet: " + lc.backend + ": " + std::to_string(procs) + " processes x " + std::to_string(sessions) +
       " sessions on " + std::to_string(names) + " hot names, hold " + std::to_string(o.fleet_hold_ms) +
       " ms, renew_on " + lc.renew_on + ", " + std::to_string(warmup) + " s warm-up + " + std::to_string(seconds) +
       " s measured; load average " + [] {
         std::ifstream f("/proc/loadavg");
         std::string a;
         std::getline(f, a);
         return a;
       }());
  monitor mon(lc.direct_url, lc.kind);
  const int max_conn = mon.max_connections();
  if (lc.trace) install_trace(mon.raw());
  const int port = port_of(lc.url);

  // Peaks, polled from the start of the spawning to the last exit.
  std::atomic<bool> polling{true};
  std::atomic<int> peak_server{0}, peak_clients{0};
  std::string poll_error;
  // Statements the server ran in the window (PostgreSQL: transactions of the database;
  // MariaDB: Questions, server-wide), read by the poller at the window's ends.
  std::atomic<long long> statements_at_from{-1}, statements_at_end{-1};
  std::atomic<std::int64_t> window_from_us{INT64_MAX}, window_end_us{INT64_MAX};
  auto statements = [&] {
    return lc.kind == dblock::dialect::postgresql
               ? mon.raw().query_int("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = "
                                     "current_database()")
               : mon.raw().query_int("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE "
                                     "VARIABLE_NAME = 'QUESTIONS'");
  };
  // The bench's only connection to the server while the processes run: the monitor's
  // (MariaDB's default max_connections is 151 for 150 processes).
  std::thread poller([&] {
    try {
      while (polling) {
        peak_server = std::max(peak_server.load(), mon.server_total());
        peak_clients = std::max(peak_clients.load(), static_cast<int>(tcp_to_port(port).size()));
        const auto now = mono_us(bench_clock::now());
        if (statements_at_from < 0 && now >= window_from_us) statements_at_from = statements();
        if (statements_at_end < 0 && now >= window_end_us) statements_at_end = statements();
        std::this_thread::sleep_for(milliseconds(250));
      }
    } catch (const std::exception& e) {
      poll_error = e.what();
    }
  });

  int failed = 0, errors = 0;
  std::vector<child> kids;
  for (int p = 0; p < procs; ++p) {
    try {
      kids.push_back(spawn_child(lc.url, {"fleet-proc", "--role", "load", "--tag",
                                          "dblock-fleet " + std::to_string(p), "--sessions", std::to_string(sessions),
                                          "--names", std::to_string(names), "--first", std::to_string(p * sessions),
                                          "--hold-ms", std::to_string(o.fleet_hold_ms), "--renew-on", lc.renew_on}));
    } catch (const std::exception& e) {
      ++failed;
      note("  fleet: " + std::string(e.what()));
    }
  }
  std::vector<bool> alive(kids.size(), true);
  for (std::size_t i = 0; i < kids.size(); ++i)
    if (read_line(kids[i].out) != "ready") alive[i] = false;
  const auto from = bench_clock::now() + std::chrono::duration_cast<bench_clock::duration>(
                                             std::chrono::duration<double>(warmup));
  const auto end = from + std::chrono::duration_cast<bench_clock::duration>(std::chrono::duration<double>(seconds));
  window_from_us = mono_us(from);
  window_end_us = mono_us(end);
  for (std::size_t i = 0; i < kids.size(); ++i) {
    if (!alive[i]) continue;
    std::fprintf(kids[i].in, "go %lld %lld\n", static_cast<long long>(mono_us(from)), static_cast<long long>(mono_us(end)));
    std::fflush(kids[i].in);
  }
  std::vector<double> waits;
  std::vector<int> per_session;
  std::map<int, std::vector<grant_rec>> by_name;
  for (std::size_t i = 0; i < kids.size(); ++i) {
    auto& k = kids[i];
    bool done = false;
    if (alive[i]) {
      for (;;) {
        const std::string l = read_line(k.out);
        std::istringstream line(l);
        std::string tag;
        line >> tag;
        if (tag == "session") {
          int name = 0, grants = 0;
          line >> name >> grants;
          per_session.push_back(grants);
          long long a, g;
          while (line >> a >> g) {
            waits.push_back(static_cast<double>(g - a) / 1000.0);
            by_name[name].push_back({a, g});
          }
        } else if (tag == "done") {
          int e = 0;
          line >> e;
          errors += e;
          done = true;
          break;
        } else {
          break;  // failed or closed
        }
      }
    }
    if (!reap_child(k) || !done) ++failed;
  }
  polling = false;
  poller.join();
  if (!poll_error.empty()) note("  fleet: the connection poller stopped: " + poll_error);

  // Overtakes: a grant whose session had asked more than 10 ms before another session's
  // grant of the same name that came first.
  const std::int64_t tolerance_us = 10'000;
  int overtaken = 0, measured = 0;
  for (auto& [name, gs] : by_name) {
    std::sort(gs.begin(), gs.end(), [](const grant_rec& a, const grant_rec& b) { return a.granted < b.granted; });
    std::int64_t latest_ask = INT64_MIN;
    for (const auto& g : gs) {
      if (latest_ask > g.asked + tolerance_us) ++overtaken;
      latest_ask = std::max(latest_ask, g.asked);
      ++measured;
    }
  }
  long long traced = 0, inversions = 0, passed = 0, unticketed = 0;
  if (lc.trace) {
    traced = mon.raw().query_int("SELECT count(*) FROM fleet_grant_trace WHERE name LIKE 'fleet:hot:%'");
    inversions = mon.raw().query_int("SELECT count(*) FROM fleet_grant_trace WHERE name LIKE 'fleet:hot:%' AND passed > 0");
    passed = mon.raw().query_int("SELECT coalesce(sum(passed), 0) FROM fleet_grant_trace WHERE name LIKE 'fleet:hot:%'");
    unticketed = mon.raw().query_int(
        "SELECT count(*) FROM fleet_grant_trace WHERE name LIKE 'fleet:hot:%' AND ticket IS NULL AND passed > 0");
    remove_trace(mon.raw());
  }
  const int total = static_cast<int>(waits.size());
  const int lo = per_session.empty() ? 0 : *std::min_element(per_session.begin(), per_session.end());
  const int hi = per_session.empty() ? 0 : *std::max_element(per_session.begin(), per_session.end());
  const double fairness = lo == 0 ? INFINITY : static_cast<double>(hi) / lo;
  const auto starved = std::count(per_session.begin(), per_session.end(), 0);
  const double window_statements = statements_at_from >= 0 && statements_at_end >= 0
                                       ? static_cast<double>(statements_at_end - statements_at_from)
                                       : NAN;
  note("  fleet: " + lc.backend + ": errors " + std::to_string(errors) + ", failed processes " +
       std::to_string(failed) + ", " + std::to_string(total) + " grants in the window (" +
       std::to_string(total / seconds) + "/s), wait p50 " + std::to_string(percentile(waits, 50)) + " ms p99 " +
       std::to_string(percentile(waits, 99)) + " ms max " +
       std::to_string(waits.empty() ? 0 : *std::max_element(waits.begin(), waits.end())) +
       " ms, grants per session " + std::to_string(lo) + ".." + std::to_string(hi) + " (" +
       std::to_string(per_session.size()) + " sessions, " + std::to_string(starved) + " without a grant), " +
       std::to_string(window_statements / seconds) + " statements/s on the server (" +
       std::to_string(window_statements / std::max(total, 1)) + " per grant), overtaken " + std::to_string(overtaken) + "/" +
       std::to_string(measured) +
       (lc.trace ? ", server trace: " + std::to_string(inversions) + " of " + std::to_string(traced) +
                       " grants passed a live older ticket (" + std::to_string(unticketed) + " without a ticket, " +
                       std::to_string(passed) + " tickets passed in all)"
                 : std::string()) +
       ", peak server connections " + std::to_string(peak_server.load()) + " (max_connections " +
       std::to_string(max_conn) + "), peak client connections to port " + std::to_string(port) + ": " +
       std::to_string(peak_clients.load()));
  if (errors + failed > 0)
    rep.fail(lc.backend + ": fleet: " + std::to_string(errors) + " errors, " + std::to_string(failed) +
             " failed processes");
  const std::string b = lc.backend;
  auto plain = [&](const std::string& metric, double v, const std::string& unit) {
    result r;
    r.metric = metric;
    r.backend = b;
    r.value = v;
    r.unit = unit;
    r.floor = v;
    r.ratio = 1;
    r.floor_is = "none (a figure of its own)";
    return r;
  };
  auto add_plain = [&](const std::string& metric, double v, const std::string& unit) {
    auto r = plain(metric, v, unit);
    r.extra = {{"processes", procs}, {"sessions", sessions}, {"names", names}, {"seconds", seconds}};
    rep.add(std::move(r));
  };
  rep.add(count_result("fleet_errors", b, errors + failed, "errors", 0, "0 errors", "none: must be 0"));
  add_plain("fleet_grants_per_s", total / seconds, "grants/s");
  add_plain("fleet_wait_p50", percentile(waits, 50), "ms");
  add_plain("fleet_wait_p99", percentile(waits, 99), "ms");
  add_plain("fleet_fairness", fairness, "x");
  add_plain("fleet_grants_min", lo, "grants");
  add_plain("fleet_grants_max", hi, "grants");
  add_plain("fleet_sessions_without_grant", static_cast<double>(starved), "sessions");
  add_plain("fleet_statements_per_s", window_statements / seconds, "statements/s");
  add_plain("fleet_statements_per_grant", window_statements / std::max(total, 1), "statements");
  add_plain("fleet_overtaken", overtaken, "grants");
  if (lc.trace) {
    rep.add(count_result("fleet_line_inversions", b, static_cast<double>(inversions), "grants", 0,
                         "0 grants past an older live ticket", "none: must be 0"));
    add_plain("fleet_traced_grants", static_cast<double>(traced), "grants");
  }
  rep.add(count_result("fleet_server_conns_peak", b, peak_server.load(), "connections", max_conn,
                       "<= max_connections (" + std::to_string(max_conn) + ")", "the server's max_connections"));
  add_plain("fleet_client_conns_peak", peak_clients.load(), "connections");
}

}  // namespace

void run_fleet(const options& o, const std::vector<combo>& combos, report& rep) {
  const bool tiny = o.size == size_kind::tiny;
  const combo* pg = nullptr;
  const combo* my = nullptr;
  for (const auto& c : combos) {
    if (c.kind == dblock::dialect::postgresql) pg = &c;
    if (c.kind == dblock::dialect::mysql) my = &c;
  }
  std::string bouncer;
  if (pg) {
    if (auto u = env("DBLOCK_TEST_PGBOUNCER_URL"))
      bouncer = with_option(via(*u, pg->url), "pooler=transaction");
    else if (o.require_all)
      rep.fail("fleet: DBLOCK_TEST_PGBOUNCER_URL is not set (DBLOCK_TEST_REQUIRE_ALL=1)");
    else
      note("fleet: DBLOCK_TEST_PGBOUNCER_URL is not set: no PgBouncer figures");
  }
  std::vector<conn_case> cases;
  if (pg) {
    cases.push_back({"pqxx_postgresql", pg->url, pg->url, pg->kind, "shared", true, false});
    cases.push_back({"pqxx_postgresql", pg->url, pg->url, pg->kind, "database", true, false});
    cases.push_back({"pqxx_postgresql", pg->url, pg->url, pg->kind, "database", false, false});
    if (!bouncer.empty()) {
      cases.push_back({"pqxx_pgbouncer", bouncer, pg->url, pg->kind, "shared", true, true});
      cases.push_back({"pqxx_pgbouncer", bouncer, pg->url, pg->kind, "database", true, true});
    }
  }
  if (my) {
    cases.push_back({"mysql_mariadb", my->url, my->url, my->kind, "shared", true, false});
    cases.push_back({"mysql_mariadb", my->url, my->url, my->kind, "database", true, false});
  }
  note("fleet: connections per process (a lock held and a waiter per session)");
  run_connections(o, cases, rep);
  if (pg && !bouncer.empty())
    run_load(o, {"pqxx_pgbouncer", bouncer, pg->url, pg->kind, "shared", tiny ? 3 : o.fleet_procs_pg, true}, rep);
  if (my) run_load(o, {"mysql_mariadb", my->url, my->url, my->kind, "database", tiny ? 4 : o.fleet_procs_mysql, false}, rep);
}

// ------------------------------------------------------------------ the fleet process

int fleet_main(int argc, char** argv) {
  std::map<std::string, std::string> a;
  for (int i = 2; i + 1 < argc; i += 2) a[argv[i]] = argv[i + 1];
  const char* url = std::getenv("DBLOCK_BENCH_URL");
  const std::string role = a["--role"];
  if (!url || (role != "conn" && role != "load") || a["--tag"].empty()) {
    std::cerr << "dblock_bench fleet-proc: needs DBLOCK_BENCH_URL, --role conn|load, --tag TAG\n";
    return 64;
  }
  std::atomic<int> errors{0};
  std::mutex err_mu;
  int messages = 0;
  auto error = [&](const std::string& what) {
    ++errors;
    std::lock_guard l(err_mu);
    if (messages++ < 3) std::cerr << "dblock_bench fleet-proc " << a["--tag"] << ": " << what << "\n";
  };
  try {
    dblock::open_options oo;
    oo.application_name = a["--tag"];
    auto db = dblock::open(url, oo);
    const int n = std::stoi(a["--sessions"]);
    dblock::session_options so;
    so.renew_on = a["--renew-on"] == "database" ? dblock::renewal_connection::database
                                                : dblock::renewal_connection::shared;
    if (a.count("--listen")) so.listen = a["--listen"] == "1";
    if (a.count("--ttl-ms")) so.ttl = milliseconds(std::stoi(a["--ttl-ms"]));
    std::vector<std::unique_ptr<dblock::session>> sessions;
    for (int i = 0; i < n; ++i) sessions.push_back(std::make_unique<dblock::session>(db, so));
    std::vector<std::thread> threads;
    if (role == "conn") {
      std::vector<dblock::lease> holds;
      for (int i = 0; i < n; ++i)
        holds.push_back(sessions[i]->acquire("fleet:own:" + a["--tag"] + ":" + std::to_string(i), milliseconds(10'000)));
      for (int i = 0; i < n; ++i)
        threads.emplace_back([&, i] {
          try {
            auto l = sessions[i]->acquire(a["--blocked"] + std::to_string(i), milliseconds(120'000));
            l.release();
          } catch (const std::exception& e) {
            error(e.what());
          }
        });
      std::cout << "ready" << std::endl;
      std::string stop;
      std::cin >> stop;
      for (auto& t : threads) t.join();
      for (auto& h : holds) h.release();
      std::cout << "result " << errors << std::endl;
      return errors == 0 ? 0 : 1;
    }
    // load
    const int names = std::stoi(a["--names"]);
    const int first = std::stoi(a["--first"]);
    const int hold_ms = std::stoi(a["--hold-ms"]);
    db.ping();
    const auto [from, end] = ready_then_window();
    std::vector<std::vector<grant_rec>> grants(n);
    for (int i = 0; i < n; ++i)
      threads.emplace_back([&, i] {
        const std::string name = "fleet:hot:" + std::to_string((first + i) % names);
        while (bench_clock::now() < end) {
          const auto t0 = bench_clock::now();
          try {
            auto l = sessions[i]->acquire(name, milliseconds(60'000));
            const auto t1 = bench_clock::now();
            std::this_thread::sleep_for(milliseconds(hold_ms));
            l.release();
            if (t1 >= from && t1 <= end) grants[i].push_back({mono_us(t0), mono_us(t1)});
          } catch (const std::exception& e) {
            error(e.what());
          }
        }
      });
    for (auto& t : threads) t.join();
    for (int i = 0; i < n; ++i) {
      std::ostringstream line;
      line << "session " << (first + i) % names << ' ' << grants[i].size();
      for (const auto& g : grants[i]) line << ' ' << g.asked << ' ' << g.granted;
      std::cout << line.str() << '\n';
    }
    std::cout << "done " << errors << std::endl;
    return 0;
  } catch (const std::exception& e) {
    error(e.what());
    std::cout << "failed" << std::endl;
    return 1;
  }
}

}  // namespace dblock_bench
