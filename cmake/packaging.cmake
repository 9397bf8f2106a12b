# cmake/packaging.cmake — the Debian package: `cpack -G DEB` in the build directory writes
# dblock_<version>_<arch>.deb with everything `cmake --install` installs under /usr: the
# dblock command, the static libraries, headers, CMake package and .pc files, the man page
# dblock(1), and README, CHANGELOG and copyright in /usr/share/doc/dblock.
#
# Depends: dpkg-shlibdeps (Debian package dpkg-dev) computes the shared libraries the
# command needs (libpqxx, Connector/C++, SOCI, OpenSSL, libstdc++ ...); the -dev packages
# that a program built against the static libraries needs are added for the backends built.

install(FILES README.md CHANGELOG.md cmake/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME dblock)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "dblock")
set(CPACK_PACKAGE_CONTACT "dblock maintainers <dblock@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "leased locks, fencing tokens and idempotency keys on your SQL database")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "leased locks, fencing tokens and idempotency keys on your SQL database\n\
 dblock is a C++20 library and a command that turn the PostgreSQL, MySQL/MariaDB\n\
 or SQLite database an application already runs into its coordination service:\n\
 leased locks with fencing tokens and a watchdog, session locks, row guards,\n\
 optimistic and fenced writes, idempotency keys, a reaper and safe migrations.\n\
 .\n\
 This package holds the dblock command, the static libraries, headers, CMake\n\
 package and pkg-config files.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES OFF)

set(dblock_dev_depends "libssl-dev")
if(DBLOCK_HAVE_PQXX)
  list(APPEND dblock_dev_depends "libpqxx-dev (>= 6.4)")
endif()
if(DBLOCK_HAVE_MYSQL)
  list(APPEND dblock_dev_depends "libmysqlcppconn-dev")
endif()
if(DBLOCK_HAVE_SOCI)
  list(APPEND dblock_dev_depends "libsoci-dev" "libsqlite3-dev")
  if(DBLOCK_SOCI_POSTGRESQL)
    list(APPEND dblock_dev_depends "libpq-dev")
  endif()
  if(DBLOCK_SOCI_MYSQL)
    list(APPEND dblock_dev_depends "libmariadb-dev")
  endif()
endif()
string(REPLACE ";" ", " CPACK_DEBIAN_PACKAGE_DEPENDS "${dblock_dev_depends}")

include(CPack)
