// A user's program: parses a URL, opens the embedded SQLite default in a given file,
// migrates and pings. Prints "consumer ok ..." and exits 0 when everything worked.
#include <dblock/dblock.hpp>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  try {
    auto u = dblock::parse_url("postgresql://app:pw@db.example.com:6543/orders");
    if (u.kind != dblock::dialect::postgresql || u.port != 6543 || u.database != "orders" ||
        u.redacted() != "postgresql://app:***@db.example.com:6543/orders") {
      std::cerr << "parse_url gave unexpected parts\n";
      return 1;
    }
    const std::string path = argc > 1 ? argv[1] : "consumer.db";
    auto db = dblock::open("sqlite:" + path);
    auto first = db.migrate();
    auto second = db.migrate();
    db.ping();
    if (first.applied.empty() || !second.applied.empty()) {
      std::cerr << "migrate applied " << first.applied.size() << " then " << second.applied.size() << "\n";
      return 1;
    }
    db.require_schema();
    std::cout << "consumer ok: dblock " << DBLOCK_VERSION << ", " << first.applied.size() << " migrations\n";
    return 0;
  } catch (const dblock::error& e) {
    std::cerr << "dblock error: " << e.what() << "\n";
    return 1;
  }
}
