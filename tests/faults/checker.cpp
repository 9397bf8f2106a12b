// tests/faults/checker.cpp — see checker.hpp. The event vocabulary is written by
// dblock_workload.cpp (worker side) and documented in docs/correctness.md.
#include "faults/checker.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

namespace dblock::faults {

namespace {

constexpr std::int64_t never = std::numeric_limits<std::int64_t>::max();

std::string str(const json& j, const char* k) {
  auto it = j.find(k);
  if (it == j.end() || it->is_null()) return {};
  return it->is_string() ? it->get<std::string>() : it->dump();
}
std::int64_t num(const json& j, const char* k, std::int64_t dflt = 0) {
  auto it = j.find(k);
  if (it == j.end() || !it->is_number()) return dflt;
  return it->get<std::int64_t>();
}
// obj[key] += 1, creating both as needed.
void bump(json& obj, const std::string& key) {
  if (!obj.is_object()) obj = json::object();
  obj[key] = obj.value(key, 0) + 1;
}
std::string ms(std::int64_t ns) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << static_cast<double>(ns) / 1e6 << " ms";
  return o.str();
}

// One invoked operation and its completion (if any).
struct op_record {
  std::string id;     // "<worker>/<thread>/<n>"
  std::string w;
  std::int64_t t = 0;
  std::string f;
  const json* invoke = nullptr;
  const json* done = nullptr;  // ok / fail / info; nullptr = never completed (killed)
  [[nodiscard]] std::string outcome() const { return done ? str(*done, "ev") : "pending"; }
};

// One grant of a lock (an acquire that completed ok).
struct grant {
  std::string op;  // acquire op id
  std::string w;
  std::int64_t t = 0;
  std::string lock;
  bool election = false;       // a leadership (campaign ... resign), not a lock grant
  std::int64_t fence = 0;
  std::string mode = "exclusive";  // exclusive (lease lock), read, write, permit
  std::int64_t permits = 0;        // a permit's semaphore count
  std::int64_t invoked = 0;    // acquire invocation
  std::int64_t completed = 0;  // acquire completion: start of the window
  std::int64_t promise = 0;    // latest deadline observed before acting
  std::int64_t released = never;  // release invocation
  std::int64_t observed_lost = never;
  // (time, what) pieces of evidence that the lease was gone, with the promise known then.
  struct evidence {
    std::int64_t at;
    std::int64_t promise_then;
    std::string what;
  };
  std::vector<evidence> loss;
  [[nodiscard]] std::int64_t end() const { return std::min({released, observed_lost, promise}); }
  [[nodiscard]] std::string who() const {
    return "fence " + std::to_string(fence) + " (" + w + " thread " + std::to_string(t) + ")";
  }
};

// An unfenced action of a holder (recorded as "act"): a side effect no token protects.
struct action {
  std::string w;
  std::int64_t t = 0;
  std::int64_t fence = 0;
  std::int64_t at = 0;
  [[nodiscard]] std::string who() const {
    return "fence " + std::to_string(fence) + " (" + w + " thread " + std::to_string(t) + ")";
  }
};

struct checker {
  const check_options& opts;
  check_report rep;
  std::map<std::string, op_record> ops;  // by id
  std::vector<grant> grants;
  std::map<std::string, std::vector<action>> actions;  // by lock
  std::map<std::string, std::size_t> grant_by_holder;  // "<w>/<t>/<lock>/<fence>" -> grants index

  explicit checker(const check_options& o) : opts(o) {}

  void add(const std::string& kind, const std::string& detail) {
    ++rep.violation_counts[kind];
    if (rep.violations.size() < opts.max_details) rep.violations.push_back({kind, detail});
  }

  static std::string op_id(const json& e) {
    return str(e, "w") + "/" + std::to_string(num(e, "t")) + "/" + std::to_string(num(e, "op"));
  }
  static std::string holder_key(const std::string& w, std::int64_t t, const std::string& lock, std::int64_t fence) {
    return w + "/" + std::to_string(t) + "/" + lock + "/" + std::to_string(fence);
  }

