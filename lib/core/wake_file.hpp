// lib/core/wake_file.hpp — wake-ups between processes that share one SQLite database file.
// SQLite has no NOTIFY, so without this a waiting acquire learns of a release in another
// process only by trying again. Beside the database, `<database>-dblock-wake` (128 KiB,
// created on first use with the database file's permission bits and owner) holds one slot per hash of
// a lock name: a generation that every release of a name in the slot bumps, and the last
// hand-off made there (name hash, owner token, ticket, fence). A waiter sleeps on its slot's
// generation (a futex on the shared mapping) and, when woken by a release that handed the
// name to its own ticket, holds the lock from that record without reading its grant, as a
// waiter of the releasing process does (lib/core/release_board.hpp).
//
// Everything here is a hint: the database stays the authority. A release that finds the slot
// busy writes no record; a record that is torn, of another name, or of another ticket is not
// taken; a waiter whose wake-up is lost wakes at its pacer's bound and tries. A ticket number
// is never reused (dblock_line_tickets) and an owner token is a secret random string, so a record
// naming the waiter's own owner and ticket was written by the release that handed it the
// grant, after that release's commit. A process killed while writing a record leaves its slot
// without records (those waiters read their grants), one killed while asleep leaves its
// slot's sleeper count high (each post then makes a futex call): speed only. The file must
// not be truncated while in use (a mapping process would fault on it). Used by
// lib/core/lock.cpp, holders.cpp and session_core.hpp. Internal.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace dblock::detail {

class wake_file {
 public:
  using clock = std::chrono::steady_clock;

  // The wake file of the SQLite database at absolute path `database` (shared by every
  // session of the process on it), or nullptr where there is none: an in-memory or
  // temporary database (empty path), a directory this process may not write, a file of
  // another format. Never throws.
  [[nodiscard]] static std::shared_ptr<wake_file> for_database(const std::string& database) noexcept;

  wake_file(const wake_file&) = delete;
  wake_file& operator=(const wake_file&) = delete;
  ~wake_file();

  // The generation of `name`'s slot: read before looking, passed to wait().
  [[nodiscard]] std::uint32_t generation(std::string_view name) const noexcept;
  // A release of `name` has committed: records the hand-off it made to ticket `ticket` of
  // `owner` with fence `fence` (owner empty: none), then bumps the slot and wakes its
  // sleepers.
  void post(std::string_view name, std::string_view owner, std::int64_t ticket, std::int64_t fence) noexcept;
  // Sleeps until the slot's generation differs from `seen`, or `until`; true when it does. A
  // sleeper with wait-line ticket `ticket` (0: none) is woken by a post that hands the name
  // to that ticket or hands nothing (a plain release), not by hand-offs to other tickets: a
  // hand-off wakes the one waiter it made the holder, not the whole line.
  bool wait(std::string_view name, std::uint32_t seen, clock::time_point until,
            std::int64_t ticket = 0) const noexcept;
  // The fence of the hand-off the slot's record says a release made to ticket `ticket` of
  // `owner` for `name`, if it says so.
  [[nodiscard]] std::optional<std::int64_t> handed(std::string_view name, std::string_view owner,
                                                   std::int64_t ticket) const noexcept;

  static constexpr std::size_t slots = 1024;
  static constexpr std::size_t max_owner = 64;  // longer owner tokens get no record

  struct slot;  // the shared layout, in wake_file.cpp

 private:
  wake_file(void* map, std::size_t size) noexcept : map_(map), size_(size) {}
  [[nodiscard]] slot& at(std::string_view name, std::uint64_t* hash = nullptr) const noexcept;

  void* map_;
  std::size_t size_;
};

}  // namespace dblock::detail
