// tests/faults/checker_test.cpp — the checker (checker.hpp) on small hand-written
// histories: each violation kind is reported when present and not otherwise, unknown
// outcomes are accepted either way, torn lines are skipped; dblock_check's exit status.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "faults/checker.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace dblock::faults {
namespace {

constexpr std::int64_t ms = 1'000'000;  // ns

// Builds one worker thread's history.
struct hist {
  std::string w;
  int t = 0;
  std::vector<json>* out;
  std::int64_t op = 0;

  std::int64_t invoke(std::int64_t m, const char* f, json fields = json::object()) {
    fields["ev"] = "invoke";
    fields["f"] = f;
    fields["op"] = ++op;
    fields["m"] = m;
    put(fields);
    return op;
  }
  void done(std::int64_t op_no, std::int64_t m, const char* ev, const char* f, json fields = json::object()) {
    fields["ev"] = ev;
    fields["f"] = f;
    fields["op"] = op_no;
    fields["m"] = m;
    put(fields);
  }
  void put(json e) {
    e["w"] = w;
    e["t"] = t;
    if (!e.contains("r")) e["r"] = e["m"];
    out->push_back(std::move(e));
  }
  // acquire invoked at i, granted at c with the promise `until`; returns nothing.
  void grant(const std::string& lock, std::int64_t fence, std::int64_t i, std::int64_t c, std::int64_t until) {
    auto o = invoke(i, "acquire", {{"lock", lock}});
    done(o, c, "ok", "acquire", {{"lock", lock}, {"fence", fence}, {"until", until}});
  }
  // A read-write or semaphore grant (mode read, write or permit; permits for a permit).
  void grant_mode(const std::string& lock, const char* mode, std::int64_t fence, std::int64_t i, std::int64_t c,
                  std::int64_t until, std::int64_t permits = 0) {
    auto o = invoke(i, "acquire", {{"lock", lock}, {"mode", mode}});
    json f = {{"lock", lock}, {"fence", fence}, {"until", until}, {"mode", mode}};
    if (permits) f["permits"] = permits;
    done(o, c, "ok", "acquire", f);
  }
  void release(const std::string& lock, std::int64_t fence, std::int64_t at, std::int64_t until, bool ok = true) {
    auto o = invoke(at, "release", {{"lock", lock}, {"fence", fence}, {"until", until}});
    if (ok) done(o, at + ms, "ok", "release");
    else done(o, at + ms, "fail", "release", {{"error", "lock_lost"}});
  }
  std::string write(const std::string& lock, std::int64_t fence, std::int64_t at, const char* outcome, bool accepted,
                    std::int64_t until) {
    auto o = invoke(at, "write", {{"lock", lock}, {"fence", fence}, {"mode", "fenced"}, {"res", 0}, {"until", until}});
    if (std::string(outcome) != "pending") done(o, at + ms, outcome, "write", {{"accepted", accepted}});
    return w + "/" + std::to_string(t) + "/" + std::to_string(o);
  }
  // An unfenced action under the grant (lock, fence) at m.
  void act(const std::string& lock, std::int64_t fence, std::int64_t m) {
    put({{"ev", "act"}, {"lock", lock}, {"fence", fence}, {"m", m}});
  }
  std::string charge(const std::string& key, std::int64_t at, const char* outcome, const std::string& body) {
    auto o = invoke(at, "charge", {{"key", key}});
    json f = {{"key", key}, {"outcome", outcome}};
    if (!body.empty()) f["body"] = body;
    done(o, at + ms, "ok", "charge", f);
    return w + "/" + std::to_string(t) + "/" + std::to_string(o);
  }
};

json empty_final() {
  return {{"log", json::array()}, {"resources", json::array()}, {"charges", json::array()}, {"complete", true}};
}

std::size_t kind(const check_report& r, const char* k) {
  auto it = r.violation_counts.find(k);
  return it == r.violation_counts.end() ? 0 : it->second;
}

TEST(Checker, CleanHistoryHasNoViolation) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev};
  a.grant("L0", 1, 0, 2 * ms, 1000 * ms);
  auto w1 = a.write("L0", 1, 5 * ms, "ok", true, 1000 * ms);
  a.release("L0", 1, 10 * ms, 1000 * ms);
  b.grant("L0", 2, 3 * ms, 12 * ms, 1010 * ms);  // waited, granted after a's release
  auto w2 = b.write("L0", 2, 15 * ms, "ok", true, 1010 * ms);
  b.release("L0", 2, 20 * ms, 1010 * ms);
  json fin = empty_final();
  fin["log"] = {{1, 0, 1, w1, "fenced"}, {2, 0, 2, w2, "fenced"}};
  fin["resources"] = {{0, w2, 2}};
  auto r = check_history(ev, {}, fin);
  EXPECT_EQ(r.violation_total(), 0u) << format_report(r);
  EXPECT_EQ(r.stats["grants"], 2);
  EXPECT_EQ(r.stats["writes_accepted"], 2);
}

