// tests/faults/checker.hpp — the history checker of the fault-injection workload
// (docs/correctness.md, "The checker"). It reads what every worker process recorded
// (history/*.jsonl), the faults the driver injected (faults.jsonl) and the database's
// final state read after the run (final.json), and reports violations:
//
//   overlapping_holders      two grants of one lock whose validity windows overlap
//   two_leaders              two leaderships of one election whose windows overlap, or a
//                            leader write accepted after a write of a later leader
//                            (a larger token) in server commit order
//   fence_not_increasing     a grant that began after another had completed got a
//                            smaller (or equal) fencing token
//   duplicate_fence          two grants of one lock with the same token
//   reader_writer_overlap    a read-write lock's writer window overlapping a reader's
//   permit_oversubscribed    a semaphore permit granted while all N permits were held
//   lost_before_deadline     a holder learned its lease was gone while its promised
//                            deadline had not passed (the row vanished or was taken early)
//   late_unfenced_action     a holder's unfenced action (a side effect no token protects)
//                            happened at or after the moment the acquire of the next grant
//                            of the lock (a larger token) returned
//   stale_write_accepted     the resource accepted a write with a token lower than one it
//                            had already accepted (server commit order)
//   lost_committed_write     a write the client saw committed is not in the database
//   phantom_write            a write the client saw refused or rolled back is in it
//   resource_state_mismatch  a resource row disagrees with its own write log
//   double_side_effect       an idempotent charge executed more than once for one key
//   two_answers              callers got different answers for one key
//   idempotency_mismatch     begin/run_once said "mismatch" for an identical request
//   lost_committed_outcome   an answered key has no side effect / record in the database
//   answer_differs_from_effect  the answer is not the side effect (or record) stored
//   phantom_side_effect      a side effect by a call that failed definitively
//   missing_final_state      the run ended without a readable final state
//
// A holder's validity window runs from the completion of its acquire to the earliest of:
// the invocation of its release, the moment it observed the lease lost, and the latest
// deadline it was promised (lease::remaining() read before acting). Times are
// CLOCK_MONOTONIC, comparable across the processes of one machine. Only definite
// violations are reported: an operation whose outcome is unknown (killed, connection
// lost) may have happened or not, and either is accepted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "faults/history.hpp"

namespace dblock::faults {

struct check_options {
  // Slack for comparing a client's monotonic deadline with the server's expiry (the
  // server's wall clock may be slewed by NTP relative to CLOCK_MONOTONIC).
  std::int64_t tolerance_ns = 2'000'000;
  // A change of (wall - monotonic) larger than this between two events of one process
  // counts as an observed wall-clock jump.
  std::int64_t clock_jump_ns = 500'000'000;
  // At most this many violations are kept with details (all are counted).
  std::size_t max_details = 200;
};

struct violation {
  std::string kind;
  std::string detail;
};

struct check_report {
  json stats;                           // counts: operations, outcomes, faults, ...
  std::map<std::string, std::size_t> violation_counts;
  std::vector<violation> violations;    // details (at most max_details)
  [[nodiscard]] std::size_t violation_total() const;
  [[nodiscard]] json to_json() const;
};

// Checks one run: `events` from all workers' histories, `faults` from the driver's
// faults.jsonl, `final_state` as written by the driver (final.json; null = missing).
[[nodiscard]] check_report check_history(const std::vector<json>& events, const std::vector<json>& faults,
                                         const json& final_state, const check_options& opts = {});

// Reads DIR/history/*.jsonl, DIR/faults.jsonl and DIR/final.json, then check_history.
[[nodiscard]] check_report check_run_dir(const std::filesystem::path& dir, const check_options& opts = {});

// Human-readable summary (a few lines) of a report.
[[nodiscard]] std::string format_report(const check_report& r);

}  // namespace dblock::faults
