// examples/payments/main.cpp — a "POST /payments" handler made safe to retry with an
// Idempotency-Key, on dblock's idempotency store (dblock/idempotency.hpp). No web server:
// requests are plain structs, and main() plays the clients (retries, a double submit, a
// changed payload, a crashed worker). The HTTP mapping follows the IETF Idempotency-Key
// draft-06; see README.md.
//
//   payments_example [URL]      URL defaults to sqlite:payments.db (in the current directory)
//
// The payment provider is simulated in-process and counts charges, so the output shows
// that every scenario charged the card exactly once. Exit status 0 when all did.
#include <dblock/dblock.hpp>

#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;

// --- the HTTP side (just enough of it) ----------------------------------------------
struct http_request {
  std::map<std::string, std::string> headers;
  std::string customer;
  long amount_cents = 0;
  std::string currency;
};

struct http_response {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string body;
};

http_response problem(int status, const std::string& title, const std::string& detail) {
  // RFC 9457 problem details, as the draft suggests for its error cases.
  return {status,
          {{"Content-Type", "application/problem+json"}},
          R"({"type":"https://example.com/problems/idempotency","title":")" + title + R"(","detail":")" + detail +
              R"("})"};
}

// --- the payment provider (simulated) -------------------------------------------------
struct payment_provider {
  std::atomic<int> charges{0};
  // A real provider call would carry our idempotency key too (Stripe's Idempotency-Key),
  // so that even a repeated call after a crash is deduplicated on their side.
  std::string charge(const std::string& customer, long amount_cents) {
    const int n = ++charges;
    (void)customer;
    (void)amount_cents;
    return "ch_" + std::to_string(1000 + n);
  }
};

// --- the handler --------------------------------------------------------------------
class payments_api {
 public:
  payments_api(dblock::database db, payment_provider& provider, dblock::idempotency_options opts = {})
      : store_(std::move(db), opts), provider_(provider) {}

  http_response post_payment(const http_request& req) {
    auto key = req.headers.find("Idempotency-Key");
    if (key == req.headers.end() || key->second.empty())
      return problem(400, "Idempotency-Key is missing", "POST /payments requires an Idempotency-Key header");

    // The fingerprint covers every field that makes the request what it is, in a fixed order.
    const auto fp = dblock::fingerprint_fields(
        {{"customer", req.customer}, {"amount_cents", std::to_string(req.amount_cents)}, {"currency", req.currency}});

    dblock::begin_result r;
    try {
      r = store_.begin(scope, key->second, fp);
    } catch (const dblock::invalid_argument& e) {
      return problem(400, "Idempotency-Key is not valid", e.what());  // too long, control characters...
    }

    switch (r.outcome) {
      case dblock::idempotency_outcome::mismatch:
        return problem(422, "Idempotency-Key reused", "this key was used for a different request");
      case dblock::idempotency_outcome::in_progress: {
        auto resp = problem(409, "Request in progress", "a request with this Idempotency-Key is being processed");
        resp.headers["Retry-After"] = std::to_string(std::max<long long>(1, (r.retry_after.count() + 999) / 1000));
        return resp;
      }
      case dblock::idempotency_outcome::replay: {
        // (A real handler would store the headers it needs with the body; here the code decides.)
        http_response resp{r.response.code,
                           {{"Content-Type", r.response.code >= 400 ? "application/problem+json" : "application/json"}},
                           r.response.body};
        resp.headers["Idempotent-Replayed"] = "true";  // a replayed response is marked
        return resp;
      }
      case dblock::idempotency_outcome::started:
        return process(req, r);
    }
    return problem(500, "unreachable", "");
  }

  dblock::idempotency_store& store() { return store_; }

 private:
  static constexpr const char* scope = "payments";

  // Stripe's "atomic phases": each external call is followed by a recovery point, so an
  // attempt that takes over after a crash resumes there instead of charging again.
  http_response process(const http_request& req, const dblock::begin_result& r) {
    const auto& attempt = r.attempt;
    if (req.amount_cents <= 0) {
      // A terminal failure: stored and replayed like a success (idempotency_options::store_failures).
      http_response bad = problem(400, "Invalid amount", "amount_cents must be positive");
      (void)store_.fail(attempt, dblock::failure_kind::terminal, {bad.status, bad.body});
      return bad;
    }
    std::string charge_id;
    const std::string charged = "charged ";
    if (r.recovery_point && r.recovery_point->starts_with(charged)) {
      charge_id = r.recovery_point->substr(charged.size());  // attempt N+1: the card was already charged
    } else {
      charge_id = provider_.charge(req.customer, req.amount_cents);
      if (store_.checkpoint(attempt, charged + charge_id) != dblock::finish_status::recorded)
        return problem(409, "Request taken over", "another attempt owns this Idempotency-Key now");
    }
    const std::string body = R"({"payment":")" + charge_id + R"(","amount_cents":)" + std::to_string(req.amount_cents) +
                             R"(,"currency":")" + req.currency + R"(","attempt":)" + std::to_string(attempt.number) + "}";
    if (store_.complete(attempt, {201, body}) != dblock::finish_status::recorded)
      return problem(409, "Request taken over", "another attempt owns this Idempotency-Key now");
    return {201, {{"Content-Type", "application/json"}}, body};
  }

