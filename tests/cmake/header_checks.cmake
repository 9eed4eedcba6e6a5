# Every public header compiles on its own (the way Kokkos tests it): one generated source per
# header, each including only that header, all compiled into one object library.
file(GLOB_RECURSE onelearn_public_headers RELATIVE "${PROJECT_SOURCE_DIR}/include"
     CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/include/onelearn/*.hpp")
list(FILTER onelearn_public_headers EXCLUDE REGEX "/detail/")  # private: included by others
list(APPEND onelearn_public_headers onelearn/core/version.hpp)  # generated in the build tree
# Headers of an optional part are checked when its dependency is there.
if(NOT ONELEARN_HAVE_MPI)
  list(FILTER onelearn_public_headers EXCLUDE REGEX "^onelearn/((exec|tune)/mpi\\.hpp|exec/mpi/)")
endif()
if(NOT ONELEARN_HAVE_UCX)
  list(FILTER onelearn_public_headers EXCLUDE REGEX "^onelearn/exec/(ucx\\.hpp|ucx/)")
endif()
if(NOT ONELEARN_HAVE_ONNX)
  list(FILTER onelearn_public_headers EXCLUDE REGEX "^onelearn/onnx/")
endif()

set(onelearn_header_sources)
foreach(header IN LISTS onelearn_public_headers)
  string(MAKE_C_IDENTIFIER "${header}" stem)
  set(source "${CMAKE_CURRENT_BINARY_DIR}/header_checks/${stem}.cpp")
  file(CONFIGURE OUTPUT "${source}" CONTENT "#include <${header}>\n#include <${header}>  // twice: include guards work\n")
  list(APPEND onelearn_header_sources "${source}")
  # The headers above the ONNX executor (graph.hpp and what includes it) are checked with its
  # operators declared, not defined (ONELEARN_ONNX_SEPARATE_OPERATORS, onnx/ops/registry.hpp):
  # otherwise each of them compiles all ~200 operators again, which registry.hpp's own check and
  # each operator header's check already do (graph, to_estimator, to_sequential and export:
  # 45 CPU s less, 2026-11-29). Whether a header includes what it uses does not change.
  if(header MATCHES "^onelearn/onnx/" AND NOT header MATCHES "^onelearn/onnx/ops/")
    set_source_files_properties("${source}" PROPERTIES
                                COMPILE_DEFINITIONS ONELEARN_ONNX_SEPARATE_OPERATORS)
  endif()
endforeach()

add_library(onelearn_header_checks OBJECT ${onelearn_header_sources})
target_link_libraries(onelearn_header_checks PRIVATE onelearn::onelearn onelearn_warnings)
# Only whether each header compiles matters here: no optimisation, no debug information.
target_compile_options(onelearn_header_checks PRIVATE -O0 -g0)
if(ONELEARN_HAVE_MPI)
  target_link_libraries(onelearn_header_checks PRIVATE onelearn::mpi)
endif()
if(ONELEARN_HAVE_ONNX)
  target_link_libraries(onelearn_header_checks PRIVATE onelearn::onnx)
endif()
if(ONELEARN_HAVE_UCX)
  target_link_libraries(onelearn_header_checks PRIVATE onelearn::ucx)
endif()
# The objects are built with the rest of the project; the test makes a failure visible in ctest
# output too (the build is a no-op when they are up to date).
add_test(NAME headers_compile_alone
  COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target onelearn_header_checks)
set_tests_properties(headers_compile_alone PROPERTIES LABELS build)
