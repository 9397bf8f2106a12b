# tests/install/run.cmake — the install tests (ctest: dblock_install*), run with cmake -P:
#   0. with SOURCE_DIR and BACKENDS (a list of pqxx, mysql, soci): configure and build a
#      dblock with only those backends into WORK_DIR/build first, and install that
#   1. cmake --install BUILD_DIR --prefix WORK_DIR/prefix
#   2. the headers, libraries, the dblock command, the CMake package, dblock.pc and the man
#      page are there; no installed header names detail:: or the backend
#      (common.cmake); with BACKENDS, nothing installed names a client library that
#      was left out
#   3. configure + build tests/install/consumer against that prefix only, and run it on
#      CONSUMER_URL (default: an SQLite file); with MISSING_URL, open() of it must be
#      refused naming the backend left out
#   4. compile + link pkgconfig_main.cpp with nothing but `pkg-config --cflags --libs dblock`
# Inputs: BUILD_DIR (or SOURCE_DIR + BACKENDS), CONSUMER_SOURCE, WORK_DIR, EXPECTED_VERSION,
# CMAKE_COMMAND_PATH; optional CONSUMER_URL, MISSING_URL.
cmake_minimum_required(VERSION 3.20)
if(DEFINED SOURCE_DIR)
  set(BUILD_DIR ${WORK_DIR}/build)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
dblock_require_inputs(BUILD_DIR CONSUMER_SOURCE WORK_DIR EXPECTED_VERSION CMAKE_COMMAND_PATH)

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# 0. a build with only some backends
if(DEFINED SOURCE_DIR)
  set(flags)
  foreach(b PQXX MYSQL SOCI)
    string(TOLOWER ${b} lower)
    if(lower IN_LIST BACKENDS)
      list(APPEND flags -DDBLOCK_WITH_${b}=ON)
    else()
      list(APPEND flags -DDBLOCK_WITH_${b}=OFF)
    endif()
  endforeach()
  run("configure dblock with ${BACKENDS} only" ${CMAKE_COMMAND_PATH} -S ${SOURCE_DIR} -B ${BUILD_DIR}
      -DCMAKE_BUILD_TYPE=Release -DDBLOCK_BUILD_TESTS=OFF -DDBLOCK_BUILD_BENCH=OFF -DDBLOCK_BUILD_EXAMPLES=OFF ${flags})
  cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
  run("build dblock with ${BACKENDS} only" ${CMAKE_COMMAND_PATH} --build ${BUILD_DIR} -j${cores})
endif()

# 1. install
run("cmake --install" ${CMAKE_COMMAND_PATH} --install ${BUILD_DIR} --prefix ${prefix})

# 2. what must be installed
foreach(f include/dblock/dblock.hpp include/dblock/version.hpp include/dblock/errors.hpp bin/dblock
          share/man/man1/dblock.1)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
dblock_check_public_headers(${prefix}/include)
file(GLOB_RECURSE config_files ${prefix}/*/dblockConfig.cmake)
file(GLOB_RECURSE pc_files ${prefix}/*/pkgconfig/dblock.pc)
if(NOT config_files)
  message(FATAL_ERROR "no dblockConfig.cmake under ${prefix}")
endif()
if(NOT pc_files)
  message(FATAL_ERROR "no pkgconfig/dblock.pc under ${prefix}")
