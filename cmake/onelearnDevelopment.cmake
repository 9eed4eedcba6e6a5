# Settings for building onelearn's own tests, examples and benchmarks. Never applied to a
# project that consumes onelearn.

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

find_program(ONELEARN_CCACHE ccache)
if(ONELEARN_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${ONELEARN_CCACHE}")
endif()

set(CMAKE_EXPORT_COMPILE_COMMANDS ON)  # for clang-tidy and clangd

option(ONELEARN_SANITIZE
  "Build the test executables with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

# Warnings for onelearn's own code. Dependencies come in as SYSTEM includes, so their
# warnings stay out of the way.
add_library(onelearn_warnings INTERFACE)
target_compile_options(onelearn_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor -Werror=return-type)

# The sanitizers, for the executables that run onelearn's code under test (tests/ links it).
# scripts/test.sh turns them on, so that one build of the tests runs everything once, under
# ASan and UBSan, instead of a plain build and a second, sanitized build of the same files.
# -Og: Eigen is written for an inlining compiler; at -O0 under ASan the unit tests ran more than
# 40 times slower than at -O2 (past a 300 s timeout, from 7 s), and -O0 does not even compile
# faster under ASan (every load and store is instrumented). -Og keeps the early inliner that
# Eigen needs and skips the -O1 passes that cost the most compile time: test_k_means.cpp 39-41
# CPU s against 52-53 at -O1, test_rl_agents.cpp 47 against 72 (2026-11-29), while the tests run
# as fast (test_k_means 0.7 s either way) or up to a third slower where the networks train
# (test_rl_agents 58-79 s against 45-58): the CI machine compiles these files once and runs them
# once, and the compile is the larger part. -g1: line tables for the reports, without the cost
# of full debug information.
# Three UBSan checks are left out because they cost a third of the compile time (test_ridge.cpp,
# g++ 12 -O1, CPU seconds: no sanitizer 44, ASan 58, ASan+UBSan 91, without these three 62) and
# add little here: `null` (ASan reports the dereference itself), `alignment` (x86 loads any
# alignment; Eigen aligns its own buffers), `vptr` (onelearn downcasts with dynamic_cast).
add_library(onelearn_sanitizers INTERFACE)
if(ONELEARN_SANITIZE)
  target_compile_options(onelearn_sanitizers INTERFACE
    -fsanitize=address,undefined -fno-sanitize=alignment,null,vptr
    -fno-sanitize-recover=undefined -fno-omit-frame-pointer -Og -g1)
  target_link_options(onelearn_sanitizers INTERFACE
    -fsanitize=address,undefined -fno-sanitize=alignment,null,vptr)
endif()

# The examples, tools and benchmarks keep the build type's flags, as users build them; only
# scripts/test.sh turns their debug information off (ONELEARN_PROGRAMS_DEBUG_INFO=OFF): nothing
# reads it there, and it was a third of their compile time (cold CI build, 2026-11-27:
# onelearn_bench.cpp 266 s, onelearn_onnx.cpp 141 s, the five examples 270 s at -O2 -g).
# tools/, examples/ and bench/ call onelearn_program_flags() first.
option(ONELEARN_PROGRAMS_DEBUG_INFO
  "Compile the examples, tools and benchmarks with the build type's debug information" ON)
macro(onelearn_program_flags)
  if(NOT ONELEARN_PROGRAMS_DEBUG_INFO)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-g0>)
  endif()
endmacro()

# Every command-line program answers --help (exit 0, the usage naming `expected_in_help`) and
# --version (exit 0, "<program> <version>"): ctest label `build`. The shell appends a marker only
# when the program exited 0, since a PASS_REGULAR_EXPRESSION alone would ignore the exit status.
function(onelearn_add_cli_tests program expected_in_help)
  foreach(flag help version)
    add_test(NAME ${program}_${flag}
      COMMAND sh -c "\"$0\" --${flag} && echo exited-with-0" $<TARGET_FILE:${program}>)
  endforeach()
  set_tests_properties(${program}_help PROPERTIES LABELS build
    PASS_REGULAR_EXPRESSION "${expected_in_help}(.|\n)*exited-with-0")
  set_tests_properties(${program}_version PROPERTIES LABELS build
    PASS_REGULAR_EXPRESSION "^${program} ${PROJECT_VERSION}\nexited-with-0")
endfunction()
