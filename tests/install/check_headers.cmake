# tests/install/check_headers.cmake — dblock_check_public_headers(<include dir>): fails
# when an installed header under <include dir>/dblock names the library's insides: the
# `detail::` namespace or the internal backend (any spelling of "backend"). Included by
# run.cmake and deb.cmake.
#
# Known exception, to be removed with it: lock.hpp's session and lease classes still hold
# their state as detail::session_core / detail::held_lock; those two names (and only
# they) are tolerated in lock.hpp until the lock engine's rewrite gives them an opaque impl.
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
      if(name STREQUAL "lock.hpp")
        string(REGEX REPLACE "detail::(session_core|held_lock)" "" line "${line}")
      endif()
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
