# The documentation: every example compiles (and the guides' programs run), and doxygen builds
# the reference manual without a warning. Label: docs.
#
#   onelearn_docs_examples   one executable: the \code examples of the public headers and the
#                            ```cpp blocks of docs/*.md (extracted by tests/docs/extract_examples.py
#                            into one generated source, compiled and linked, not run), and the
#                            complete programs of docs/examples/ (each one's main renamed, run by
#                            the ctests docs_example_*)
#   docs_doxygen             scripts/docs.sh: doxygen with WARN_AS_ERROR=FAIL_ON_WARNINGS;
#                            skipped (status 77) where doxygen is not installed
find_package(Python3 COMPONENTS Interpreter)

set(onelearn_docs_dir "${PROJECT_SOURCE_DIR}/docs")
set(onelearn_docs_generated "${CMAKE_CURRENT_BINARY_DIR}/docs/doc_examples.cpp")
# Optional parts that are not built are left out.
set(onelearn_docs_skip)
if(NOT ONELEARN_HAVE_UCX)
  list(APPEND onelearn_docs_skip --skip "^include/onelearn/exec/ucx")
endif()
if(NOT ONELEARN_HAVE_ONNX)
  # PPO's example saves its policy to ONNX.
  list(APPEND onelearn_docs_skip --skip "^include/onelearn/onnx/" --skip "^docs/onnx\\.md$"
       --skip "^include/onelearn/rl/agents/ppo\\.hpp$")
endif()

if(Python3_Interpreter_FOUND AND ONELEARN_HAVE_MPI)
  file(GLOB_RECURSE onelearn_docs_inputs CONFIGURE_DEPENDS
       "${PROJECT_SOURCE_DIR}/include/onelearn/*.hpp" "${onelearn_docs_dir}/*.md")
  add_custom_command(OUTPUT "${onelearn_docs_generated}"
    COMMAND Python3::Interpreter "${CMAKE_CURRENT_SOURCE_DIR}/docs/extract_examples.py"
            "${PROJECT_SOURCE_DIR}" "${onelearn_docs_generated}" ${onelearn_docs_skip}
    DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/docs/extract_examples.py" ${onelearn_docs_inputs}
    COMMENT "Extracting the documentation's examples"
    VERBATIM)

  # The guides' complete programs: each one's main() becomes onelearn_doc_<name>(), which
  # tests/docs/main.cpp runs by name.
  set(onelearn_docs_programs getting_started policies distributed_training tuning)
  if(ONELEARN_HAVE_ONNX)
    list(APPEND onelearn_docs_programs onnx_roundtrip)
  endif()
  set(onelearn_docs_sources "${onelearn_docs_generated}" "${CMAKE_CURRENT_SOURCE_DIR}/docs/main.cpp")
  set(onelearn_docs_list "")
  foreach(program IN LISTS onelearn_docs_programs)
    set(source "${onelearn_docs_dir}/examples/${program}.cpp")
    set_source_files_properties("${source}" PROPERTIES
      COMPILE_DEFINITIONS "main=onelearn_doc_${program}")
    list(APPEND onelearn_docs_sources "${source}")
    string(APPEND onelearn_docs_list "X(${program}) ")
  endforeach()

  add_executable(onelearn_docs_examples ${onelearn_docs_sources})
  target_link_libraries(onelearn_docs_examples PRIVATE onelearn::onelearn onelearn::mpi)
  target_include_directories(onelearn_docs_examples PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
  target_compile_definitions(onelearn_docs_examples PRIVATE
    "ONELEARN_DOC_PROGRAMS=${onelearn_docs_list}")
  # Whether the examples compile is what matters: no debug information, light optimisation;
  # the extracted examples are never run, so none at all for them (their one source compiles
  # in 112 s at -O0 against 147 s at -O1, measured 2026-11-25), while the guides' programs,
  # which run, keep -O1.
  target_compile_options(onelearn_docs_examples PRIVATE -O1 -g0)
  set_source_files_properties("${onelearn_docs_generated}" PROPERTIES COMPILE_OPTIONS -O0)
  foreach(component ucx onnx openmp)
    string(TOUPPER ${component} upper)
    if(ONELEARN_HAVE_${upper})
      target_link_libraries(onelearn_docs_examples PRIVATE onelearn::${component})
    endif()
  endforeach()
  if(ONELEARN_HAVE_ONNX)
    # The ONNX operators compiled once (two of the sources run graphs).
    target_sources(onelearn_docs_examples PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/onnx_operators.cpp")
    target_compile_definitions(onelearn_docs_examples PRIVATE ONELEARN_ONNX_SEPARATE_OPERATORS)
  endif()

  # Building the examples is a test too, so that a drifted example shows in ctest's output.
  add_test(NAME docs_examples_compile
    COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target onelearn_docs_examples)
  set_tests_properties(docs_examples_compile PROPERTIES LABELS docs)
  # The same examples through clang's front end where clang is installed and the build uses
  # GCC: what compiles with one C++20 compiler need not with another (clang 14, Debian 12's,
  # lacks aggregate initialisation with parentheses, which GCC 10 has). Syntax only: ~45 s here
  # (the timeout leaves room for a CI machine several times slower).
  # The compiler's own include directory stays out of the flags, or #include_next breaks. The
  # docs target always has include directories and definitions (set above), so neither list is
  # empty.
  find_program(ONELEARN_CLANGXX NAMES clang++ clang++-16 clang++-15 clang++-14)
  if(ONELEARN_CLANGXX AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set(docs_includes "$<FILTER:$<TARGET_PROPERTY:onelearn_docs_examples,INCLUDE_DIRECTORIES>,EXCLUDE,^/usr/include/?$>")
    set(docs_defines "$<TARGET_PROPERTY:onelearn_docs_examples,COMPILE_DEFINITIONS>")
    set(docs_openmp "")
    if(ONELEARN_HAVE_OPENMP)
      set(docs_openmp -fopenmp)  # the thrust_omp examples need it (their static_assert says so)
    endif()
    add_test(NAME docs_examples_clang
      COMMAND ${ONELEARN_CLANGXX} -std=c++20 -fsyntax-only ${docs_openmp} "-isystem$<JOIN:${docs_includes},;-isystem>"
              "-D$<JOIN:${docs_defines},;-D>" "${onelearn_docs_generated}"
      COMMAND_EXPAND_LISTS)
    set_tests_properties(docs_examples_clang PROPERTIES LABELS docs TIMEOUT 900
      DEPENDS docs_examples_compile)
  endif()
  set(onelearn_docs_data "${PROJECT_SOURCE_DIR}/examples/data/diabetes.csv")
  foreach(program IN LISTS onelearn_docs_programs)
    set(ranks 1)
    if(program STREQUAL "distributed_training" OR program STREQUAL "policies")
      set(ranks 2)
    endif()
    add_test(NAME docs_example_${program}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${ONELEARN_MPIRUN_FLAGS}
              $<TARGET_FILE:onelearn_docs_examples> ${program} ${onelearn_docs_data}
      WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    set_tests_properties(docs_example_${program} PROPERTIES LABELS docs TIMEOUT 120
      PROCESSORS ${ranks} ENVIRONMENT OMP_NUM_THREADS=1 DEPENDS docs_examples_compile)
  endforeach()
endif()

find_program(ONELEARN_BASH bash)
if(ONELEARN_BASH)
  add_test(NAME docs_doxygen
    COMMAND ${ONELEARN_BASH} ${PROJECT_SOURCE_DIR}/scripts/docs.sh ${CMAKE_BINARY_DIR}/docs)
  set_tests_properties(docs_doxygen PROPERTIES LABELS docs SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
