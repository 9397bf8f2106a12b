// tests/conformance/partition_test.cpp — the timing model of lease locks under a silent
// network, on every backend x database combination (conformance/fixture.hpp):
//  - a lease is trusted until its local deadline minus the clock-drift margin;
//  - an expired, unreleased lease is taken over only after the holder's lock delay,
//    while a released one is free at once;
//  - a renewal that never gets an answer (the network to the server goes silent, through
//    tests/support/relay.hpp; on SQLite, another writer holding the database) does not
//    delay the lost-lease reaction, and the session still shuts down promptly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "conformance/fixture.hpp"
#include "support/relay.hpp"

namespace dblock::test {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

long long ms_between(steady::time_point a, steady::time_point b) {
  return std::chrono::duration_cast<milliseconds>(b - a).count();
}

// Records the first on_lost call and when it came.
struct lost_probe {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<steady::time_point> at;
  std::string reason;
  std::atomic<int> calls{0};
  std::function<void(const lost_lease&)> callback() {
    return [this](const lost_lease& l) {
      ++calls;
      std::lock_guard lk(mu);
      if (at) return;
      at = steady::now();
      reason = l.reason;
      cv.notify_all();
    };
  }
  bool wait(milliseconds limit) {
    std::unique_lock lk(mu);
    return cv.wait_for(lk, limit, [&] { return at.has_value(); });
  }
};

class PartitionConformance : public conformance {};

TEST_P(PartitionConformance, LeaseIsTrustedUntilItsDeadlineMinusTheDriftMargin) {
  auto db = open();
  session_options o;
  o.ttl = 1000ms;
  o.max_clock_drift = 0.2;
  // The TTL formula alone: with crash detection trusted_until() is also bounded by the
  // liveness marker's last heartbeat + liveness_window (crash_test.cpp).
  o.detect_crashes = false;
  session s(db, o);
  EXPECT_EQ(s.margin(), 200ms);
  EXPECT_EQ(s.renew_period(), 333ms);
  const auto before = steady::now();
  auto l = s.try_acquire(unique_name("margin"));
  const auto after = steady::now();
  ASSERT_TRUE(l);
  // trusted_until = (send time of the acquire) + TTL - margin, the send time in [before, after].
  EXPECT_GE(l->trusted_until(), before + 800ms);
  EXPECT_LE(l->trusted_until(), after + 800ms);
  EXPECT_LE(l->remaining(), 800ms);
  EXPECT_TRUE(l->is_held());

  for (double bad : {-0.01, 0.51, std::nan("")}) {
    session_options b;
    b.max_clock_drift = bad;
    EXPECT_THROW(session(db, b), invalid_argument) << bad;
  }
  session_options neg;
  neg.lock_delay = -1ms;
  EXPECT_THROW(session(db, neg), invalid_argument);
}

TEST_P(PartitionConformance, ExpiredLeaseIsTakenOverOnlyAfterItsLockDelayAndAReleasedOneAtOnce) {
  auto db = open();
  const auto name = unique_name("delay");
  session_options oa;
  oa.ttl = 300ms;
  oa.lock_delay = 1200ms;
  auto a = std::make_unique<session>(db, oa);
  const auto sent = steady::now();
  auto la = std::make_unique<std::optional<lease>>(a->try_acquire(name));
  ASSERT_TRUE(*la);
  const auto fence_a = (*la)->fence();
  a.reset();  // the holder stops renewing (its lease object stays, as in a frozen process)

  auto db_b = open();
  session b(db_b, session_options{});
  std::this_thread::sleep_until(sent + 700ms);  // the lease ended (300 ms), its delay has not (1500 ms)
  EXPECT_FALSE(b.try_acquire(name)) << "taken over within the holder's lock delay";
  bool listed = false;
  for (const auto& i : list_locks(db_b)) {
    if (i.name != name) continue;
    listed = true;
    EXPECT_EQ(i.lock_delay, 1200ms);
    EXPECT_TRUE(i.in_lock_delay()) << i.expires_in.count() << " ms to takeover";
  }
  EXPECT_TRUE(listed);
  // The stale holder's own view: no longer held, and verify_in refuses it although the row,
  // in its lock delay, is still the holder's on the server.
  EXPECT_FALSE((*la)->is_held());
  auto work = open();
  EXPECT_THROW(transact(work, [&](transaction_ref tx) { (*la)->verify_in(tx); }), lock_lost);

  auto lb = b.acquire(name, 5s);
  const auto granted = steady::now();
  // The server counted TTL + lock delay from a moment after `sent` (same machine, same clock).
  EXPECT_GE(ms_between(sent, granted), 1500 - 5) << "granted before the lease's end + lock delay";
  EXPECT_GT(lb.fence(), fence_a);

  // A release frees the name at once: no delay for a lock given back.
  lb.release();
  session c(db, session_options{});
  EXPECT_TRUE(c.try_acquire(name)) << "a released lock is free at once";
  la.reset();  // the stale lease's release finds the row another's: swallowed by the destructor
}

// The holder keeps renewing through `cut` until it is called, then its renewals get no
// answer. on_lost must come at the lease's trusted end, not when (or if) the renewal
// returns, and the session must shut down without waiting for the stuck renewal.
void lost_on_time(conformance& t, database& db, const std::function<void()>& cut, const std::function<void()>& heal,
                  const std::string& name) {
  lost_probe lost;
  session_options o;
  o.ttl = 1500ms;
  o.on_lost = lost.callback();
  o.detect_crashes = false;  // the TTL rule alone (with a liveness marker: crash_test.cpp)
  auto s = std::make_unique<session>(db, o);
  auto l = std::make_unique<std::optional<lease>>(s->try_acquire(name));
  ASSERT_TRUE(*l);
  std::this_thread::sleep_for(700ms);  // at least one renewal went through
  ASSERT_TRUE((*l)->is_held());
  const auto cut_at = steady::now();
  const auto trusted = (*l)->trusted_until();
  cut();
  ASSERT_TRUE(lost.wait(5s)) << "on_lost never fired while the renewals were stuck";
  const auto fired = *lost.at;
  EXPECT_EQ(lost.calls.load(), 1);
  EXPECT_FALSE((*l)->is_held());
  EXPECT_NE(lost.reason.find("ran out"), std::string::npos) << lost.reason;
  // Not later than the trusted end seen at the cut (+ scheduling slack), nor before it.
  EXPECT_LE(ms_between(trusted, fired), 100) << "lost-lease reaction late";
  EXPECT_GE(ms_between(trusted, fired), 0) << "lost before the trusted end seen at the cut";
  EXPECT_LE(ms_between(cut_at, fired), 1500) << "more than one TTL after the cut";

  const auto stop_from = steady::now();
  s.reset();  // joins the watchdog, which may be inside a renewal that gets no answer
  EXPECT_LE(ms_between(stop_from, steady::now()), 4000) << "session shutdown waited on the silent network";
  heal();
  l.reset();
  (void)t;
}

TEST_P(PartitionConformance, LostLeaseIsReportedOnTimeWhileRenewalsGetNoAnswer) {
  const auto name = unique_name("cut");
  if (kind() == dialect::sqlite) {
    // No network: the analogue is a renewal that cannot get the database (another writer
    // holds it for longer than the lease).
    auto db = open();
    auto blocker = open();
    bool blocked = false;
    lost_on_time(
        *this, db,
        [&] {
          raw_exec(blocker, "BEGIN IMMEDIATE");
          blocked = true;
        },
        [&] {
          if (blocked) raw_exec(blocker, "COMMIT");
        },
        name);
    return;
  }
  {
    auto migrated = open();  // migrates the test database directly
  }
  relay r(relay::target_of(url()));
  auto db = dblock::open(r.url_through(url()));
  lost_on_time(*this, db, [&] { r.pause(); }, [&] { r.resume(); }, name);
}

// A short cut that heals before the lease's trusted end costs nothing: the renewal sent
// into it is answered late (or fails and is retried), and the lease stays held, with no
// on_lost. SQLite: another writer holds the database for the same time.
TEST_P(PartitionConformance, ShortCutThatHealsInTimeKeepsTheLease) {
  auto direct = open();  // migrates the test database
  std::optional<relay> r;
  std::optional<database> blocker;
  if (kind() != dialect::sqlite) r.emplace(relay::target_of(url()));
  if (kind() == dialect::sqlite) blocker.emplace(open());
  auto db = r ? dblock::open(r->url_through(url())) : direct;
  lost_probe lost;
  session_options o;
  o.ttl = 3000ms;
  o.on_lost = lost.callback();
  // The TTL rule alone: with a liveness marker a cut longer than liveness_window loses the
  // lease by design (crash_test.cpp).
  o.detect_crashes = false;
  session s(db, o);
  auto l = s.try_acquire(unique_name("short"));
  ASSERT_TRUE(l);
  if (r) r->pause();
  if (blocker) raw_exec(*blocker, "BEGIN IMMEDIATE");
  std::this_thread::sleep_for(1200ms);  // one renewal (every second) is sent into the cut
  if (r) r->resume();
  if (blocker) raw_exec(*blocker, "COMMIT");
  std::this_thread::sleep_for(2500ms);  // past the first lease's end: renewed since
  EXPECT_TRUE(l->is_held());
  EXPECT_EQ(lost.calls.load(), 0) << lost.reason;
  EXPECT_NO_THROW(l->release());
}

DBLOCK_CONFORMANCE_SUITE(PartitionConformance);

}  // namespace
}  // namespace dblock::test
