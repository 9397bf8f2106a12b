// lib/backends/soci/classify.hpp — maps the exception in flight (SOCI 4.0) to a
// dblock::error. Every backend folder has the same classify.hpp/.cpp + driver.cpp.
#pragma once

#include <string>

namespace dblock::detail::soci_backend {

// Call inside a catch block. `during_commit` turns a lost connection into commit_unknown.
[[noreturn]] void rethrow_classified(const std::string& context, bool during_commit = false);

}  // namespace dblock::detail::soci_backend