TEST(Checker, OverlappingHoldersAreReported) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev};
  a.grant("L0", 1, 0, 2 * ms, 1000 * ms);
  b.grant("L0", 2, 3 * ms, 500 * ms, 1500 * ms);  // granted while a's promise still ran
  a.release("L0", 1, 800 * ms, 1000 * ms);
  b.release("L0", 2, 900 * ms, 1500 * ms);
  auto r = check_history(ev, {}, empty_final());
  EXPECT_EQ(kind(r, "overlapping_holders"), 1u) << format_report(r);
}

TEST(Checker, ReadersShareAndAWriterBesideAReaderIsReported) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev}, c{"w2.1", 0, &ev};
  a.grant_mode("R0", "read", 1, 0, 2 * ms, 1000 * ms);
  b.grant_mode("R0", "read", 2, 1 * ms, 3 * ms, 1000 * ms);  // two readers at once: fine
  a.release("R0", 1, 100 * ms, 1000 * ms);
  b.release("R0", 2, 110 * ms, 1000 * ms);
  c.grant_mode("R0", "write", 3, 5 * ms, 200 * ms, 1200 * ms);  // after both: fine
  c.release("R0", 3, 300 * ms, 1200 * ms);
  auto clean = check_history(ev, {}, empty_final());
  EXPECT_EQ(clean.violation_total(), 0u) << format_report(clean);
  // A writer granted while a reader's window still runs.
  a.grant_mode("R0", "read", 4, 310 * ms, 320 * ms, 1300 * ms);
  c.grant_mode("R0", "write", 5, 311 * ms, 330 * ms, 1330 * ms);
  a.release("R0", 4, 400 * ms, 1300 * ms);
  c.release("R0", 5, 410 * ms, 1330 * ms);
  auto r = check_history(ev, {}, empty_final());
  EXPECT_EQ(kind(r, "reader_writer_overlap"), 1u) << format_report(r);
  EXPECT_EQ(kind(r, "overlapping_holders"), 0u) << format_report(r);
}

TEST(Checker, APermitBeyondTheCountIsReported) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev}, c{"w2.1", 0, &ev};
  a.grant_mode("S0", "permit", 1, 0, 2 * ms, 1000 * ms, 2);
  b.grant_mode("S0", "permit", 2, 1 * ms, 3 * ms, 1000 * ms, 2);  // 2 of 2: fine
  a.release("S0", 1, 100 * ms, 1000 * ms);
  c.grant_mode("S0", "permit", 3, 50 * ms, 150 * ms, 1150 * ms, 2);  // after a's release: fine
  auto clean = check_history(ev, {}, empty_final());
  EXPECT_EQ(clean.violation_total(), 0u) << format_report(clean);
  a.grant_mode("S0", "permit", 4, 160 * ms, 170 * ms, 1170 * ms, 2);  // b and c still hold: permit 3 of 2
  auto r = check_history(ev, {}, empty_final());
  EXPECT_EQ(kind(r, "permit_oversubscribed"), 1u) << format_report(r);
}

