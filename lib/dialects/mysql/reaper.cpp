// lib/dialects/mysql/reaper.cpp — reaping on MySQL/MariaDB: the reaper's own connection
// runs reaper_session.sql once: READ COMMITTED, so range deletes take no gap locks.
#include "dialects/common/families.hpp"

namespace dblock::detail {

namespace {
class mysql_reaper_impl final : public counted_reaper {
  void configure_session(backend& b, bool) const override { b.exec("reaper_session"); }
};
}  // namespace

const reaper_ops& mysql_reaper() noexcept {
  static const mysql_reaper_impl ops;
  return ops;
}

}  // namespace dblock::detail
