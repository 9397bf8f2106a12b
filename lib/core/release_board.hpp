// lib/core/release_board.hpp — process-wide wake-ups for waiting acquires: a release in this
// process, or a release NOTIFY seen by the process's link (lib/core/link.hpp), bumps the
// name's generation; waiters sleep on it instead of polling blind. Internal.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace dblock::detail {

class release_board {
 public:
  using clock = std::chrono::steady_clock;
  static release_board& get();

  std::uint64_t generation(const std::string& name);
  void bump(const std::string& name);
  // Returns at `until`, or earlier once the name's generation is at least `seen + releases`.
  void wait(const std::string& name, std::uint64_t seen, clock::time_point until, std::uint64_t releases = 1);

 private:
  std::mutex mu_;  // guards gen_
  std::condition_variable cv_;
  std::unordered_map<std::string, std::uint64_t> gen_;
};

}  // namespace dblock::detail