// Leaderships: campaign ... resign windows of one election must not overlap, and the
// leaders' writes (el_log, commit order) must not go back to a smaller token.
TEST(Checker, TwoLeadersAtOnceAreReported) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev};
  auto ca = a.invoke(0, "campaign", {{"lock", "E0"}});
  a.done(ca, 2 * ms, "ok", "campaign", {{"lock", "E0"}, {"fence", 1}, {"until", 1000 * ms}});
  auto cb = b.invoke(3 * ms, "campaign", {{"lock", "E0"}});
  b.done(cb, 500 * ms, "ok", "campaign", {{"lock", "E0"}, {"fence", 2}, {"until", 1500 * ms}});  // while a led
  auto ra = a.invoke(800 * ms, "resign", {{"lock", "E0"}, {"fence", 1}, {"until", 1000 * ms}});
  a.done(ra, 801 * ms, "ok", "resign");
  json fin = empty_final();
  fin["leader_log"] = {{1, 0, 2, "w1.1/0/9"}, {2, 0, 1, "w0.1/0/9"}};  // a wrote after b
  auto r = check_history(ev, {}, fin);
  EXPECT_EQ(kind(r, "two_leaders"), 2u) << format_report(r);
  EXPECT_EQ(kind(r, "overlapping_holders"), 0u) << format_report(r);
}

TEST(Checker, LeadersTakingTurnsAreFine) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev};
  auto ca = a.invoke(0, "campaign", {{"lock", "E0"}});
  a.done(ca, 2 * ms, "ok", "campaign", {{"lock", "E0"}, {"fence", 1}, {"until", 1000 * ms}});
  auto ra = a.invoke(100 * ms, "resign", {{"lock", "E0"}, {"fence", 1}, {"until", 1000 * ms}});
  a.done(ra, 101 * ms, "ok", "resign");
  auto cb = b.invoke(3 * ms, "campaign", {{"lock", "E0"}});
  b.done(cb, 102 * ms, "ok", "campaign", {{"lock", "E0"}, {"fence", 2}, {"until", 1100 * ms}});
  json fin = empty_final();
  fin["leader_log"] = {{1, 0, 1, "w0.1/0/9"}, {2, 0, 2, "w1.1/0/9"}};
  auto r = check_history(ev, {}, fin);
  EXPECT_EQ(r.violation_total(), 0u) << format_report(r);
}

TEST(Checker, WindowEndsAtReleaseOrObservedLoss) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev}, c{"w2.1", 0, &ev};
  a.grant("L0", 1, 0, 2 * ms, 1000 * ms);
  a.release("L0", 1, 100 * ms, 1000 * ms);  // released early: its window ends here
  b.grant("L0", 2, 50 * ms, 150 * ms, 1150 * ms);
  // b sees its lease gone (deadline passed while it was stopped), then c is granted.
  b.put({{"ev", "lost"}, {"source", "observed"}, {"lock", "L0"}, {"fence", 2}, {"m", 1200 * ms}, {"reason", "deadline"}});
  c.grant("L0", 3, 1100 * ms, 1160 * ms, 2160 * ms);
  auto r = check_history(ev, {}, empty_final());
  EXPECT_EQ(r.violation_total(), 0u) << format_report(r);
}

TEST(Checker, FenceMustGrowWithRealTime) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev};
  a.grant("L0", 7, 0, 2 * ms, 10 * ms);
  a.release("L0", 7, 5 * ms, 10 * ms);
  b.grant("L0", 5, 20 * ms, 22 * ms, 1000 * ms);  // requested after a completed, smaller token
  auto r = check_history(ev, {}, empty_final());
  EXPECT_EQ(kind(r, "fence_not_increasing"), 1u) << format_report(r);
  // Concurrent requests may get tokens in either order.
  std::vector<json> ev2;
  hist x{"w0.1", 0, &ev2}, y{"w1.1", 0, &ev2};
  x.grant("L0", 7, 0, 20 * ms, 25 * ms);
  x.release("L0", 7, 21 * ms, 25 * ms);
  y.grant("L0", 5, 1 * ms, 5 * ms, 6 * ms);
  EXPECT_EQ(check_history(ev2, {}, empty_final()).violation_total(), 0u);
}