  // ------------------------------------------------------------------ operations
  void index_ops(const std::vector<const json*>& evs) {
    for (const json* e : evs) {
      const std::string ev = str(*e, "ev");
      if (ev != "invoke" && ev != "ok" && ev != "fail" && ev != "info") continue;
      auto& o = ops[op_id(*e)];
      if (ev == "invoke") {
        o.id = op_id(*e);
        o.w = str(*e, "w");
        o.t = num(*e, "t");
        o.f = str(*e, "f");
        o.invoke = e;
      } else if (!o.done) {
        o.done = e;
      }
    }
    json by_f = json::object();
    std::size_t invoked = 0, indeterminate = 0, commit_unknown = 0;
    for (auto& [id, o] : ops) {
      if (!o.invoke) continue;
      ++invoked;
      const std::string out = o.outcome();
      bump(by_f[o.f], out);
      if (out == "info" || out == "pending") ++indeterminate;
      if (out == "info" && str(*o.done, "error") == "commit_unknown") ++commit_unknown;
    }
    rep.stats["operations"] = invoked;
    rep.stats["indeterminate"] = indeterminate;  // killed mid-operation or outcome unknown
    rep.stats["commit_unknown"] = commit_unknown;
    rep.stats["by_function"] = by_f;
  }

  // ------------------------------------------------------------------ locks
  void build_grants(const std::vector<const json*>& evs) {
    // One pass in time order. A thread holds one lease at a time, so an event naming
    // (worker, thread, lock, fence) belongs to that thread's latest grant of it (the same
    // fence twice = a re-entrant grant: the earlier release's outcome was unknown and the
    // row was still ours).
    for (const json* e : evs) {
      const std::string ev = str(*e, "ev");
      const std::string f = str(*e, "f");
      const std::int64_t m = num(*e, "m");
      if (ev == "ok" && (f == "acquire" || f == "campaign")) {
        auto o = ops.find(op_id(*e));
        if (o == ops.end() || !o->second.invoke) continue;
        grant g;
        g.op = o->first;
        g.w = o->second.w;
        g.t = o->second.t;
        g.lock = str(*o->second.invoke, "lock");
        g.election = f == "campaign";
        g.fence = num(*e, "fence");
        if (e->contains("mode")) g.mode = str(*e, "mode");
        g.permits = num(*e, "permits");
        g.invoked = num(*o->second.invoke, "m");
        g.completed = m;
        g.promise = num(*e, "until", m);
        grant_by_holder[holder_key(g.w, g.t, g.lock, g.fence)] = grants.size();
        grants.push_back(std::move(g));
        continue;
      }
      if ((ev == "ok" || ev == "fail") && (f == "release" || f == "write" || f == "resign")) {
        // Completions that prove the row was no longer ours: a release refused with
        // lock_lost, a verified write refused by verify_in.
        auto o = ops.find(op_id(*e));
        if (o == ops.end() || !o->second.invoke) continue;
        const json& inv = *o->second.invoke;
        const bool refused_release = (f == "release" || f == "resign") && ev == "fail" && str(*e, "error") == "lock_lost";
        const bool refused_verify = f == "write" && ev == "ok" && !e->value("accepted", true) &&
                                    str(*e, "reason") == "lock_lost";
        if (!refused_release && !refused_verify) continue;
        auto it = grant_by_holder.find(holder_key(o->second.w, o->second.t, str(inv, "lock"), num(inv, "fence")));
        if (it == grant_by_holder.end()) continue;
        // Compared with the promise the worker held when it invoked the operation.
        grants[it->second].loss.push_back(
            {m, num(inv, "until", 0), refused_release ? "release found the row gone" : "verify_in found the row gone"});
        continue;
      }
      if (!e->contains("fence") || !e->contains("lock")) continue;
      if (ev == "act") {
        actions[str(*e, "lock")].push_back({str(*e, "w"), num(*e, "t"), num(*e, "fence"), m});
        continue;
      }
      auto it = grant_by_holder.find(holder_key(str(*e, "w"), num(*e, "t"), str(*e, "lock"), num(*e, "fence")));
      if (it == grant_by_holder.end()) continue;
      grant& g = grants[it->second];
      if (ev == "invoke" && (f == "write" || f == "release" || f == "lead_write" || f == "resign")) {
        if (f == "release" || f == "resign") g.released = std::min(g.released, m);
        if (e->contains("until")) g.promise = std::max(g.promise, num(*e, "until"));
      } else if (ev == "lost" && m < g.released) {
        // Seen by the worker (is_held() false) or by the library's on_lost callback, while
        // still holding (news after the release began concern the release: see above).
        if (str(*e, "source") == "observed") g.observed_lost = std::min(g.observed_lost, m);
        g.loss.push_back({m, g.promise, "reported lost (" + str(*e, "source") + ": " + str(*e, "reason") + ")"});
      }
    }
  }