endif()
if(DEFINED SOURCE_DIR)
  # What was left out leaves no trace: no header, no .pc, no CMake dependency, no library
  # linked into the command.
  # Per backend left out: a pattern for installed file names, one for what the CMake and
  # pkg-config files and the command's ldd may not mention.
  set(left_out)
  if(NOT pqxx IN_LIST BACKENDS)
    list(APPEND left_out "pqxx|libpqxx|PQXX")
  endif()
  if(NOT mysql IN_LIST BACKENDS)
    list(APPEND left_out "mysql\\.hpp|mysqlcppconn")
  endif()
  if(NOT soci IN_LIST BACKENDS)
    list(APPEND left_out "soci|soci_core|libsoci")
  endif()
  file(GLOB_RECURSE installed LIST_DIRECTORIES false RELATIVE ${prefix} ${prefix}/*)
  file(GLOB_RECURSE meta ${prefix}/*.cmake ${prefix}/*.pc)
  run("ldd of the installed command" ldd ${prefix}/bin/dblock)
  set(ldd_out "${run_out}")
  foreach(entry IN LISTS left_out)
    string(REPLACE "|" ";" words "${entry}")
    list(GET words 0 name_word)
    list(SUBLIST words 1 -1 link_words)
    foreach(f IN LISTS installed)
      if(f MATCHES "${name_word}")
        message(FATAL_ERROR "installed ${f} although its backend was left out")
      endif()
    endforeach()
    foreach(word IN LISTS link_words)
      foreach(f IN LISTS meta)
        file(READ ${f} text)
        string(FIND "${text}" "${word}" at)
        if(NOT at EQUAL -1)
          message(FATAL_ERROR "${f} mentions ${word}, which was left out")
        endif()
      endforeach()
      string(FIND "${ldd_out}" "${word}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "the installed dblock links ${word}, which was left out:\n${ldd_out}")
      endif()
    endforeach()
  endforeach()
endif()
run("installed dblock --version" ${prefix}/bin/dblock --version)
string(FIND "${run_out}" "${EXPECTED_VERSION}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "installed dblock --version printed '${run_out}', expected ${EXPECTED_VERSION}")
endif()

# 3. an outside CMake project
run("configure the consumer" ${CMAKE_COMMAND_PATH} -S ${CONSUMER_SOURCE} -B ${WORK_DIR}/consumer-build
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DEXPECTED_PREFIX=${prefix}
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
run("build the consumer" ${CMAKE_COMMAND_PATH} --build ${WORK_DIR}/consumer-build)
set(run_consumers ON)
if(DEFINED CONSUMER_URL_ENV)
  set(CONSUMER_URL "$ENV{${CONSUMER_URL_ENV}}")
  if(CONSUMER_URL STREQUAL "")
    if("$ENV{DBLOCK_TEST_REQUIRE_ALL}" STREQUAL "1")
      message(FATAL_ERROR "${CONSUMER_URL_ENV} is not set (DBLOCK_TEST_REQUIRE_ALL=1)")
    endif()
    message(STATUS "${CONSUMER_URL_ENV} is not set: the consumers are built, not run")
    set(run_consumers OFF)
  endif()
endif()
if(NOT DEFINED CONSUMER_URL)
  set(CONSUMER_URL "sqlite:${WORK_DIR}/consumer.db")
endif()
set(missing)
if(DEFINED MISSING_URL)
  set(missing ${MISSING_URL})
endif()
if(run_consumers)
  run("run the consumer" ${WORK_DIR}/consumer-build/consumer ${CONSUMER_URL} ${missing})
  string(FIND "${run_out}" "consumer ok: dblock ${EXPECTED_VERSION}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "consumer printed '${run_out}'")
  endif()
  message(STATUS "${run_out}")
endif()

# 4. pkg-config alone
find_program(PKG_CONFIG_EXECUTABLE pkg-config REQUIRED)
find_program(CXX_COMPILER NAMES c++ g++ REQUIRED)
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
set(pc ${CMAKE_COMMAND_PATH} -E env PKG_CONFIG_PATH=${pc_dir} ${PKG_CONFIG_EXECUTABLE})
run("pkg-config --modversion" ${pc} --modversion dblock)
string(STRIP "${run_out}" version)
if(NOT version STREQUAL EXPECTED_VERSION)
  message(FATAL_ERROR "dblock.pc says version '${version}', expected ${EXPECTED_VERSION}")
endif()
run("pkg-config --cflags" ${pc} --cflags dblock)
string(STRIP "${run_out}" cflags)
separate_arguments(cflags UNIX_COMMAND "${cflags}")
run("pkg-config --libs" ${pc} --libs dblock)
string(STRIP "${run_out}" libs)
separate_arguments(libs UNIX_COMMAND "${libs}")
get_filename_component(here ${CMAKE_CURRENT_LIST_FILE} DIRECTORY)
run("compile + link with pkg-config flags" ${CXX_COMPILER} -std=c++20 ${cflags} ${here}/pkgconfig_main.cpp
    -o ${WORK_DIR}/pkgconfig_consumer ${libs})
if(CONSUMER_URL MATCHES "^sqlite:")
  set(CONSUMER_URL "sqlite:${WORK_DIR}/pkgconfig.db")
endif()
if(run_consumers)
  run("run the pkg-config consumer" ${WORK_DIR}/pkgconfig_consumer ${CONSUMER_URL})
  message(STATUS "${run_out}")
endif()
