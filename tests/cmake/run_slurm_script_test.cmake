# onelearn-run slurm: the batch script it writes has the #SBATCH directives asked for (tasks,
# nodes, CPUs per task, time, --requeue, --open-mode=append, the job name and its output file),
# exports OMP_NUM_THREADS, and runs this onelearn-run on the program with every argument one word
# for the shell (a blank, quotes, a $); bad options are refused with a message and status 2.
# Running the script under Slurm is tests/cmake/run_slurm_test.cmake (ONELEARN_SLURM_TESTS=ON).
#   cmake -DRUN=<onelearn-run> -P this

function(script)
  execute_process(COMMAND ${RUN} slurm ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "onelearn-run slurm ${ARGN} failed (${status}): ${err}")
  endif()
  set(text "${out}" PARENT_SCOPE)
endfunction()

function(expect_line name line)
  string(FIND "${text}" "\n${line}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${name}: expected the line '${line}' in the script, found:\n${text}")
  endif()
endfunction()

function(expect_no_line name pattern)
  if(text MATCHES "\n${pattern}")
    message(FATAL_ERROR "${name}: expected no line '${pattern}' in the script, found:\n${text}")
  endif()
endfunction()

# 1. Every option, and arguments a shell would split or expand.
script(--np 4 --nodes 2 --cpus-per-task 3 --time 1-02:30:00 --max-restarts 5
       --checkpoint-dir "run 1/ckpt" --job-name fit-mlp
       -- ./train "data dir/x.csv" "it's \"quoted\"" "$HOME" plain)
if(NOT text MATCHES "^#!/bin/bash\n")
  message(FATAL_ERROR "expected the script to start with #!/bin/bash, found:\n${text}")
endif()
foreach(line "#SBATCH --job-name=fit-mlp" "#SBATCH --ntasks=4" "#SBATCH --nodes=2"
             "#SBATCH --cpus-per-task=3" "#SBATCH --time=1-02:30:00" "#SBATCH --requeue"
             "#SBATCH --open-mode=append" "#SBATCH --output=fit-mlp-%j.out" "export OMP_NUM_THREADS=3")
  expect_line("all options" "${line}")
endforeach()
# sbatch reads directives only before the first command.
string(FIND "${text}" "\nexport" first_command)
string(FIND "${text}" "#SBATCH" last_directive REVERSE)
if(last_directive GREATER first_command)
  message(FATAL_ERROR "expected every #SBATCH line before the first command, found:\n${text}")
endif()
# The command line, exactly: this onelearn-run (an absolute path), each argument quoted once.
get_filename_component(self "${RUN}" REALPATH)
expect_line("all options"
  "exec ${self} --np 4 --max-restarts 5 --checkpoint-dir 'run 1/ckpt' -- ./train 'data dir/x.csv' 'it'\\''s \"quoted\"' '$HOME' plain")
# ... and bash reads it back as the words given.
string(REGEX MATCH "\nexec ([^\n]*)" line "${text}")
execute_process(COMMAND bash -c "printf '<%s>\\n' ${CMAKE_MATCH_1}" OUTPUT_VARIABLE words RESULT_VARIABLE status)
set(expected "<${self}>\n<--np>\n<4>\n<--max-restarts>\n<5>\n<--checkpoint-dir>\n<run 1/ckpt>\n<-->\n<./train>\n<data dir/x.csv>\n<it's \"quoted\">\n<$HOME>\n<plain>\n")
if(NOT status EQUAL 0 OR NOT words STREQUAL expected)
  message(FATAL_ERROR "expected bash to read the command as\n${expected}found\n${words}")
endif()
message(STATUS "all options: directives and the quoted command line as expected")

# 2. The defaults: 1 task, 1 CPU, no nodes, time or checkpoint directory; 3 restarts.
script(-- /bin/true)
foreach(line "#SBATCH --job-name=onelearn" "#SBATCH --ntasks=1" "#SBATCH --cpus-per-task=1"
             "#SBATCH --requeue" "#SBATCH --open-mode=append" "#SBATCH --output=onelearn-%j.out"
             "exec ${self} --np 1 --max-restarts 3 -- /bin/true")
  expect_line("defaults" "${line}")
endforeach()
expect_no_line("defaults" "#SBATCH --nodes")
expect_no_line("defaults" "#SBATCH --time")
message(STATUS "defaults: as expected")

# 3. Bad options.
function(refuse name expected_message)
  execute_process(COMMAND ${RUN} slurm ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 2 OR NOT err MATCHES "${expected_message}" OR NOT out STREQUAL "")
    message(FATAL_ERROR "${name}: expected status 2, nothing on stdout and a message matching "
                        "'${expected_message}', found status ${status}:\n${out}\n${err}")
  endif()
  message(STATUS "${name}: refused")
endfunction()
refuse("no program" "slurm: expected a program after --, found none" --np 2)
refuse("0 ranks" "expected --np at least 1, found 0" --np 0 -- x)
refuse("more nodes than ranks" "expected --nodes between 1 and --np \\(2\\), found 3" --np 2 --nodes 3 -- x)
refuse("0 CPUs per task" "expected --cpus-per-task at least 1, found 0" --cpus-per-task 0 -- x)
refuse("a time sbatch cannot read" "expected --time as minutes, H:M:S or D-H:M:S, found '2h'" --time 2h -- x)
refuse("a job name with a blank" "expected --job-name of letters" --job-name "my job" -- x)
refuse("negative restarts" "expected --max-restarts at least 0, found -1" --max-restarts -1 -- x)
refuse("an unknown option" "--gpus" --gpus 1 -- x)
