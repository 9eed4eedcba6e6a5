# The floors of include/onelearn/ and the one direction their #include arrows may run:
#
#   core <- exec, io, space <- base <- metrics <- the estimator families <- nn, rl, compose, pipeline,
#   model_selection, tune <- onnx
#
# A header may include its own floor and the floors below it, never one above: core/ needs
# nothing else of onelearn, the execution policies and the file formats need only core/, and so
# on. Run as a script, so that a misplaced include fails `ctest -L build` with the file, the
# include and both floors named:
#   cmake -DONELEARN_INCLUDE_DIR=include -P tests/cmake/check_layering.cmake
if(NOT ONELEARN_INCLUDE_DIR)
  message(FATAL_ERROR "check_layering: pass -DONELEARN_INCLUDE_DIR=<onelearn's include directory>")
endif()

get_filename_component(ONELEARN_INCLUDE_DIR "${ONELEARN_INCLUDE_DIR}" ABSOLUTE)

# The floor of each top-level folder (or top-level header, without .hpp), lowest first.
set(floor_core 0)
set(floor_exec 1)
set(floor_io 1)
set(floor_space 1)  # compute spaces: where the arithmetic runs, beside the communicators
set(floor_base 2)
set(floor_metrics 3)
foreach(family preprocessing linear_model cluster decomposition neighbors naive_bayes tree ensemble)
  set(floor_${family} 4)
endforeach()
foreach(composite nn rl compose pipeline model_selection tune)
  set(floor_${composite} 5)
endforeach()
set(floor_onnx 6)

# "onelearn/linear_model/detail/gram.hpp" -> "linear_model"; "onelearn/pipeline.hpp" -> "pipeline"
function(onelearn_floor_of path out)
  string(REGEX REPLACE "^onelearn/" "" rest "${path}")
  string(REGEX REPLACE "/.*$" "" top "${rest}")
  string(REGEX REPLACE "\\.hpp$" "" top "${top}")
  set(${out} "${top}" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE headers RELATIVE "${ONELEARN_INCLUDE_DIR}" "${ONELEARN_INCLUDE_DIR}/onelearn/*.hpp")
set(violations "")
set(checked 0)
foreach(header IN LISTS headers)
  onelearn_floor_of("${header}" from)
  if(NOT DEFINED floor_${from})
    string(APPEND violations "\n  ${header}: its folder '${from}' has no floor in check_layering.cmake")
    continue()
  endif()
  file(STRINGS "${ONELEARN_INCLUDE_DIR}/${header}" includes REGEX "^#include \"onelearn/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*$" "\\1" target "${line}")
    onelearn_floor_of("${target}" to)
    math(EXPR checked "${checked} + 1")
    if(NOT DEFINED floor_${to})
      string(APPEND violations "\n  ${header} includes ${target}: '${to}' has no floor")
    elseif(floor_${to} GREATER floor_${from})
      string(APPEND violations
             "\n  ${header} (${from}, floor ${floor_${from}}) includes ${target} (${to}, floor ${floor_${to}})")
    endif()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "check_layering: expected every #include to stay on its floor or go down, found:${violations}")
endif()
list(LENGTH headers count)
message(STATUS "check_layering: ${count} headers, ${checked} includes of onelearn headers, all on their floor or below")
