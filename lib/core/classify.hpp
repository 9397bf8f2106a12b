// lib/core/classify.hpp — code tables shared by the backends' classifiers: which
// SQLSTATE / MySQL error number / SQLite result code means which error_kind.
// Classification is by code only, never by message text. Pure functions: unit-tested.
#pragma once

#include <string_view>

#include "dblock/errors.hpp"

namespace dblock::detail {

[[nodiscard]] error_kind classify_sqlstate(std::string_view sqlstate) noexcept;
[[nodiscard]] error_kind classify_mysql(int errno_code, std::string_view sqlstate) noexcept;
[[nodiscard]] error_kind classify_sqlite(int result_code) noexcept;

}  // namespace dblock::detail
