// lib/dialects/sqlite/liveness.cpp — SQLite has no server that sees a client's connection
// end: no liveness markers, a lease ends at its TTL only (liveness_ops::supported() is
// false, so reaching the statements is a bug).
#include "core/ops/liveness.hpp"
#include "dblock/errors.hpp"

namespace dblock::detail {

namespace {
class sqlite_liveness final : public liveness_ops {
  [[noreturn]] static void none() { throw internal_error("SQLite has no liveness markers"); }
  bool supported() const noexcept override { return false; }
  marker_take take(backend&, const std::string&, std::string*) const override { none(); }
  void drop(backend&, const std::string&) const override { none(); }
  std::string ping(backend&) const override { none(); }
  std::optional<marked_holder> probe(backend&, const std::string&, const std::string&) const override { none(); }
  bool reclaim(backend&, const std::string&, const std::string&, std::int64_t) const override { none(); }
  std::vector<marked_hold> probe_holds(backend&, const std::string&, const std::string&) const override { none(); }
  bool reclaim_hold(backend&, const std::string&, const std::string&, std::int64_t, std::int64_t) const override {
    none();
  }
};
}  // namespace

const liveness_ops& sqlite_liveness_ops() noexcept {
  static const sqlite_liveness ops;
  return ops;
}

}  // namespace dblock::detail
