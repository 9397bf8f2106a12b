// A user's program: parses a URL, opens the database of argv[1] (an SQLite file URL, or a
// server's), migrates twice and pings; with argv[2], checks that open() refuses that URL
// naming the backend this build left out. Prints "consumer ok ..." and exits 0 when
// everything worked.
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
    const std::string url = argc > 1 ? argv[1] : "sqlite:consumer.db";
    auto db = dblock::open(url);
    auto first = db.migrate();
    auto second = db.migrate();
    db.ping();
    if (!second.applied.empty()) {
      std::cerr << "the second migrate applied " << second.applied.size() << " migrations\n";
      return 1;
    }
    db.require_schema();
    if (argc > 2) {
      try {
        (void)dblock::open(argv[2]);
        std::cerr << "open(" << argv[2] << ") worked, but this build should not have its backend\n";
        return 1;
      } catch (const dblock::invalid_argument& e) {
        if (std::string(e.what()).find("backend") == std::string::npos) {
          std::cerr << "refused without naming the backend: " << e.what() << "\n";
          return 1;
        }
      }
    }
    std::cout << "consumer ok: dblock " << DBLOCK_VERSION << ", " << first.applied.size() << " migrations\n";
    return 0;
  } catch (const dblock::error& e) {
    std::cerr << "dblock error: " << e.what() << "\n";
    return 1;
  }
}
