# Related test files compiled as one translation unit per group (CMake's unity build in GROUP
# mode). The files of a group instantiate the same templates (the linear models' solvers,
# Sequential's fit, the tree growers) and a group pays for them once: most of a test file's
# compile time is template instantiation and code generation, not parsing (including the headers
# of test_linear_regression.cpp alone takes 7 of its ~90 s). Unrelated files gain nothing
# together (CMake's default batches of 8 were measured even), so only families are grouped.
# A group's files must not define the same name at namespace scope: what they share lives in a
# header (nn_support.hpp).
#
#   onelearn_test_group(<target> <group> <file>...)   files relative to tests/
#
# -DONELEARN_TEST_GROUPS=OFF compiles every file alone (to find which file an error is in, or
# to rebuild one file after an edit).
option(ONELEARN_TEST_GROUPS "Compile related test files as one translation unit per group" ON)

function(onelearn_test_group target group)
  if(NOT ONELEARN_TEST_GROUPS)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  list(TRANSFORM ARGN PREPEND "${PROJECT_SOURCE_DIR}/tests/")
  set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target}
                              PROPERTIES UNITY_GROUP "${target}_${group}")
endfunction()