  static bool same_owner(const grant& a, const grant& b) { return a.w == b.w && a.t == b.t; }

  // Read-write locks and semaphores, windows sorted by start: a writer's window may overlap
  // no other (reader_writer_overlap beside a reader, overlapping_holders beside a writer);
  // at no instant may more permits be held than the semaphore has (permit_oversubscribed).
  void check_family(const std::string& lock, const std::vector<const grant*>& w) {
    std::vector<const grant*> active;
    for (const grant* g : w) {
      active.erase(std::remove_if(active.begin(), active.end(),
                                  [&](const grant* a) { return g->completed + opts.tolerance_ns >= a->end(); }),
                   active.end());
      if (g->mode == "permit") {
        if (g->permits > 0 && static_cast<std::int64_t>(active.size()) + 1 > g->permits)
          add("permit_oversubscribed", "semaphore " + lock + ": " + g->who() + " was granted while " +
                                           std::to_string(active.size()) + " of its " + std::to_string(g->permits) +
                                           " permits were still held (the earliest by " + active.front()->who() + ")");
      } else {
        for (const grant* a : active) {
          if (g->mode != "write" && a->mode != "write") continue;  // readers share
          const bool both = g->mode == "write" && a->mode == "write";
          add(both ? "overlapping_holders" : "reader_writer_overlap",
              "lock " + lock + ": " + g->mode + " " + g->who() + " was granted " + ms(a->end() - g->completed) +
                  " before the window of " + a->mode + " " + a->who() + " ended");
          break;
        }
      }
      active.push_back(g);
    }
  }

  void check_locks() {
    std::map<std::string, std::vector<const grant*>> by_lock;
    for (const auto& g : grants) by_lock[g.lock].push_back(&g);
    std::size_t windows = 0, lost_leases = 0;
    for (auto& [lock, gs] : by_lock) {
      // Duplicate fences.
      // (The same owner may get its grant's token again: a re-entrant acquire.)
      std::map<std::int64_t, const grant*> by_fence;
      for (const grant* g : gs) {
        auto [it, fresh] = by_fence.emplace(g->fence, g);
        if (!fresh && !same_owner(*it->second, *g))
          add("duplicate_fence", "lock " + lock + ": " + it->second->who() + " and " + g->who() + " share a token");
      }
      // Overlapping validity windows: sweep by window start.
      std::vector<const grant*> w;
      for (const grant* g : gs)
        if (g->end() > g->completed) w.push_back(g);
      windows += w.size();
      std::sort(w.begin(), w.end(), [](const grant* a, const grant* b) { return a->completed < b->completed; });
      const bool family = std::any_of(gs.begin(), gs.end(), [](const grant* g) { return g->mode != "exclusive"; });
      if (family) check_family(lock, w);
      const grant* longest = nullptr;
      for (const grant* g : family ? std::vector<const grant*>{} : w) {
        if (longest && g->completed + opts.tolerance_ns < longest->end()) {
          if (g->election || longest->election)
            add("two_leaders", "election " + lock + ": " + g->who() + " became leader (campaign returned) " +
                                   ms(longest->end() - g->completed) + " before the leadership of " + longest->who() +
                                   " ended");
          else
            add("overlapping_holders", "lock " + lock + ": " + g->who() + " was granted (acquire returned) " +
                                           ms(longest->end() - g->completed) + " before the window of " +
                                           longest->who() + " ended");
        }
        if (!longest || g->end() > longest->end()) longest = g;
      }
      // Tokens grow with real time: a grant invoked after another completed has a larger one.
      std::vector<const grant*> by_completion(gs), by_invocation(gs);
      std::sort(by_completion.begin(), by_completion.end(),
                [](const grant* a, const grant* b) { return a->completed < b->completed; });
      std::sort(by_invocation.begin(), by_invocation.end(),
                [](const grant* a, const grant* b) { return a->invoked < b->invoked; });
      std::size_t p = 0;
      const grant* max_before = nullptr;
      for (const grant* g : by_invocation) {
        while (p < by_completion.size() && by_completion[p]->completed < g->invoked) {
          if (!max_before || by_completion[p]->fence > max_before->fence) max_before = by_completion[p];
          ++p;
        }
        if (max_before && (max_before->fence > g->fence || (max_before->fence == g->fence && !same_owner(*max_before, *g))))
          add("fence_not_increasing", "lock " + lock + ": " + g->who() + " was requested after " + max_before->who() +
                                          " had been granted, yet its token is not larger");
      }
      // A holder told its lease was gone while its promised deadline still ran.
      for (const grant* g : gs) {
        if (!g->loss.empty()) ++lost_leases;
        for (const auto& ev : g->loss) {
          if (ev.at + opts.tolerance_ns < ev.promise_then) {
            add("lost_before_deadline", "lock " + lock + ": " + g->who() + " " + ev.what + " " +
                                            ms(ev.promise_then - ev.at) + " before its promised deadline");
            break;
          }
        }
      }
    }
    check_actions(by_lock);
    rep.stats["grants"] = grants.size();
    rep.stats["lock_windows"] = windows;
    rep.stats["leases_lost"] = lost_leases;
  }

