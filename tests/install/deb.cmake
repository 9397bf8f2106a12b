# tests/install/deb.cmake — the Debian package (ctest: dblock_deb), run with cmake -P:
#   1. cpack -G DEB on BUILD_DIR, writing into WORK_DIR/pkg (nothing is installed into the system)
#   2. dpkg-deb -I: package dblock, version EXPECTED_VERSION, a non-empty Depends
#   3. dpkg-deb -c: the command, the libraries, headers, dblockConfig.cmake, the .pc files,
#      the man page and the Debian docs (README, CHANGELOG, copyright)
#   4. dpkg-deb -x into WORK_DIR/root: no extracted header names detail:: or the backend;
#      the extracted dblock --version works; tests/install/consumer configures, builds and
#      runs against the extracted tree on an SQLite file
#   5. the man page renders without a single warning (groff -man -Tutf8 -ww -z, and
#      man --warnings when man-db is there), carries EXPECTED_VERSION, and names every option
#      and subcommand the extracted command's --help lists
# Inputs: BUILD_DIR, CONSUMER_SOURCE, WORK_DIR, EXPECTED_VERSION, CMAKE_COMMAND_PATH.
cmake_minimum_required(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
dblock_require_inputs(BUILD_DIR CONSUMER_SOURCE WORK_DIR EXPECTED_VERSION CMAKE_COMMAND_PATH)

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/pkg)
get_filename_component(cmake_bin ${CMAKE_COMMAND_PATH} DIRECTORY)
find_program(CPACK cpack HINTS ${cmake_bin} REQUIRED)
find_program(DPKG_DEB dpkg-deb REQUIRED)

