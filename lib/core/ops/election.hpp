// lib/core/ops/election.hpp — the leader-election statement family (sql/<dialect>/elect_*.sql):
// a leader's value kept in dblock_elections, tagged with its lease's fence, and the current
// leader read by joining it with the live lock row. lib/core/election.cpp calls these; each
// dialect implements them in lib/dialects/<dialect>/election.cpp. Internal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "dblock/election.hpp"

namespace dblock::detail {

class election_ops {
 public:
  virtual ~election_ops() = default;
  // Stores `value` for grant `fence` of `owner`, only while that grant is the live lock row;
  // false when it is not (the lease was lost). One round trip.
  [[nodiscard]] virtual bool set(backend& b, const std::string& name, const std::string& owner, std::int64_t fence,
                                 const std::string& value) const = 0;
  // The live leader, or nothing. One round trip.
  [[nodiscard]] virtual std::optional<leader_info> leader(backend& b, const std::string& name) const = 0;
  // The live leader of every election, by name. One round trip.
  [[nodiscard]] virtual std::vector<leader_info> list(backend& b) const = 0;
  // Removes the value of grant `fence` of `owner` (a resignation). One round trip.
  virtual void clear(backend& b, const std::string& name, const std::string& owner, std::int64_t fence) const = 0;
};

[[nodiscard]] const election_ops& elections_for(dialect d) noexcept;

}  // namespace dblock::detail