TEST(Checker, ReentrantGrantOfTheSameOwnerMayRepeatItsToken) {
  // The release's outcome was unknown (connection lost): the row stayed ours, and the
  // next acquire re-entered it with the same token.
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev};
  a.grant("L0", 4, 0, 1 * ms, 1000 * ms);
  auto r1 = a.invoke(10 * ms, "release", {{"lock", "L0"}, {"fence", 4}, {"until", 1000 * ms}});
  a.done(r1, 11 * ms, "info", "release", {{"error", "connection error"}});
  a.grant("L0", 4, 20 * ms, 21 * ms, 1020 * ms);
  a.release("L0", 4, 30 * ms, 1020 * ms);
  b.grant("L0", 5, 5 * ms, 40 * ms, 1040 * ms);
  auto r = check_history(ev, {}, empty_final());
  EXPECT_EQ(r.violation_total(), 0u) << format_report(r);
}

TEST(Checker, DuplicateFenceIsReported) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev};
  a.grant("L0", 3, 0, 1 * ms, 2 * ms);
  b.grant("L0", 3, 5 * ms, 6 * ms, 7 * ms);
  auto r = check_history(ev, {}, empty_final());
  EXPECT_EQ(kind(r, "duplicate_fence"), 1u) << format_report(r);
}

TEST(Checker, LossBeforeThePromisedDeadlineIsReported) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev};
  a.grant("L0", 1, 0, 2 * ms, 1000 * ms);
  a.put({{"ev", "lost"}, {"source", "callback"}, {"lock", "L0"}, {"fence", 1}, {"m", 400 * ms}, {"reason", "gone"}});
  a.release("L0", 1, 500 * ms, 1000 * ms, false);
  auto r = check_history(ev, {}, empty_final());
  EXPECT_EQ(kind(r, "lost_before_deadline"), 1u) << format_report(r);
  // After the deadline it is just an expired lease.
  std::vector<json> ev2;
  hist b{"w0.1", 0, &ev2};
  b.grant("L0", 1, 0, 2 * ms, 1000 * ms);
  b.put({{"ev", "lost"}, {"source", "callback"}, {"lock", "L0"}, {"fence", 1}, {"m", 1400 * ms}, {"reason", "gone"}});
  b.release("L0", 1, 1500 * ms, 1000 * ms, false);
  EXPECT_EQ(check_history(ev2, {}, empty_final()).violation_total(), 0u);
}

TEST(Checker, UnfencedActionAfterTheNextGrantIsReported) {
  // a's lease ran out (promise 1000 ms), b was granted at 1500 ms, a kept acting.
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev};
  a.grant("L0", 1, 0, 2 * ms, 1000 * ms);
  a.act("L0", 1, 500 * ms);
  b.grant("L0", 2, 600 * ms, 1500 * ms, 2500 * ms);
  b.act("L0", 2, 1600 * ms);
  a.act("L0", 1, 1700 * ms);  // late: after b's acquire returned
  a.release("L0", 1, 1800 * ms, 1000 * ms, false);
  b.release("L0", 2, 1900 * ms, 2500 * ms);
  auto r = check_history(ev, {}, empty_final());
  EXPECT_EQ(kind(r, "late_unfenced_action"), 1u) << format_report(r);
  EXPECT_EQ(r.violation_total(), 1u) << format_report(r);
  EXPECT_EQ(r.stats["unfenced_actions"], 3);
}

TEST(Checker, UnfencedActionsBeforeTheNextGrantAreFine) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev}, c{"w2.1", 0, &ev};
  a.grant("L0", 1, 0, 2 * ms, 1000 * ms);
  a.act("L0", 1, 10 * ms);
  a.act("L0", 1, 990 * ms);  // just within its lease; b's acquire returns later
  b.grant("L0", 2, 20 * ms, 2000 * ms, 3000 * ms);
  b.act("L0", 2, 2001 * ms);
  b.release("L0", 2, 2100 * ms, 3000 * ms);
  // Another lock's grants do not matter; nor does a grant with a smaller token.
  c.grant("L1", 7, 0, 1 * ms, 5000 * ms);
  a.act("L1", 9, 100 * ms);
  auto r = check_history(ev, {}, empty_final());
  EXPECT_EQ(r.violation_total(), 0u) << format_report(r);
}