  // Unfenced actions: nothing downstream rejects a stale one, so each must happen before
  // the next holder's grant in real time. CLOCK_MONOTONIC is one clock for every process
  // of the machine, so no tolerance: an action at or after the moment a later grant's
  // acquire returned overlapped that holder. The next grant is the one with the smallest
  // larger token; a grant whose outcome is unknown is not in the list, so an action is
  // held to the earliest known grant with a larger token (sound: tokens grow with time).
  void check_actions(const std::map<std::string, std::vector<const grant*>>& by_lock) {
    std::size_t n = 0;
    for (auto& [lock, acts] : actions) {
      n += acts.size();
      auto gl = by_lock.find(lock);
      if (gl == by_lock.end()) continue;
      std::vector<const grant*> by_fence(gl->second);
      std::sort(by_fence.begin(), by_fence.end(), [](const grant* a, const grant* b) { return a->fence < b->fence; });
      // first_after[i] = the grant among by_fence[i..] whose acquire returned first.
      std::vector<const grant*> first_after(by_fence.size() + 1, nullptr);
      for (std::size_t i = by_fence.size(); i-- > 0;) {
        const grant* nx = first_after[i + 1];
        first_after[i] = !nx || by_fence[i]->completed < nx->completed ? by_fence[i] : nx;
      }
      for (const action& a : acts) {
        auto it = std::upper_bound(by_fence.begin(), by_fence.end(), a.fence,
                                   [](std::int64_t f, const grant* g) { return f < g->fence; });
        const grant* next = first_after[static_cast<std::size_t>(it - by_fence.begin())];
        if (next && a.at >= next->completed)
          add("late_unfenced_action", "lock " + lock + ": " + a.who() + " acted " + ms(a.at - next->completed) +
                                          " after " + next->who() + " was granted (acquire returned)");
      }
    }
    rep.stats["unfenced_actions"] = n;
  }

