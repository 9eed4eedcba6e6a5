# onelearn-run's supervision with a stand-in program (sh): the hostfile is read again before
# every attempt (the job shrinks to the slots left), --min-np ends a job with too few slots, a
# program that always fails stops after --max-restarts with its own status, and usage errors
# explain themselves with status 2.
#   cmake -DRUN=<onelearn-run> -DWORK=<scratch dir> -P this
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(hostfile "${WORK}/hosts")

function(run_case name expected_status expected_output)
  execute_process(COMMAND ${RUN} ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL expected_status OR NOT "${err}${out}" MATCHES "${expected_output}")
    message(FATAL_ERROR "${name}: expected status ${expected_status} and output matching "
                        "'${expected_output}', found status ${status}:\n${out}\n${err}")
  endif()
  message(STATUS "${name}: ok")
endfunction()

# The stand-in programs (scripts, since a CMake list cannot carry the shell's semicolons).
file(WRITE "${WORK}/shrink_then_report.sh"
  "if [ \"$ONELEARN_RUN_ATTEMPT\" = 0 ]\nthen\n  echo 'localhost slots=1' > '${hostfile}'\n  exit 3\nfi\n"
  "echo np=$ONELEARN_RUN_NP attempt=$ONELEARN_RUN_ATTEMPT\n")
file(WRITE "${WORK}/shrink_and_fail.sh" "echo 'localhost slots=1' > '${hostfile}'\nexit 3\n")
file(WRITE "${WORK}/fail.sh" "exit 5\n")

# Two slots, then one: the first attempt (2 ranks) shrinks the hostfile and fails.
file(WRITE "${hostfile}" "localhost slots=2\n")
run_case("shrinks to the slots left" 0
  "attempt 1 of 2 on 2 ranks ended with status 3; starting again.*np=1 attempt=1"
  --hostfile ${hostfile} --max-restarts 1 -- sh ${WORK}/shrink_then_report.sh)

file(WRITE "${hostfile}" "localhost slots=2\n")
run_case("gives up below --min-np" 3 "1 slots available, below --min-np 2; giving up"
  --hostfile ${hostfile} --min-np 2 --max-restarts 3 -- sh ${WORK}/shrink_and_fail.sh)

run_case("stops after --max-restarts with the program's status" 5
  "attempt 3 of 3 on 1 ranks ended with status 5; no restarts left" --np 1 --max-restarts 2 -- sh ${WORK}/fail.sh)
run_case("no program" 2 "expected a program after --, found none" --np 1)
run_case("--min-np above --np" 2 "expected --min-np \\(3\\) at most --np \\(2\\)" --np 2 --min-np 3 -- true)
file(WRITE "${WORK}/file" "")
run_case("a checkpoint directory that cannot be made" 2 "--checkpoint-dir" --np 1 --checkpoint-dir ${WORK}/file/sub -- true)
file(REMOVE_RECURSE "${WORK}")
