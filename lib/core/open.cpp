// lib/core/open.cpp — dblock::open(url) of the all-backends target dblock::dblock:
// parses the URL, then hands it to the libpqxx, Connector/C++ or SOCI backend.
#include "dblock/errors.hpp"
#include "dblock/mysql.hpp"
#include "dblock/open.hpp"
#include "dblock/pqxx.hpp"
#include "dblock/soci.hpp"

namespace dblock {

database open(std::string_view url, const open_options& opts) {
  switch (parse_url(url).client) {
    case client_library::pqxx: return open_pqxx(url, opts);
    case client_library::mysql: return open_mysql(url, opts);
    case client_library::soci: return open_soci(url, opts);
  }
  throw invalid_argument("unsupported URL");
}

}  // namespace dblock
