// examples/orders/main.cpp — dblock's transactional row guards in an order/payment flow.
//
//   orders_example [URL]      URL defaults to sqlite:orders.db (in the current directory)
//
// 1. Eight request handlers receive the same "create order" at once (a client retrying,
//    a double click). Each runs insert_or_lock on the order number inside its own
//    transaction: exactly one inserts the order and its payment, the others find it.
// 2. Four workers try to capture the payment at once. Each locks the payment row
//    (SELECT ... FOR UPDATE; on SQLite the BEGIN IMMEDIATE writer lock), reads its status
//    and captures it only if still "authorized"; retry_transaction re-runs a transaction
//    the database picked as a deadlock victim. Exactly one worker captures.
// Every handler and worker opens its own connection, as separate processes would.
#include <dblock/dblock.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr const char* scope = "orders_example";

// Returns true when this handler created the order (false: it existed already).
bool create_order(const std::string& url, const std::string& order_no) {
  auto db = dblock::open(url);
  bool created = false;
  dblock::retry_transaction(db, [&](dblock::transaction_ref tx) {
    created = false;  // the function may run more than once
    auto order = dblock::insert_or_lock(tx, "orders", "order_no", order_no,
                                        {{"customer", "ada@example.com"}, {"amount_cents", std::int64_t{4200}}});
    if (!order.inserted()) return;  // someone else created it (the row is locked by us until commit)
    // Same transaction: the payment exists if and only if the order does.
    (void)dblock::insert_or_lock(tx, "payments", "payment_id", "P-" + order_no,
                                 {{"order_no", order_no}, {"amount_cents", std::int64_t{4200}}, {"status", "authorized"}});
    created = true;
  });
  return created;
}

// Returns true when this worker captured the payment.
bool capture(const std::string& url, const std::string& payment_id, const std::string& worker, int& attempts) {
  auto db = dblock::open(url);
  bool captured = false;
  dblock::retry_policy policy;
  policy.max_attempts = 5;
  auto r = dblock::retry_transaction(db, [&](dblock::transaction_ref tx) {
    captured = false;  // the function may run more than once
    auto lock = dblock::lock_row(tx, "payments", "payment_id", payment_id);  // waits for another capturer
    if (lock.outcome != dblock::lock_outcome::locked) throw std::runtime_error("no payment " + payment_id);
    const dblock::versioned_table payments{"payments", "payment_id", "version"};
    auto row = dblock::read_versioned(tx, payments, payment_id, {"status"});
    if (!row || row->values.at(0).value_or("") != "authorized") return;  // already captured
    // ... call the payment provider here, with payment_id as its idempotency key ...
    auto u = dblock::update_if_version(tx, payments, payment_id, row->version,
                                       {{"status", "captured"}, {"captured_by", worker}});
    captured = u.applied;  // always true under the row lock; the version still records the change
  }, policy);
  attempts = r.attempts;
  return captured;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string url = argc > 1 ? argv[1] : "sqlite:orders.db";
  try {
    auto db = dblock::open(url);
    std::cout << "orders_example on " << db.describe() << "\n";
    const char* dir = std::getenv("ORDERS_MIGRATIONS_DIR");
    auto m = db.migrate_dir(dir ? dir : ORDERS_MIGRATIONS_DIR, scope);
    std::cout << "schema: " << m.applied.size() << " migration(s) applied, " << m.already_applied
              << " already there\n";

    const auto stamp = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    const std::string order_no = "A-" + std::to_string(stamp);

    // 1. Eight concurrent "create order" requests for the same order number.
    std::atomic<int> inserted{0}, existing{0}, failed{0};
    {
      std::vector<std::thread> handlers;
      for (int i = 0; i < 8; ++i)
        handlers.emplace_back([&, i] {
          try {
            (create_order(url, order_no) ? inserted : existing)++;
          } catch (const dblock::error& e) {
            ++failed;
            std::cerr << "handler " << i << ": " << e.what() << "\n";
          }
        });
      for (auto& t : handlers) t.join();
    }
    std::cout << "create order " << order_no << ": 8 concurrent requests -> " << inserted.load() << " inserted, "
              << existing.load() << " found it existing, " << failed.load() << " failed\n";

    // 2. Four workers capture the payment at once.
    std::atomic<int> captures{0};
    std::mutex mu;
    std::string winner;
    int total_attempts = 0;
    {
      std::vector<std::thread> workers;
      for (int i = 0; i < 4; ++i)
        workers.emplace_back([&, i] {
          const std::string worker = "worker-" + std::to_string(i);
          int attempts = 0;
          try {
            if (capture(url, "P-" + order_no, worker, attempts)) {
              ++captures;
              std::lock_guard lock(mu);
              winner = worker;
            }
          } catch (const dblock::error& e) {
            std::cerr << worker << ": " << e.what() << "\n";
          }
          std::lock_guard lock(mu);
          total_attempts += attempts;
        });
      for (auto& t : workers) t.join();
    }
    std::cout << "capture payment P-" << order_no << ": 4 concurrent workers -> captured " << captures.load()
              << " time(s)" << (winner.empty() ? "" : " by " + winner) << ", " << total_attempts
              << " transaction attempt(s) in all\n";
    return inserted.load() == 1 && captures.load() == 1 && failed.load() == 0 ? 0 : 1;
  } catch (const dblock::error& e) {
    std::cerr << "orders_example: " << e.what() << "\n";
    return 1;
  }
}
