# onelearn-run's promise, end to end: a training run in which a rank is killed (SIGKILL) in the
# middle of an epoch, restarted by onelearn-run from its last checkpoint, ends with the weights
# of the same run never interrupted, byte for byte. With -DSHRINK=ON the job runs on NP slots
# of a hostfile and the killed rank takes one slot out of it: onelearn-run resumes on NP - 1
# ranks, which must still end with the uninterrupted NP-rank run's weights (MODE blocks).
#   cmake -DRUN=<onelearn-run> -DFIT=<resumable_fit> -DMPIRUN=<mpirun> "-DMPIRUN_FLAGS=<flags>"
#         -DWORK=<scratch dir> -DMODE=per-rank|replicated|blocks -DKILL_RANK=r -DKILL_BATCH=b
#         [-DNP=n (default 2)] [-DSHRINK=ON] -P this
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
if(NOT NP)
  set(NP 2)
endif()
set(run_slots --np ${NP})
set(fit_hostfile)
set(resumed_np ${NP})
if(SHRINK)
  file(WRITE "${WORK}/hosts" "localhost slots=${NP}\n")
  set(run_slots --hostfile ${WORK}/hosts)
  set(fit_hostfile ${WORK}/hosts)
  math(EXPR resumed_np "${NP} - 1")
endif()

execute_process(
  COMMAND ${MPIRUN} -np ${NP} ${MPIRUN_FLAGS} ${FIT} ${WORK}/straight.olw ${MODE}
  RESULT_VARIABLE straight_status OUTPUT_VARIABLE straight_out ERROR_VARIABLE straight_err)
if(NOT straight_status EQUAL 0)
  message(FATAL_ERROR "the uninterrupted run failed (${straight_status}):\n${straight_out}\n${straight_err}")
endif()

execute_process(
  COMMAND ${RUN} ${run_slots} --max-restarts 2 --checkpoint-dir ${WORK}/checkpoints --
          ${FIT} ${WORK}/resumed.olw ${MODE} ${KILL_RANK} ${KILL_BATCH} ${fit_hostfile}
  RESULT_VARIABLE resumed_status OUTPUT_VARIABLE resumed_out ERROR_VARIABLE resumed_err)
if(NOT resumed_status EQUAL 0)
  message(FATAL_ERROR "onelearn-run did not end the run well (${resumed_status}):\n${resumed_out}\n${resumed_err}")
endif()
# The kill happened, the second attempt resumed from a checkpoint (not from scratch).
if(NOT resumed_err MATCHES "attempt 1 of 3 on ${NP} ranks ended with status 137 \\(signal 9\\); starting again")
  message(FATAL_ERROR "expected the first attempt to be killed and restarted, found:\n${resumed_err}")
endif()
if(NOT resumed_err MATCHES "resumable_fit: attempt 1 resumes from [^\n]* on ${resumed_np} ranks")
  message(FATAL_ERROR "expected the second attempt to resume from a checkpoint, found:\n${resumed_err}")
endif()
# keep_last = 2: at most two epoch checkpoints left, and no temporary files.
file(GLOB left "${WORK}/checkpoints/*")
list(LENGTH left left_count)
if(left_count GREATER 2)
  message(FATAL_ERROR "expected at most 2 files in the checkpoint directory, found: ${left}")
endif()

file(READ "${WORK}/straight.olw" straight HEX)
file(READ "${WORK}/resumed.olw" resumed HEX)
string(LENGTH "${straight}" straight_length)
if(straight_length EQUAL 0 OR NOT straight STREQUAL resumed)
  message(FATAL_ERROR "the resumed weights differ from the uninterrupted run's")
endif()
message(STATUS "killed rank ${KILL_RANK} of ${NP} after batch ${KILL_BATCH} (${MODE}), resumed on ${resumed_np}: the resumed weights equal the uninterrupted run's byte for byte")
file(REMOVE_RECURSE "${WORK}")
