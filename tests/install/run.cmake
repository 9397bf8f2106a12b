# tests/install/run.cmake — the install test (ctest: dblock_install), run with cmake -P:
#   1. cmake --install BUILD_DIR --prefix WORK_DIR/prefix
#   2. the headers, libraries, the dblock command, the CMake package and dblock.pc are there
#   3. configure + build tests/install/consumer against that prefix only, and run it
#   4. compile + link pkgconfig_main.cpp with nothing but `pkg-config --cflags --libs dblock`
# Inputs: BUILD_DIR, CONSUMER_SOURCE, WORK_DIR, EXPECTED_VERSION, CMAKE_COMMAND_PATH.
cmake_minimum_required(VERSION 3.20)
foreach(v BUILD_DIR CONSUMER_SOURCE WORK_DIR EXPECTED_VERSION CMAKE_COMMAND_PATH)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run.cmake needs -D${v}=...")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# 1. install
run("cmake --install" ${CMAKE_COMMAND_PATH} --install ${BUILD_DIR} --prefix ${prefix})

# 2. what must be installed
foreach(f include/dblock/dblock.hpp include/dblock/version.hpp include/dblock/errors.hpp bin/dblock)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
file(GLOB_RECURSE config_files ${prefix}/*/dblockConfig.cmake)
file(GLOB_RECURSE pc_files ${prefix}/*/pkgconfig/dblock.pc)
if(NOT config_files)
  message(FATAL_ERROR "no dblockConfig.cmake under ${prefix}")
endif()
if(NOT pc_files)
  message(FATAL_ERROR "no pkgconfig/dblock.pc under ${prefix}")
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
run("run the consumer" ${WORK_DIR}/consumer-build/consumer ${WORK_DIR}/consumer.db)
string(FIND "${run_out}" "consumer ok: dblock ${EXPECTED_VERSION}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "consumer printed '${run_out}'")
endif()
message(STATUS "${run_out}")

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
run("run the pkg-config consumer" ${WORK_DIR}/pkgconfig_consumer ${WORK_DIR}/pkgconfig.db)
message(STATUS "${run_out}")