  // ------------------------------------------------------------------ fenced writes
  void check_writes(const json& fin) {
    std::size_t accepted = 0, rejected = 0, unknown = 0;
    json by_mode = json::object();
    for (auto& [id, o] : ops) {
      if (!o.invoke || o.f != "write") continue;
      const std::string mode = str(*o.invoke, "mode");
      std::string out = o.outcome();
      if (out == "ok") out = o.done->value("accepted", false) ? "accepted" : "rejected";
      if (out == "accepted") ++accepted;
      else if (out == "rejected") ++rejected;
      else ++unknown;
      bump(by_mode[mode], out);
    }
    rep.stats["writes_accepted"] = accepted;
    rep.stats["writes_rejected"] = rejected;
    rep.stats["writes_unknown"] = unknown;
    rep.stats["writes_by_mode"] = by_mode;
    if (fin.is_null()) return;

    // The server's commit order per resource: fences never go down.
    std::map<std::int64_t, std::pair<std::int64_t, std::string>> last;  // resource -> (fence, op)
    std::set<std::string> logged;
    std::size_t rows = 0;
    for (const auto& row : fin.value("log", json::array())) {
      // [seq, resource, fence, op, kind]
      const std::int64_t res = row.at(1).get<std::int64_t>();
      const std::int64_t fence = row.at(2).get<std::int64_t>();
      const std::string op = row.at(3).get<std::string>();
      ++rows;
      if (!logged.insert(op).second) add("phantom_write", "write " + op + " is in the log twice");
      auto it = last.find(res);
      if (it != last.end() && fence < it->second.first)
        add("stale_write_accepted", "resource " + std::to_string(res) + ": write " + op + " with token " +
                                        std::to_string(fence) + " was accepted after write " + it->second.second +
                                        " with token " + std::to_string(it->second.first));
      if (it == last.end() || fence >= it->second.first) last[res] = {fence, op};  // the highest token so far
      auto o = ops.find(op);
      if (o == ops.end() || !o->second.invoke) {
        add("phantom_write", "write " + op + " is in the log but was never invoked");
        continue;
      }
      const std::string out = o->second.outcome();
      if (out == "fail" || (out == "ok" && !o->second.done->value("accepted", false)))
        add("phantom_write", "write " + op + " was reported " +
                                 (out == "fail" ? "failed (rolled back)" : "refused") + " but is in the database");
    }
    rep.stats["log_rows"] = rows;
    for (auto& [id, o] : ops) {
      if (!o.invoke || o.f != "write" || !o.done || str(*o.done, "ev") != "ok") continue;
      if (o.done->value("accepted", false) && !logged.count(id))
        add("lost_committed_write", "write " + id + " (token " + std::to_string(num(*o.invoke, "fence")) +
                                        ") was acknowledged as committed but is not in the database");
    }
    // Each resource row carries the value and token of the last write in its log.
    std::map<std::int64_t, std::string> last_op;
    std::map<std::int64_t, std::int64_t> last_fence;
    for (const auto& row : fin.value("log", json::array())) {
      last_op[row.at(1).get<std::int64_t>()] = row.at(3).get<std::string>();
      last_fence[row.at(1).get<std::int64_t>()] = row.at(2).get<std::int64_t>();
    }
    for (const auto& row : fin.value("resources", json::array())) {
      // [id, value, fence]
      const std::int64_t res = row.at(0).get<std::int64_t>();
      const std::string value = row.at(1).is_null() ? "" : row.at(1).get<std::string>();
      const std::int64_t fence = row.at(2).get<std::int64_t>();
      const std::string want = last_op.count(res) ? last_op[res] : "";
      const std::int64_t want_fence = last_fence.count(res) ? last_fence[res] : 0;
      if (value != want || fence != want_fence)
        add("resource_state_mismatch", "resource " + std::to_string(res) + " holds value '" + value + "' token " +
                                           std::to_string(fence) + " but its log ends with '" + want + "' token " +
                                           std::to_string(want_fence));
    }
  }

  // ------------------------------------------------------------------ leaders
  // The leaders' writes in server commit order (el_log): a leader whose token is below one
  // already written acted as leader after its successor did - two leaders at once.
  void check_leaders(const json& fin) {
    std::size_t accepted = 0, rejected = 0;
    for (auto& [id, o] : ops) {
      if (!o.invoke || o.f != "lead_write" || !o.done || str(*o.done, "ev") != "ok") continue;
      if (o.done->value("accepted", false)) ++accepted;
      else ++rejected;
    }
    rep.stats["leader_writes_accepted"] = accepted;
    rep.stats["leader_writes_rejected"] = rejected;
    if (fin.is_null()) return;
    std::map<std::int64_t, std::pair<std::int64_t, std::string>> last;  // election -> (highest token, op)
    std::size_t rows = 0;
    for (const auto& row : fin.value("leader_log", json::array())) {
      // [seq, election, fence, op]
      const std::int64_t el = row.at(1).get<std::int64_t>();
      const std::int64_t fence = row.at(2).get<std::int64_t>();
      const std::string op = row.at(3).get<std::string>();
      ++rows;
      auto it = last.find(el);
      if (it != last.end() && fence < it->second.first)
        add("two_leaders", "election E" + std::to_string(el) + ": leader write " + op + " with token " +
                               std::to_string(fence) + " was accepted after leader write " + it->second.second +
                               " with token " + std::to_string(it->second.first));
      if (it == last.end() || fence >= it->second.first) last[el] = {fence, op};
    }
    rep.stats["leader_log_rows"] = rows;
  }

