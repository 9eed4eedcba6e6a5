# onelearn-run under a real Slurm (tests/cmake/run_slurm_test.cmake): a one-node cluster started
# by scripts/slurm-local.sh (Debian: slurm-wlm, munge; not in install-deps.sh), a batch script of
# `onelearn-run slurm` submitted with sbatch, a rank killed, the job resumed by itself to the
# uninterrupted run's weights. Off by default: it needs Slurm, and CI's time is short.
#   cmake -DONELEARN_SLURM_TESTS=ON build && ctest --test-dir build -R run_slurm$
option(ONELEARN_SLURM_TESTS "Test onelearn-run under a local Slurm cluster (needs slurm-wlm and munge)" OFF)
if(ONELEARN_SLURM_TESTS)
  foreach(program sbatch slurmctld slurmd munged)
    find_program(ONELEARN_${program}_PROGRAM ${program})
    if(NOT ONELEARN_${program}_PROGRAM)
      message(FATAL_ERROR "ONELEARN_SLURM_TESTS=ON needs ${program}: apt-get install slurm-wlm munge")
    endif()
  endforeach()
  add_test(NAME run_slurm
    COMMAND ${CMAKE_COMMAND} -DRUN=$<TARGET_FILE:onelearn-run>
            -DFIT=$<TARGET_FILE:onelearn_resumable_fit> -DMPIRUN=${MPIEXEC_EXECUTABLE}
            "-DMPIRUN_FLAGS=${ONELEARN_MPIRUN_FLAGS}" -DSLURM_LOCAL=${PROJECT_SOURCE_DIR}/scripts/slurm-local.sh
            -DWORK=${CMAKE_CURRENT_BINARY_DIR}/run_slurm
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/run_slurm_test.cmake)
  # RUN_SERIAL: the cluster's two CPUs are the job's.
  set_tests_properties(run_slurm PROPERTIES LABELS mpi TIMEOUT 420 PROCESSORS 2 RUN_SERIAL ON)
endif()
