// lib/dialects/registry.cpp — maps the dialect enum to each dialect's objects: the one
// place that switches on it (lib/core asks the objects).
#include "core/dialect.hpp"

namespace dblock::detail {

const dialect_traits& postgresql_traits() noexcept;
const dialect_traits& mysql_traits() noexcept;
const dialect_traits& sqlite_traits() noexcept;

const dialect_traits& traits_of(dialect d) noexcept {
  switch (d) {
    case dialect::postgresql: return postgresql_traits();
    case dialect::mysql: return mysql_traits();
    case dialect::sqlite: break;
  }
  return sqlite_traits();
}

}  // namespace dblock::detail