  dblock::idempotency_store store_;
  payment_provider& provider_;
};

// --- the clients --------------------------------------------------------------------
void print(const std::string& what, const http_response& r) {
  std::cout << "  " << what << "\n    -> " << r.status;
  for (const auto& [k, v] : r.headers)
    if (k != "Content-Type") std::cout << "  " << k << ": " << v;
  std::cout << "\n       " << r.body << "\n";
}

int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    std::cout << "    UNEXPECTED: " << what << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string url = argc > 1 ? argv[1] : "sqlite:payments.db";
    auto db = dblock::open(url);
    db.migrate();
    payment_provider provider;
    payments_api api(db, provider);
    const std::string run = std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
    std::cout << "payments example on " << db.describe() << "\n";

    http_request pay{{{"Idempotency-Key", "pay-" + run + "-1"}}, "ada@example.com", 4200, "EUR"};

    std::cout << "1. A new payment\n";
    auto first = api.post_payment(pay);
    print("POST /payments  Idempotency-Key: " + pay.headers["Idempotency-Key"], first);
    expect(first.status == 201 && provider.charges == 1, "201 and one charge");

    std::cout << "2. The client retries (lost response): the first answer, replayed\n";
    auto again = api.post_payment(pay);
    print("POST /payments  (same key, same body)", again);
    expect(again.status == 201 && again.body == first.body && again.headers["Idempotent-Replayed"] == "true",
           "identical replay");
    expect(provider.charges == 1, "no second charge");

    std::cout << "3. Same key, different amount\n";
    auto changed = pay;
    changed.amount_cents = 9900;
    auto mm = api.post_payment(changed);
    print("POST /payments  (same key, amount 9900)", mm);
    expect(mm.status == 422, "422");

    std::cout << "4. No Idempotency-Key\n";
    auto nokey = api.post_payment({{}, "ada@example.com", 4200, "EUR"});
    print("POST /payments  (no header)", nokey);
    expect(nokey.status == 400, "400");

    std::cout << "5. A double submit while the first is still being processed\n";
    http_request dbl{{{"Idempotency-Key", "pay-" + run + "-2"}}, "grace@example.com", 1500, "EUR"};
    auto holder = api.store().begin("payments", dbl.headers["Idempotency-Key"],
                                    dblock::fingerprint_fields({{"customer", dbl.customer},
                                                                {"amount_cents", std::to_string(dbl.amount_cents)},
                                                                {"currency", dbl.currency}}));
    auto busy = api.post_payment(dbl);
    print("POST /payments  (second click)", busy);
    expect(busy.status == 409 && busy.headers.count("Retry-After"), "409 with Retry-After");
    (void)api.store().complete(holder.attempt, {201, R"({"payment":"ch_first_click"})"});
    auto after = api.post_payment(dbl);
    print("POST /payments  (after the first finished)", after);
    expect(after.status == 201 && after.headers["Idempotent-Replayed"] == "true", "replay of the first click");

    std::cout << "6. A worker crashes after charging the card; a retry takes over after the lease\n";
    dblock::idempotency_options short_lease;
    short_lease.lease = 500ms;
    short_lease.wait = 5s;  // the retry waits (bounded) instead of answering 409
    payments_api api2(dblock::open(url), provider, short_lease);
    http_request crash{{{"Idempotency-Key", "pay-" + run + "-3"}}, "alan@example.com", 7700, "GBP"};
    {
      // The crashed worker: begin, charge, checkpoint... and never completes.
      auto w = api2.store().begin("payments", crash.headers["Idempotency-Key"],
                                  dblock::fingerprint_fields({{"customer", crash.customer},
                                                              {"amount_cents", std::to_string(crash.amount_cents)},
                                                              {"currency", crash.currency}}));
      const auto ch = provider.charge(crash.customer, crash.amount_cents);
      (void)api2.store().checkpoint(w.attempt, "charged " + ch);
      std::cout << "  worker attempt " << w.attempt.number << " charged " << ch << " and died\n";
    }
    const int charges_before = provider.charges;
    auto resumed = api2.post_payment(crash);
    print("POST /payments  (client retry)", resumed);
    expect(resumed.status == 201 && resumed.body.find("\"attempt\":2") != std::string::npos, "attempt 2 completes");
    expect(provider.charges == charges_before, "resumed from the recovery point: no second charge");

    std::cout << "7. An invalid request fails for good; the failure is replayed\n";
    http_request zero{{{"Idempotency-Key", "pay-" + run + "-4"}}, "ada@example.com", 0, "EUR"};
    auto z1 = api.post_payment(zero);
    auto z2 = api.post_payment(zero);
    print("POST /payments  (amount 0), twice", z2);
    expect(z1.status == 400 && z2.status == 400 && z2.headers["Idempotent-Replayed"] == "true", "stored failure");

    std::cout << "charges made: " << provider.charges << " (one per payment)\n";
    std::cout << "inspect: dblock --url " << dblock::redact_url(url) << " idempotency list --scope payments\n";
    if (failures) std::cout << failures << " unexpected outcome(s)\n";
    return failures ? 1 : 0;
  } catch (const dblock::error& e) {
    std::cerr << "payments_example: " << e.what() << "\n";
    return 2;
  }
}