  // ------------------------------------------------------------------ idempotency
  void check_charges(const json& fin) {
    std::map<std::string, std::map<std::string, std::vector<std::string>>> answers;  // key -> body -> ops
    json outcomes = json::object();
    for (auto& [id, o] : ops) {
      if (!o.invoke || o.f != "charge" || !o.done || str(*o.done, "ev") != "ok") continue;
      const std::string key = str(*o.invoke, "key");
      const std::string outcome = str(*o.done, "outcome");
      bump(outcomes, outcome);
      if (outcome == "mismatch")
        add("idempotency_mismatch", "key " + key + ": " + id + " was told 'mismatch' for an identical request");
      if (outcome == "started" || outcome == "replay") answers[key][str(*o.done, "body")].push_back(id);
    }
    rep.stats["charge_outcomes"] = outcomes;
    rep.stats["keys_answered"] = answers.size();
    for (auto& [key, bodies] : answers)
      if (bodies.size() > 1) {
        std::string d = "key " + key + " got " + std::to_string(bodies.size()) + " different answers:";
        for (auto& [b, who] : bodies) d += " '" + b + "' (" + who.front() + (who.size() > 1 ? ", ..." : "") + ")";
        add("two_answers", d);
      }
    if (fin.is_null()) return;

    std::map<std::string, std::vector<std::pair<std::string, std::string>>> effects;  // key -> (charge_id, op)
    std::size_t n = 0;
    for (const auto& row : fin.value("charges", json::array())) {
      // [id, key, charge_id, op]
      const std::string key = row.at(1).get<std::string>();
      const std::string cid = row.at(2).get<std::string>();
      const std::string op = row.at(3).get<std::string>();
      ++n;
      effects[key].push_back({cid, op});
      auto o = ops.find(op);
      if (o == ops.end() || !o->second.invoke) {
        add("phantom_side_effect", "key " + key + ": charge " + cid + " by an operation never invoked");
      } else if (o->second.outcome() == "fail") {
        add("phantom_side_effect", "key " + key + ": charge " + cid + " by " + op +
                                       ", which was reported failed (rolled back)");
      }
    }
    rep.stats["side_effects"] = n;
    for (auto& [key, list] : effects)
      if (list.size() > 1) {
        std::string d = "key " + key + " was charged " + std::to_string(list.size()) + " times:";
        for (auto& [cid, op] : list) d += " " + cid;
        add("double_side_effect", d);
      }
    std::map<std::string, json> records;
    const bool have_records = fin.contains("records");
    for (const auto& r : fin.value("records", json::array())) records[r.value("key", "")] = r;
    for (auto& [key, bodies] : answers) {
      for (auto& [body, who] : bodies) {
        auto it = effects.find(key);
        const bool found = it != effects.end() && std::any_of(it->second.begin(), it->second.end(),
                                                              [&](const auto& p) { return p.first == body; });
        if (it == effects.end())
          add("lost_committed_outcome", "key " + key + " was answered '" + body + "' (" + who.front() +
                                            ") but no charge is in the database");
        else if (!found)
          add("answer_differs_from_effect", "key " + key + " was answered '" + body + "' (" + who.front() +
                                                ") but the stored charge is '" + it->second.front().first + "'");
        if (!have_records) continue;
        auto rec = records.find(key);
        if (rec == records.end())
          add("lost_committed_outcome", "key " + key + " was answered '" + body + "' but has no idempotency record");
        else if (rec->second.value("status", "") == "completed" && rec->second.value("body", "") != body)
          add("answer_differs_from_effect", "key " + key + " was answered '" + body + "' but its record stores '" +
                                                rec->second.value("body", "") + "'");
      }
    }
  }

  // ------------------------------------------------------------------ faults, clocks
  void count_faults(const std::vector<json>& faults, const std::vector<const json*>& evs) {
    json by_kind = json::object();
    for (const auto& f : faults)
      if (str(f, "ev") == "fault") bump(by_kind, str(f, "kind"));
    rep.stats["faults"] = by_kind;
    // Wall-clock jumps seen inside the workers: (wall - monotonic) moving between two
    // consecutive events of one process.
    std::map<std::string, std::int64_t> prev;  // worker -> last offset
    std::size_t jumps = 0;
    std::set<std::string> workers;
    for (const json* e : evs) {
      const std::string w = str(*e, "w");
      if (w.empty() || !e->contains("r")) continue;
      workers.insert(w);
      const std::int64_t off = num(*e, "r") - num(*e, "m");
      auto it = prev.find(w);
      if (it != prev.end() && std::abs(off - it->second) > opts.clock_jump_ns) ++jumps;
      prev[w] = off;
    }
    // The real offset is the driver's (its clock is never faked).
    std::int64_t base = 0;
    bool have_base = false;
    for (const auto& f : faults)
      if (f.contains("r") && f.contains("m")) {
        base = num(f, "r") - num(f, "m");
        have_base = true;
        break;
      }
    std::int64_t max_skew = 0;
    if (have_base)
      for (const json* e : evs)
        if (e->contains("r")) max_skew = std::max(max_skew, std::abs(num(*e, "r") - num(*e, "m") - base));
    rep.stats["clock_jumps_observed"] = jumps;
    rep.stats["max_clock_skew_s"] = static_cast<double>(max_skew) / 1e9;
    rep.stats["worker_processes"] = workers.size();
  }
};

}  // namespace