TEST(Checker, UnfencedActionIsHeldToTheEarliestKnownLaterGrant) {
  // The grant of token 2 has an unknown outcome (no completion recorded): token 3's grant
  // bounds token 1's actions, and an action at the very instant it returned is late.
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev}, c{"w2.1", 0, &ev};
  a.grant("L0", 1, 0, 2 * ms, 1000 * ms);
  auto lost = b.invoke(5 * ms, "acquire", {{"lock", "L0"}});
  b.done(lost, 1500 * ms, "info", "acquire", {{"error", "connection"}});
  c.grant("L0", 3, 10 * ms, 3000 * ms, 4000 * ms);
  a.act("L0", 1, 2500 * ms);  // after 2's unknown grant, before 3's: not provably late
  a.act("L0", 1, 3000 * ms);  // at 3's grant: late
  auto r = check_history(ev, {}, empty_final());
  EXPECT_EQ(kind(r, "late_unfenced_action"), 1u) << format_report(r);
}

TEST(Checker, StaleWriteAcceptedByTheResourceIsReported) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev};
  auto w1 = b.write("L0", 9, 10 * ms, "ok", true, 100 * ms);
  auto w2 = a.write("L0", 4, 20 * ms, "ok", true, 5 * ms);
  json fin = empty_final();
  fin["log"] = {{1, 0, 9, w1, "fenced"}, {2, 0, 4, w2, "unfenced"}};
  fin["resources"] = {{0, w2, 4}};
  auto r = check_history(ev, {}, fin);
  EXPECT_EQ(kind(r, "stale_write_accepted"), 1u) << format_report(r);
}

TEST(Checker, LostAndPhantomWritesAreReportedUnknownOnesAreNot) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev};
  auto acked = a.write("L0", 1, 10 * ms, "ok", true, 100 * ms);       // acknowledged, missing
  auto refused = a.write("L0", 1, 20 * ms, "ok", false, 100 * ms);    // refused, present
  auto failed = a.write("L0", 1, 30 * ms, "fail", false, 100 * ms);   // rolled back, present
  auto unknown1 = a.write("L0", 1, 40 * ms, "info", false, 100 * ms); // unknown, present: fine
  a.write("L0", 1, 50 * ms, "pending", false, 100 * ms);              // killed, absent: fine
  (void)acked;
  json fin = empty_final();
  fin["log"] = {{1, 0, 1, refused, "fenced"}, {2, 0, 1, failed, "fenced"}, {3, 0, 1, unknown1, "fenced"}};
  fin["resources"] = {{0, unknown1, 1}};
  auto r = check_history(ev, {}, fin);
  EXPECT_EQ(kind(r, "lost_committed_write"), 1u) << format_report(r);
  EXPECT_EQ(kind(r, "phantom_write"), 2u) << format_report(r);
  EXPECT_EQ(r.violation_total(), 3u) << format_report(r);
}

TEST(Checker, ResourceRowMustMatchItsLog) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev};
  auto w1 = a.write("L0", 1, 10 * ms, "ok", true, 100 * ms);
  json fin = empty_final();
  fin["log"] = {{1, 0, 1, w1, "fenced"}};
  fin["resources"] = {{0, "something else", 1}};
  EXPECT_EQ(kind(check_history(ev, {}, fin), "resource_state_mismatch"), 1u);
}

TEST(Checker, IdempotencyViolationsAreReported) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev};
  auto c1 = a.charge("k1", 10 * ms, "started", "w0.1/0/1");
  b.charge("k1", 20 * ms, "replay", "w0.1/0/1");  // same answer: fine
  auto c2 = a.charge("k2", 30 * ms, "started", "w0.1/0/2");
  auto c3 = b.charge("k2", 40 * ms, "started", "w1.1/0/2");  // second answer, second charge
  a.charge("k3", 50 * ms, "started", "w0.1/0/3");            // answered, never charged
  b.charge("k4", 60 * ms, "mismatch", "");
  json fin = empty_final();
  fin["charges"] = {{1, "k1", "w0.1/0/1", c1}, {2, "k2", "w0.1/0/2", c2}, {3, "k2", "w1.1/0/2", c3}};
  auto r = check_history(ev, {}, fin);
  EXPECT_EQ(kind(r, "two_answers"), 1u) << format_report(r);
  EXPECT_EQ(kind(r, "double_side_effect"), 1u) << format_report(r);
  EXPECT_EQ(kind(r, "lost_committed_outcome"), 1u) << format_report(r);
  EXPECT_EQ(kind(r, "idempotency_mismatch"), 1u) << format_report(r);
  EXPECT_EQ(kind(r, "phantom_side_effect"), 0u) << format_report(r);
}