# 1. build the package
run("cpack -G DEB" ${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}/pkg)
file(GLOB debs ${WORK_DIR}/pkg/*.deb)
list(LENGTH debs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "cpack wrote ${n} .deb files (expected 1): ${debs}")
endif()
set(deb ${debs})
message(STATUS "package: ${deb}")

# 2. control fields
foreach(field Package Version Depends)
  run("dpkg-deb -f ${field}" ${DPKG_DEB} -f ${deb} ${field})
  string(STRIP "${run_out}" value_${field})
endforeach()
if(NOT value_Package STREQUAL "dblock")
  message(FATAL_ERROR "Package: '${value_Package}', expected dblock")
endif()
if(NOT value_Version STREQUAL EXPECTED_VERSION)
  message(FATAL_ERROR "Version: '${value_Version}', expected ${EXPECTED_VERSION}")
endif()
if(value_Depends STREQUAL "")
  message(FATAL_ERROR "Depends is empty")
endif()
# dpkg-shlibdeps ran: the command's own shared libraries are named (libc6 is always one).
if(NOT value_Depends MATCHES "libc6")
  message(FATAL_ERROR "Depends names no shared library of the command (dpkg-shlibdeps did not run?): ${value_Depends}")
endif()
run("dpkg-deb -I" ${DPKG_DEB} -I ${deb})
message(STATUS "Depends: ${value_Depends}")

# 3. contents
run("dpkg-deb -c" ${DPKG_DEB} -c ${deb})
set(listing "${run_out}")
foreach(pattern
    "/usr/bin/dblock\n"
    "/usr/lib/[^ \n]*libdblock_core\\.a\n"
    "/usr/lib/[^ \n]*libdblock\\.a\n"
    "/usr/include/dblock/dblock\\.hpp\n"
    "/usr/include/dblock/version\\.hpp\n"
    "/usr/lib/[^ \n]*cmake/dblock/dblockConfig\\.cmake\n"
    "/usr/lib/[^ \n]*cmake/dblock/dblockTargets\\.cmake\n"
    "/usr/lib/[^ \n]*pkgconfig/dblock\\.pc\n"
    "/usr/lib/[^ \n]*pkgconfig/dblock-core\\.pc\n"
    "/usr/share/man/man1/dblock\\.1\n"
    "/usr/share/doc/dblock/copyright\n"
    "/usr/share/doc/dblock/README\\.md\n"
    "/usr/share/doc/dblock/CHANGELOG\\.md\n")
  if(NOT listing MATCHES "${pattern}")
    string(STRIP "${pattern}" shown)
    message(FATAL_ERROR "the package lacks ${shown}:\n${listing}")
  endif()
endforeach()

# 4. extract and use it
set(root ${WORK_DIR}/root)
run("dpkg-deb -x" ${DPKG_DEB} -x ${deb} ${root})
dblock_check_public_headers(${root}/usr/include)
set(dblock ${root}/usr/bin/dblock)
run("extracted dblock --version" ${dblock} --version)
string(FIND "${run_out}" "${EXPECTED_VERSION}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "extracted dblock --version printed '${run_out}', expected ${EXPECTED_VERSION}")
endif()
run("configure the consumer against the package" ${CMAKE_COMMAND_PATH} -S ${CONSUMER_SOURCE}
    -B ${WORK_DIR}/consumer-build -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${root}/usr
    -DEXPECTED_PREFIX=${root}/usr -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
run("build the consumer" ${CMAKE_COMMAND_PATH} --build ${WORK_DIR}/consumer-build)
run("run the consumer" ${WORK_DIR}/consumer-build/consumer sqlite:${WORK_DIR}/consumer.db)
string(FIND "${run_out}" "consumer ok: dblock ${EXPECTED_VERSION}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "consumer printed '${run_out}'")
endif()
message(STATUS "${run_out}")

# 5. the man page
set(page ${root}/usr/share/man/man1/dblock.1)
find_program(GROFF groff REQUIRED)
run("groff -man -Tutf8 -ww -z" ${GROFF} -man -Tutf8 -ww -z ${page})
if(NOT run_err STREQUAL "")
  message(FATAL_ERROR "groff warns about ${page}:\n${run_err}")
endif()
find_program(MAN man)
if(MAN)
  execute_process(COMMAND ${CMAKE_COMMAND_PATH} -E env MANWIDTH=80 ${MAN} --warnings -l ${page}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE rendered ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT err STREQUAL "")
    message(FATAL_ERROR "man --warnings -l ${page} (${rc}):\n${err}")
  endif()
endif()
file(READ ${page} source)
if(NOT source MATCHES "\n\\.TH DBLOCK 1 [^\n]*\"dblock ${EXPECTED_VERSION}\"")
  message(FATAL_ERROR "the man page's .TH line does not carry dblock ${EXPECTED_VERSION}")
endif()
# Every option and subcommand of the command's help is in the man page (written \-\- there).
set(missing "")
foreach(sub "" migrate exec locks reap idempotency "idempotency show" "idempotency list")
  separate_arguments(sub_args UNIX_COMMAND "${sub}")
  run("dblock ${sub} --help" ${dblock} ${sub_args} --help)
  string(REGEX MATCHALL "--[a-z][a-z-]*" options "${run_out}")
  foreach(o IN LISTS options)
    string(REPLACE "-" "\\-" escaped "${o}")
    string(FIND "${source}" "${escaped}" at)
    if(at EQUAL -1)
      list(APPEND missing "dblock ${sub} ${o}")
    endif()
  endforeach()
  if(sub STREQUAL "")
    # The subcommands: the lines after "Subcommands:".
    string(REGEX REPLACE ".*Subcommands:\n" "" subs "${run_out}")
    string(REGEX MATCHALL "\n?  [a-z]+ " subs "${subs}")
    foreach(s IN LISTS subs)
      string(STRIP "${s}" s)
      if(NOT source MATCHES "\n\\.SS ${s}[ \n]")
        list(APPEND missing "subcommand ${s}")
      endif()
    endforeach()
  endif()
endforeach()
if(missing)
  list(REMOVE_DUPLICATES missing)
  string(REPLACE ";" "\n  " missing "${missing}")
  message(FATAL_ERROR "the man page does not document:\n  ${missing}")
endif()
message(STATUS "man page renders cleanly and documents every option")
