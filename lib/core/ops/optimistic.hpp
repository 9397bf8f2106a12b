// lib/core/ops/optimistic.hpp — the statement family of version-checked and fenced writes
// (sql/<dialect>/versioned_*.sql, fenced_*.sql). Implemented per dialect in
// lib/dialects/<dialect>/optimistic.cpp. Internal.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/backend.hpp"
#include "dblock/optimistic.hpp"

namespace dblock::detail {

class optimistic_ops {
 public:
  virtual ~optimistic_ops() = default;
  // Runs versioned_read_<n>.sql (`st`) for `key`: the version and the other columns, or
  // nullopt when there is no such row. A NULL version throws database_error.
  [[nodiscard]] virtual std::optional<versioned_row> read_versioned(backend& b, const statement& st, const value& key,
                                                                    std::string_view table,
                                                                    std::string_view version_column) const = 0;
  // Whether a fenced write that counted 0 rows needs fenced_check.sql to tell an unchanged
  // row from a stale token (MySQL without CLIENT_FOUND_ROWS counts changed rows only).
  [[nodiscard]] virtual bool needs_fenced_check() const noexcept = 0;
  // Runs fenced_check.sql (`check`): true when the row is there and `token` may write it.
  [[nodiscard]] virtual bool fenced_check(backend& b, const statement& check, const value& key, std::int64_t token) const = 0;
};

[[nodiscard]] const optimistic_ops& optimistic_for(dialect d) noexcept;

}  // namespace dblock::detail
