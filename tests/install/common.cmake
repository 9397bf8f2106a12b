# tests/install/common.cmake — what the install tests (run.cmake, deb.cmake) share:
#   dblock_require_inputs(<var>...)   fails naming the first -D<var>=... not given
#   run(<what> <command>...)          runs a command; fails with its output unless it exits 0;
#                                     sets run_out and run_err in the caller
#   dblock_check_public_headers(<include dir>)  fails when an installed header under
#       <include dir>/dblock names the library's insides: the `detail::` namespace or the
#       internal backend (any spelling of "backend").
function(dblock_require_inputs)
  foreach(v IN LISTS ARGN)
    if(NOT DEFINED ${v})
      message(FATAL_ERROR "${CMAKE_CURRENT_LIST_FILE} needs -D${v}=...")
    endif()
  endforeach()
endfunction()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
  set(run_err "${err}" PARENT_SCOPE)
endfunction()

function(dblock_check_public_headers include_dir)
  file(GLOB_RECURSE headers ${include_dir}/dblock/*)
  if(NOT headers)
    message(FATAL_ERROR "no headers under ${include_dir}/dblock")
  endif()
  set(problems "")
  foreach(h IN LISTS headers)
    # One list element per line: ';' and brackets would split or join CMake list items.
    file(READ ${h} text)
    string(REGEX REPLACE "[][;]" "_" text "${text}")
    string(REPLACE "\n" ";" lines "${text}")
    get_filename_component(name ${h} NAME)
    set(n 0)
    foreach(line IN LISTS lines)
      math(EXPR n "${n} + 1")
      string(TOLOWER "${line}" lower)
      if(line MATCHES "detail::" OR lower MATCHES "backend")
        string(APPEND problems "  ${name}:${n}: ${line}\n")
      endif()
    endforeach()
  endforeach()
  if(problems)
    message(FATAL_ERROR "installed headers name dblock's insides (detail:: or backend):\n${problems}")
  endif()
endfunction()