std::size_t check_report::violation_total() const {
  std::size_t n = 0;
  for (auto& [k, c] : violation_counts) n += c;
  return n;
}

json check_report::to_json() const {
  json j = stats;
  j["violations"] = violation_total();
  j["violations_by_kind"] = violation_counts;
  json d = json::array();
  for (const auto& v : violations) d.push_back({{"kind", v.kind}, {"detail", v.detail}});
  j["violation_details"] = d;
  return j;
}

check_report check_history(const std::vector<json>& events, const std::vector<json>& faults, const json& final_state,
                           const check_options& opts) {
  checker c(opts);
  std::vector<const json*> evs;
  evs.reserve(events.size());
  for (const auto& e : events)
    if (e.is_object()) evs.push_back(&e);
  std::stable_sort(evs.begin(), evs.end(), [](const json* a, const json* b) { return num(*a, "m") < num(*b, "m"); });
  c.index_ops(evs);
  c.build_grants(evs);
  c.check_locks();
  c.check_writes(final_state);
  c.check_leaders(final_state);
  c.check_charges(final_state);
  c.count_faults(faults, evs);
  if (final_state.is_null() || !final_state.value("complete", false))
    c.add("missing_final_state", "the run did not record the database's final state");
  return std::move(c.rep);
}

check_report check_run_dir(const std::filesystem::path& dir, const check_options& opts) {
  std::vector<json> events;
  std::size_t torn = 0, files = 0;
  if (std::filesystem::is_directory(dir / "history")) {
    std::vector<std::filesystem::path> paths;
    for (const auto& de : std::filesystem::directory_iterator(dir / "history"))
      if (de.path().extension() == ".jsonl") paths.push_back(de.path());
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths) {
      ++files;
      auto v = read_jsonl(p, &torn);
      events.insert(events.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
    }
  }
  auto faults = read_jsonl(dir / "faults.jsonl");
  json fin;
  if (std::filesystem::exists(dir / "final.json")) {
    std::ifstream in(dir / "final.json");
    try {
      fin = json::parse(in);
    } catch (const json::exception&) {
      fin = nullptr;
    }
  }
  auto r = check_history(events, faults, fin, opts);
  r.stats["history_files"] = files;
  r.stats["torn_lines"] = torn;
  r.stats["events"] = events.size();
  return r;
}

std::string format_report(const check_report& r) {
  std::ostringstream o;
  const json& s = r.stats;
  o << "operations " << s.value("operations", 0) << " (events " << s.value("events", 0) << ", worker processes "
    << s.value("worker_processes", 0) << ")\n";
  o << "grants " << s.value("grants", 0) << ", leases lost " << s.value("leases_lost", 0) << ", writes accepted "
    << s.value("writes_accepted", 0) << " / rejected " << s.value("writes_rejected", 0) << " / unknown "
    << s.value("writes_unknown", 0) << "\n";
  o << "charges " << (s.contains("charge_outcomes") ? s["charge_outcomes"].dump() : "{}") << ", keys answered "
    << s.value("keys_answered", 0) << ", side effects " << s.value("side_effects", 0) << "\n";
  o << "faults " << (s.contains("faults") ? s["faults"].dump() : "{}") << ", clock jumps observed "
    << s.value("clock_jumps_observed", 0) << "\n";
  o << "violations " << r.violation_total();
  if (!r.violation_counts.empty()) o << " " << json(r.violation_counts).dump();
  o << "\n";
  for (const auto& v : r.violations) o << "  " << v.kind << ": " << v.detail << "\n";
  return o.str();
}

}  // namespace dblock::faults
