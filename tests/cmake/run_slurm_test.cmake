# onelearn-run under Slurm, for real: scripts/slurm-local.sh starts a one-node cluster, the batch
# script of `onelearn-run slurm` is submitted with sbatch, a rank kills itself (SIGKILL) in the
# middle of training, onelearn-run starts a new srun step from the last checkpoint, and the job
# ends by itself with the weights of the same run never interrupted, byte for byte. Twice: rank 1
# in the per-rank data mode, rank 0 in the replicated one. The cluster is stopped afterwards
# whether the checks passed or not (the checks run in a cmake process of their own, with a time
# limit below the test's).
#   cmake -DRUN=<onelearn-run> -DFIT=<resumable_fit> -DMPIRUN=<mpirun> "-DMPIRUN_FLAGS=<flags>"
#         -DSLURM_LOCAL=<scripts/slurm-local.sh> -DWORK=<scratch dir> [-DPORT=26817] -P this
if(NOT PHASE STREQUAL "checks")
  if(NOT PORT)
    set(PORT 26817)
  endif()
  file(REMOVE_RECURSE "${WORK}")
  file(MAKE_DIRECTORY "${WORK}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ONELEARN_SLURM_PORT=${PORT} bash ${SLURM_LOCAL} start ${WORK}/slurm
                  RESULT_VARIABLE started OUTPUT_VARIABLE start_out ERROR_VARIABLE start_err TIMEOUT 60)
  if(started EQUAL 0)
    execute_process(
      COMMAND ${CMAKE_COMMAND} -DPHASE=checks -DRUN=${RUN} -DFIT=${FIT} -DMPIRUN=${MPIRUN}
              "-DMPIRUN_FLAGS=${MPIRUN_FLAGS}" -DWORK=${WORK} -P ${CMAKE_CURRENT_LIST_FILE}
      RESULT_VARIABLE checked TIMEOUT 240)
  endif()
  execute_process(COMMAND bash ${SLURM_LOCAL} stop ${WORK}/slurm TIMEOUT 60
                  RESULT_VARIABLE stopped OUTPUT_VARIABLE stop_out ERROR_VARIABLE stop_err)
  if(NOT started EQUAL 0)
    message(FATAL_ERROR "slurm-local.sh start failed (${started}):\n${start_out}\n${start_err}")
  endif()
  if(NOT stopped EQUAL 0)
    message(FATAL_ERROR "slurm-local.sh stop failed (${stopped}):\n${stop_out}\n${stop_err}")
  endif()
  if(NOT checked EQUAL 0)
    file(GLOB logs "${WORK}/slurm/log/*.log")
    foreach(log IN LISTS logs)
      file(READ "${log}" text)
      message(STATUS "${log}:\n${text}")
    endforeach()
    message(FATAL_ERROR "the checks under Slurm failed (${checked}); the cluster was stopped")
  endif()
  file(REMOVE_RECURSE "${WORK}")
  return()
endif()

# The checks, in their own process: a FATAL_ERROR here still lets the caller stop the cluster.
set(ENV{SLURM_CONF} "${WORK}/slurm/slurm.conf")
set(ENV{OMP_NUM_THREADS} 1)
foreach(case "per-rank;1;9" "replicated;0;20")
  list(GET case 0 mode)
  list(GET case 1 kill_rank)
  list(GET case 2 kill_batch)
  set(dir "${WORK}/${mode}")
  file(MAKE_DIRECTORY "${dir}")

  execute_process(
    COMMAND ${MPIRUN} -np 2 ${MPIRUN_FLAGS} ${FIT} ${dir}/straight.olw ${mode}
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${mode}: the uninterrupted run failed (${status}):\n${out}\n${err}")
  endif()

  execute_process(
    COMMAND ${RUN} slurm --np 2 --max-restarts 2 --checkpoint-dir ${dir}/checkpoints --time 5
            --job-name resume-${mode} -- ${FIT} ${dir}/resumed.olw ${mode} ${kill_rank} ${kill_batch}
    OUTPUT_FILE ${dir}/job.sh RESULT_VARIABLE status ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${mode}: onelearn-run slurm failed (${status}): ${err}")
  endif()
  # --wait: sbatch returns when the job has ended, with its exit status.
  execute_process(COMMAND sbatch --wait ${dir}/job.sh WORKING_DIRECTORY ${dir}
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  file(GLOB job_output "${dir}/resume-${mode}-*.out")
  set(log "")
  if(job_output)
    file(READ "${job_output}" log)
  endif()
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${mode}: the Slurm job did not end well (${status}):\n${out}\n${err}\n${log}")
  endif()
  # The kill happened, srun ended the step, onelearn-run started a second one that resumed.
  if(NOT log MATCHES "task ${kill_rank}: Killed")
    message(FATAL_ERROR "${mode}: expected srun to report rank ${kill_rank} killed, found:\n${log}")
  endif()
  if(NOT log MATCHES "attempt 1 of 3 on 2 ranks ended with status [0-9]+[^\n]*; starting again")
    message(FATAL_ERROR "${mode}: expected the first attempt to end and start again, found:\n${log}")
  endif()
  if(NOT log MATCHES "resumable_fit: attempt 1 resumes from")
    message(FATAL_ERROR "${mode}: expected the second attempt to resume from a checkpoint, found:\n${log}")
  endif()
  file(READ "${dir}/straight.olw" straight HEX)
  file(READ "${dir}/resumed.olw" resumed HEX)
  string(LENGTH "${straight}" straight_length)
  if(straight_length EQUAL 0 OR NOT straight STREQUAL resumed)
    message(FATAL_ERROR "${mode}: the weights of the job resumed under Slurm differ from the uninterrupted run's")
  endif()
  message(STATUS "${mode}: rank ${kill_rank} killed after batch ${kill_batch} under sbatch; the job "
                 "resumed by itself and its weights equal the uninterrupted run's byte for byte")
endforeach()
