// lib/dialects/postgresql/reaper.cpp — reaping on PostgreSQL: a batch answers one
// COUNT(*) row of what it deleted (reap_*.sql delete through SKIP LOCKED victims).
#include "dialects/common/families.hpp"
#include "dialects/common/rows.hpp"

namespace dblock::detail {

namespace {
class pg_reaper_impl final : public counted_reaper {
  std::uint64_t deleted(const result& r) const override {
    if (r.rows.empty() || r.rows[0].empty() || !r.rows[0][0]) return counted_reaper::deleted(r);
    return static_cast<std::uint64_t>(rows::first_int(r, "reaper batch count"));
  }
};
}  // namespace

const reaper_ops& postgresql_reaper() noexcept {
  static const pg_reaper_impl ops;
  return ops;
}

}  // namespace dblock::detail
