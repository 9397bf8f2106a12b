// Built by tests/install/run.cmake with only `pkg-config --cflags --libs dblock`:
// proves the installed dblock.pc is enough to compile and link a program, which opens the
// database URL of argv[1], migrates and pings.
#include <dblock/dblock.hpp>

#include <iostream>

int main(int argc, char** argv) {
  try {
    auto db = dblock::open(argc > 1 ? argv[1] : "sqlite:pkgconfig.db");
    (void)db.migrate();
    db.ping();
    std::cout << "pkg-config consumer ok\n";
    return 0;
  } catch (const dblock::error& e) {
    std::cerr << "dblock error: " << e.what() << "\n";
    return 1;
  }
}