TEST(Checker, IdempotencyRecordMustHoldTheAnswer) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev};
  auto c1 = a.charge("k1", 10 * ms, "started", "w0.1/0/1");
  json fin = empty_final();
  fin["charges"] = {{1, "k1", "w0.1/0/1", c1}};
  fin["records"] = {{{"key", "k1"}, {"status", "completed"}, {"body", "w0.1/0/1"}}};
  EXPECT_EQ(check_history(ev, {}, fin).violation_total(), 0u);
  fin["records"] = {{{"key", "k1"}, {"status", "completed"}, {"body", "other"}}};
  EXPECT_EQ(kind(check_history(ev, {}, fin), "answer_differs_from_effect"), 1u);
  fin["records"] = json::array();
  EXPECT_EQ(kind(check_history(ev, {}, fin), "lost_committed_outcome"), 1u);
}

TEST(Checker, MissingFinalStateIsAViolation) {
  EXPECT_EQ(kind(check_history({}, {}, nullptr), "missing_final_state"), 1u);
}

TEST(Checker, FaultsAndClockJumpsAreCounted) {
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev};
  a.put({{"ev", "start"}, {"m", 0}, {"r", 0}});
  a.put({{"ev", "start"}, {"m", 1 * ms}, {"r", 1 * ms + 3600'000 * ms}});  // wall clock +1 h
  std::vector<json> faults = {{{"ev", "fault"}, {"kind", "kill"}, {"m", 5}, {"r", 5}},
                              {{"ev", "fault"}, {"kind", "kill"}, {"m", 6}, {"r", 6}},
                              {{"ev", "fault"}, {"kind", "clock"}, {"m", 7}, {"r", 7}}};
  auto r = check_history(ev, faults, empty_final());
  EXPECT_EQ(r.stats["faults"]["kill"], 2);
  EXPECT_EQ(r.stats["faults"]["clock"], 1);
  EXPECT_EQ(r.stats["clock_jumps_observed"], 1);
  EXPECT_GE(r.stats["max_clock_skew_s"].get<double>(), 3599.0);
}

TEST(Checker, RunFolderWithTornLineAndTheCommand) {
  test::temp_dir d("dblock-check");
  std::vector<json> ev;
  hist a{"w0.1", 0, &ev}, b{"w1.1", 0, &ev};
  a.grant("L0", 1, 0, 2 * ms, 1000 * ms);
  b.grant("L0", 2, 3 * ms, 500 * ms, 1500 * ms);
  std::string text;
  for (auto& e : ev) text += e.dump() + "\n";
  text += "{\"ev\":\"invo";  // torn by SIGKILL
  test::write_file(d / "history/w.jsonl", text);
  test::write_file(d / "faults.jsonl", "");
  test::write_file(d / "final.json", empty_final().dump());
  auto r = check_run_dir(d.path());
  EXPECT_EQ(r.stats["torn_lines"], 1);
  EXPECT_EQ(kind(r, "overlapping_holders"), 1u);

  auto p = test::run_process({DBLOCK_CHECK, d.path().string()});
  EXPECT_EQ(p.exit_code, 1) << p.out << p.err;
  EXPECT_NE(p.out.find("overlapping_holders"), std::string::npos) << p.out;
  test::write_file(d / "history/w.jsonl", "");
  p = test::run_process({DBLOCK_CHECK, d.path().string(), "--json"});
  EXPECT_EQ(p.exit_code, 0) << p.out << p.err;
  EXPECT_EQ(json::parse(p.out)["violations"], 0);
  EXPECT_EQ(test::run_process({DBLOCK_CHECK}).exit_code, 64);
}

}  // namespace
}  // namespace dblock::faults
