// lib/core/release_board.hpp — process-wide wake-ups for waiting acquires: a release in this
// process, or a release NOTIFY seen by the process's link (lib/core/link.hpp), bumps the
// name's generation; waiters sleep on it instead of polling blind. A notice of a release that
// handed the name to the head of its wait line also says to whom (ticket, owner) and with which
// fence: that waiter holds the lock from the notice, without reading its grant. Internal.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace dblock::detail {

// What a release notice's payload says (sql/postgresql/lock_release*.sql): the name, and for a
// hand-off (dblock_lock_release_to_line) the grant it made.
struct release_notice {
  std::string name;
  std::string owner;       // the head's owner token; empty: not a hand-off
  std::int64_t ticket = 0;  // the head's ticket
  std::int64_t fence = 0;   // the fence of the grant it was handed
};

// A hand-off's payload is "<name> US <owner> US <ticket> US <fence>" (US: the unit separator,
// 0x1F); any other payload is a name. A name may itself contain 0x1F, so a payload that reads
// as a hand-off may be a plain name: only the waiter whose own owner token and ticket it
// names takes it for a grant (a secret token no name carries by chance).
[[nodiscard]] release_notice parse_release_notice(std::string_view payload);

class release_board {
 public:
  using clock = std::chrono::steady_clock;
  static release_board& get();

  std::uint64_t generation(const std::string& name);
  void bump(const std::string& name);
  // A release notice: bumps its name, and records a hand-off's grant (unless a later grant of
  // the name, a larger fence, is recorded already: notices and answers may arrive out of order).
  void notice(const release_notice& n);
  // The fence of the grant a hand-off notice gave `ticket` of `owner` for `name`, once.
  [[nodiscard]] std::optional<std::int64_t> take_handed(const std::string& name, const std::string& owner,
                                                        std::int64_t ticket);
  // A final release of `name` that may hand it to the head of its line is on its way in this
  // process (releasing, then finish). A waiter here waits for its answer rather than trying:
  // on MariaDB and MySQL 8.0 a try could read the handed grant before its redo is flushed and
  // would then confirm it with a write of its own.
  void releasing(const std::string& name);
  // The release marked by releasing() is done: ends its mark, records the grant it handed
  // (`handed`, if any, as notice() does) and wakes the name's waiters, in one step.
  void finish(const std::string& name, const release_notice* handed);
  // A release of `name` is marked in flight by this process (not one inherited through fork)
  // and began less than `max_age` ago: a release that takes longer holds nobody back.
  [[nodiscard]] bool release_in_flight(const std::string& name, clock::duration max_age);
  // A hand-off record of `name` names `ticket` of `owner`: that waiter's try takes it without a
  // statement.
  [[nodiscard]] bool has_handed(const std::string& name, const std::string& owner, std::int64_t ticket);
  // Returns at `until`, or earlier once the name's generation is at least `seen + releases`.
  void wait(const std::string& name, std::uint64_t seen, clock::time_point until, std::uint64_t releases = 1);

 private:
  void record(const release_notice& n);  // with mu_ held

  std::mutex mu_;  // guards gen_, handed_ and in_flight_
  std::condition_variable cv_;
  std::unordered_map<std::string, std::uint64_t> gen_;
  // The last hand-off heard of per name (one at a time: the next needs this one's holder to
  // release). Cleared with gen_.
  std::unordered_map<std::string, release_notice> handed_;
  struct in_flight {
    int count = 0;
    clock::time_point since;  // the oldest of them began
    long pid = 0;             // of the process that marked them
  };
  std::unordered_map<std::string, in_flight> in_flight_;  // releases on their way, per name
};

}  // namespace dblock::detail
