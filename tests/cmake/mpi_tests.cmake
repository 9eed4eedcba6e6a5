# The distributed tests: one executable (and a small one for onnx::to_estimator, which needs
# ONNX), run by CTest under mpirun with 2 ranks and with 3
# (uneven shards). Every test compares the distributed fit with the fit on the concatenated data.
file(GLOB onelearn_mpi_sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/mpi/*.cpp")
if(NOT ONELEARN_HAVE_UCX)  # the exec::ucx tests need UCX (Debian: libucx-dev)
  list(FILTER onelearn_mpi_sources EXCLUDE REGEX "/test_exec_ucx\\.cpp$")
endif()
# onnx::to_estimator under exec::mpi: an executable of its own (below), so that ONNX's
# headers and definitions stay out of this one.
list(FILTER onelearn_mpi_sources EXCLUDE REGEX "/test_onnx_import\\.cpp$")
add_executable(onelearn_mpi_tests ${onelearn_mpi_sources})
target_link_libraries(onelearn_mpi_tests PRIVATE onelearn_test_support onelearn::mpi)
onelearn_test_group(onelearn_mpi_tests linear_models
  mpi/test_linear_models_nb.cpp mpi/test_logistic_regression.cpp mpi/test_sgd.cpp
  mpi/test_multinomial_nb.cpp)
onelearn_test_group(onelearn_mpi_tests nn
  mpi/test_nn_zero.cpp mpi/test_nn_data_parallel.cpp mpi/test_agreement_nn.cpp)
onelearn_test_group(onelearn_mpi_tests trees mpi/test_trees.cpp mpi/test_hist_gradient_boosting.cpp)
onelearn_test_group(onelearn_mpi_tests model_selection mpi/test_search_cv.cpp mpi/test_tune.cpp)
# The policies' own tests and KMeans/PCA share the estimators under exec::mpi (306 CPU s
# together against 411 apart, 2026-11-28).
onelearn_test_group(onelearn_mpi_tests exec
  mpi/test_exec_mpi.cpp mpi/test_exec_ucx.cpp mpi/test_k_means_pca.cpp)
if(ONELEARN_HAVE_UCX)
  target_link_libraries(onelearn_mpi_tests PRIVATE onelearn::ucx)
endif()
# The CPU Thrust systems found, for the estimators in a compute space under exec::mpi
# (mpi/test_estimators_in_space.cpp), as onelearn_tests links them (space_tests.cmake).
foreach(system IN ITEMS thrust_cpp thrust_omp)
  if(TARGET onelearn::${system})
    target_link_libraries(onelearn_mpi_tests PRIVATE onelearn::${system})
  endif()
endforeach()

set(onelearn_mpirun_flags --oversubscribe)
execute_process(COMMAND id -u OUTPUT_VARIABLE onelearn_uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(onelearn_uid STREQUAL "0")  # containers and CI often run as root; OpenMPI refuses by default
  list(APPEND onelearn_mpirun_flags --allow-run-as-root)
endif()
# Shared-memory transport without CMA: the single-copy mechanism needs ptrace rights that
# containers usually withhold, and OpenMPI then prints a warning per rank.
list(APPEND onelearn_mpirun_flags --mca btl_vader_single_copy_mechanism none)
set(ONELEARN_MPIRUN_FLAGS "${onelearn_mpirun_flags}" CACHE INTERNAL "flags for mpirun in tests")

if(TARGET onelearn::onnx)  # needs ONNX (libonnx-dev)
  add_executable(onelearn_mpi_onnx_tests "${CMAKE_CURRENT_SOURCE_DIR}/mpi/main.cpp"
                                         "${CMAKE_CURRENT_SOURCE_DIR}/mpi/test_onnx_import.cpp")
  target_link_libraries(onelearn_mpi_onnx_tests PRIVATE onelearn_test_support onelearn::mpi
                                                        onelearn::onnx)
endif()

foreach(ranks 2 3)
  add_test(NAME mpi_np${ranks}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${ONELEARN_MPIRUN_FLAGS}
            ${MPIEXEC_PREFLAGS} $<TARGET_FILE:onelearn_mpi_tests> ${MPIEXEC_POSTFLAGS})
  set(onelearn_mpi_ranks_tests mpi_np${ranks})
  if(TARGET onelearn_mpi_onnx_tests)
    add_test(NAME mpi_onnx_np${ranks}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${ONELEARN_MPIRUN_FLAGS}
              ${MPIEXEC_PREFLAGS} $<TARGET_FILE:onelearn_mpi_onnx_tests> ${MPIEXEC_POSTFLAGS})
    list(APPEND onelearn_mpi_ranks_tests mpi_onnx_np${ranks})
  endif()
  # A distributed bug shows up as a hang: the timeout turns it into a failure.
  set_tests_properties(${onelearn_mpi_ranks_tests} PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS ${ranks})
  # One thread per rank: ranks x OpenMP threads beyond the cores makes spinning threads wait
  # for descheduled ones. The unit tests run the threaded kernels.
  set(onelearn_mpi_env OMP_NUM_THREADS=1)
  if(ONELEARN_SANITIZE)
    # OpenMPI keeps allocations alive until exit, on purpose: LeakSanitizer would report them as
    # leaks of ours. Address and undefined-behaviour checks stay on.
    list(APPEND onelearn_mpi_env ASAN_OPTIONS=detect_leaks=0)
  endif()
  set_tests_properties(${onelearn_mpi_ranks_tests} PROPERTIES ENVIRONMENT "${onelearn_mpi_env}")
endforeach()

# exec::mpi's default on a timeout ends the process: a program of its own, which passes when
# the job prints the watchdog's message (and fails on a hang, at the TIMEOUT).
add_executable(onelearn_mpi_timeout_abort ${CMAKE_CURRENT_SOURCE_DIR}/mpi_abort/timeout_abort.cpp)
target_link_libraries(onelearn_mpi_timeout_abort PRIVATE onelearn::mpi)
add_test(NAME mpi_timeout_abort
  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${ONELEARN_MPIRUN_FLAGS}
          ${MPIEXEC_PREFLAGS} $<TARGET_FILE:onelearn_mpi_timeout_abort> ${MPIEXEC_POSTFLAGS})
set_tests_properties(mpi_timeout_abort PROPERTIES LABELS mpi TIMEOUT 60 PROCESSORS 2
  PASS_REGULAR_EXPRESSION "exec::mpi: rank 0: MPI_Allreduce #1 \\(step: epoch 2\\): timed out after 300 ms[^\n]*ending the process"
  FAIL_REGULAR_EXPRESSION "returned without rank 1")

# onelearn-run (tools/) restarts a run whose rank was killed; the resumed weights equal the uninterrupted
# run's byte for byte (tests/cmake/run_resume_test.cmake), for ranks 1 and 0, in both data modes, and
# (mode blocks: replicated with reproducible_blocks) for rank 2 and rank 0 of 3 when the job loses that
# slot and resumes on 2 ranks; with UCX, a replicated and a shrinking blocked run under exec::ucx.
if(TARGET onelearn-run)
  add_executable(onelearn_resumable_fit ${CMAKE_CURRENT_SOURCE_DIR}/launcher/resumable_fit.cpp)
  target_link_libraries(onelearn_resumable_fit PRIVATE onelearn::mpi)
  target_compile_options(onelearn_resumable_fit PRIVATE -g0)  # as the tests: debug info is slow
  # mode,kill rank,kill batch,ranks,shrink (commas: a CMake list of lists would flatten)
  set(resume_cases "per-rank,1,9,2,OFF" "replicated,0,20,2,OFF" "blocks,2,20,3,ON" "blocks,0,47,3,ON")
  if(ONELEARN_HAVE_UCX)  # the same under exec::ucx (MODE+ucx)
    target_link_libraries(onelearn_resumable_fit PRIVATE onelearn::ucx)
    target_compile_definitions(onelearn_resumable_fit PRIVATE ONELEARN_TEST_UCX)
    list(APPEND resume_cases "replicated+ucx,1,33,2,OFF" "blocks+ucx,1,58,3,ON")
  endif()
  foreach(row IN LISTS resume_cases)
    string(REPLACE "," ";" case "${row}")
    string(REPLACE "+" "_" case_name "${case}")
    list(GET case 0 mode)
    list(GET case_name 0 mode_name)
    list(GET case 1 kill_rank)
    list(GET case 2 kill_batch)
    list(GET case 3 np)
    list(GET case 4 shrink)
    set(name run_resume_${mode_name})
    if(shrink)
      set(name run_resume_${mode_name}_kill${kill_rank})  # blocks: two of them
    endif()
    add_test(NAME ${name}
      COMMAND ${CMAKE_COMMAND} -DRUN=$<TARGET_FILE:onelearn-run>
              -DFIT=$<TARGET_FILE:onelearn_resumable_fit> -DMPIRUN=${MPIEXEC_EXECUTABLE}
              "-DMPIRUN_FLAGS=${ONELEARN_MPIRUN_FLAGS}" -DWORK=${CMAKE_CURRENT_BINARY_DIR}/${name}
              -DMODE=${mode} -DKILL_RANK=${kill_rank} -DKILL_BATCH=${kill_batch} -DNP=${np}
              -DSHRINK=${shrink} -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/run_resume_test.cmake)
    set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 180 PROCESSORS ${np}
                         ENVIRONMENT OMP_NUM_THREADS=1)
  endforeach()
  # Slots read again before every attempt, --min-np, --max-restarts, usage errors.
  add_test(NAME run_supervision
    COMMAND ${CMAKE_COMMAND} -DRUN=$<TARGET_FILE:onelearn-run>
            -DWORK=${CMAKE_CURRENT_BINARY_DIR}/run_supervision
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/run_supervision_test.cmake)
  set_tests_properties(run_supervision PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS 2)
  # The same under a local Slurm cluster, with ONELEARN_SLURM_TESTS=ON.
  include(${CMAKE_CURRENT_SOURCE_DIR}/cmake/slurm_tests.cmake)
endif()
