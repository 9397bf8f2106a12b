// lib/core/open.cpp — dblock::open(url) of the target dblock::dblock: parses the URL, then
// hands it to the libpqxx, Connector/C++ or SOCI backend - those this build has
// (DBLOCK_HAVE_<B>, set by CMakeLists.txt for dblock_all); a URL of a backend left out
// of the build is refused naming it.
#include "dblock/errors.hpp"
#include "dblock/open.hpp"
#ifdef DBLOCK_HAVE_PQXX
#include "dblock/pqxx.hpp"
#endif
#ifdef DBLOCK_HAVE_MYSQL
#include "dblock/mysql.hpp"
#endif
#ifdef DBLOCK_HAVE_SOCI
#include "dblock/soci.hpp"
#endif

namespace dblock {

namespace {
[[noreturn, maybe_unused]] void not_built(const connection_url& u, const char* backend, const char* option) {
  throw invalid_argument("'" + u.scheme + "' URLs need the " + backend + " backend, which this build of dblock " +
                         "does not have (rebuild with -D" + option + "=ON)");
}
}  // namespace

database open(std::string_view url, const open_options& opts) {
  const auto u = parse_url(url);
  switch (u.client) {
    case client_library::pqxx:
#ifdef DBLOCK_HAVE_PQXX
      return open_pqxx(url, opts);
#else
      not_built(u, "libpqxx", "DBLOCK_WITH_PQXX");
#endif
    case client_library::mysql:
#ifdef DBLOCK_HAVE_MYSQL
      return open_mysql(url, opts);
#else
      not_built(u, "MySQL Connector/C++", "DBLOCK_WITH_MYSQL");
#endif
    case client_library::soci:
#ifdef DBLOCK_HAVE_SOCI
      return open_soci(url, opts);
#else
      not_built(u, "SOCI", "DBLOCK_WITH_SOCI");
#endif
  }
  throw invalid_argument("unsupported URL");
}

}  // namespace dblock
