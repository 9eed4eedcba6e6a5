# onelearn-run k8s: the MPIJob it writes, for several option sets, passes the CRD's schema
# (tests/k8s/mpijob-v2beta1.schema.json, Kubeflow mpi-operator v0.8.2, checked with
# python3-jsonschema, and with no field the API server would drop: tests/k8s/validate_mpijob.py),
# and carries what was asked for: the image, the command under onelearn-run, the claim mounted at
# the checkpoint directory, the resources, nvidia.com/gpu only with GPUs, the restart policy and
# back-off limit. Bad options are refused with a message and status 2.
#   cmake -DRUN=<onelearn-run> -DPYTHON=<python3> -DK8S_DIR=<tests/k8s> -DWORK=<scratch dir> -P this
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

execute_process(COMMAND ${PYTHON} -c "import jsonschema" RESULT_VARIABLE have_jsonschema ERROR_QUIET)
if(NOT have_jsonschema EQUAL 0)
  message(FATAL_ERROR "${PYTHON} cannot import jsonschema: apt-get install python3-jsonschema "
                      "(scripts/install-deps.sh installs it)")
endif()

# Writes the manifest of `onelearn-run k8s ARGN` to ${WORK}/${name}.json, validates it, and sets
# `job` in the caller to its text.
function(generate name)
  execute_process(COMMAND ${RUN} k8s ${ARGN} RESULT_VARIABLE status
                  OUTPUT_FILE "${WORK}/${name}.json" ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${name}: onelearn-run k8s failed (${status}): ${err}")
  endif()
  execute_process(
    COMMAND ${PYTHON} ${K8S_DIR}/validate_mpijob.py ${K8S_DIR}/mpijob-v2beta1.schema.json "${WORK}/${name}.json"
    RESULT_VARIABLE valid OUTPUT_VARIABLE report ERROR_VARIABLE report_err)
  if(NOT valid EQUAL 0)
    message(FATAL_ERROR "${name}: the MPIJob does not pass the CRD's schema:\n${report}${report_err}")
  endif()
  file(READ "${WORK}/${name}.json" text)
  set(job "${text}" PARENT_SCOPE)
endfunction()

# expect(<name> <expected> <json path...>): the JSON value at the path equals <expected>.
function(expect name expected)
  string(JSON value ERROR_VARIABLE error GET "${job}" ${ARGN})
  if(error OR NOT value STREQUAL expected)
    message(FATAL_ERROR "${name}: expected ${ARGN} = '${expected}', found '${value}' ${error}")
  endif()
endfunction()

# expect_absent(<name> <json path...>): no such member.
function(expect_absent name)
  string(JSON value ERROR_VARIABLE error GET "${job}" ${ARGN})
  if(NOT error)
    message(FATAL_ERROR "${name}: expected no ${ARGN}, found '${value}'")
  endif()
endfunction()

# expect_command(<name> <member path> -- words...): the container's list at the path is exactly
# the words.
function(expect_command name)
  list(FIND ARGN "--" split)
  list(SUBLIST ARGN 0 ${split} path)
  math(EXPR first "${split} + 1")
  list(SUBLIST ARGN ${first} -1 words)
  string(JSON length LENGTH "${job}" ${path})
  list(LENGTH words expected_length)
  if(NOT length EQUAL expected_length)
    string(JSON found GET "${job}" ${path})
    message(FATAL_ERROR "${name}: expected the command '${words}', found ${found}")
  endif()
  set(index 0)
  foreach(word IN LISTS words)
    expect(${name} "${word}" ${path} ${index})
    math(EXPR index "${index} + 1")
  endforeach()
endfunction()

set(launcher spec mpiReplicaSpecs Launcher template spec)
set(worker spec mpiReplicaSpecs Worker template spec)

# 1. Three CPU workers, 4 CPUs each: one rank per worker, 4 threads; arguments with a blank and
#    a quote stay single words.
generate(cpu --image registry.example/onelearn:0.1 --workers 3 --cpus-per-worker 4
             --memory-per-worker 8Gi --pvc onelearn-ckpt -- /opt/onelearn/train --epochs 20 "data dir/" "it's")
expect(cpu "kubeflow.org/v2beta1" apiVersion)
expect(cpu "MPIJob" kind)
expect(cpu "onelearn" metadata name)
expect(cpu 1 spec slotsPerWorker)
expect(cpu 3 spec runPolicy backoffLimit)
expect(cpu "OnFailure" spec mpiReplicaSpecs Launcher restartPolicy)
expect(cpu "OnFailure" spec mpiReplicaSpecs Worker restartPolicy)
expect(cpu 1 spec mpiReplicaSpecs Launcher replicas)
expect(cpu 3 spec mpiReplicaSpecs Worker replicas)
expect(cpu "registry.example/onelearn:0.1" ${launcher} containers 0 image)
expect(cpu "registry.example/onelearn:0.1" ${worker} containers 0 image)
expect_command(cpu ${launcher} containers 0 command --
  onelearn-run --np 3 --max-restarts 3 --checkpoint-dir /checkpoints --
  /opt/onelearn/train --epochs 20 "data dir/" "it's")
expect_absent(cpu ${worker} containers 0 command)  # the operator's sshd
expect(cpu "OMP_NUM_THREADS=4" ${launcher} containers 0 env 0 value)
foreach(kind requests limits)
  expect(cpu "4" ${worker} containers 0 resources ${kind} cpu)
  expect(cpu "8Gi" ${worker} containers 0 resources ${kind} memory)
  expect_absent(cpu ${worker} containers 0 resources ${kind} nvidia.com/gpu)
  expect_absent(cpu ${launcher} containers 0 resources ${kind} nvidia.com/gpu)
endforeach()
foreach(replica launcher worker)
  expect(cpu "onelearn-ckpt" ${${replica}} volumes 0 persistentVolumeClaim claimName)
  expect(cpu "checkpoints" ${${replica}} volumes 0 name)
  expect(cpu "checkpoints" ${${replica}} containers 0 volumeMounts 0 name)
  expect(cpu "/checkpoints" ${${replica}} containers 0 volumeMounts 0 mountPath)
endforeach()
message(STATUS "cpu workers: valid, fields as asked")

# 2. Two GPU workers with 4 GPUs each: 8 ranks, 4 slots per worker, 16 / 4 threads per rank.
generate(gpu --image ghcr.io/example/onelearn-cuda:2 --workers 2 --gpus-per-worker 4
             --cpus-per-worker 16 --memory-per-worker 64Gi --pvc shared-ckpt --checkpoint-dir /mnt/ckpt
             --max-restarts 5 --name resnet-fit -- /app/train)
expect(gpu "resnet-fit" metadata name)
expect(gpu 4 spec slotsPerWorker)
expect(gpu 5 spec runPolicy backoffLimit)
expect(gpu 2 spec mpiReplicaSpecs Worker replicas)
expect_command(gpu ${launcher} containers 0 command --
  onelearn-run --np 8 --max-restarts 5 --checkpoint-dir /mnt/ckpt -- /app/train)
expect(gpu "OMP_NUM_THREADS=4" ${launcher} containers 0 env 0 value)
foreach(kind requests limits)
  expect(gpu "4" ${worker} containers 0 resources ${kind} nvidia.com/gpu)
  expect(gpu "16" ${worker} containers 0 resources ${kind} cpu)
  expect(gpu "64Gi" ${worker} containers 0 resources ${kind} memory)
  expect_absent(gpu ${launcher} containers 0 resources ${kind} nvidia.com/gpu)
endforeach()
expect(gpu "shared-ckpt" ${worker} volumes 0 persistentVolumeClaim claimName)
expect(gpu "/mnt/ckpt" ${worker} containers 0 volumeMounts 0 mountPath)
expect(gpu "/mnt/ckpt" ${launcher} containers 0 volumeMounts 0 mountPath)
message(STATUS "gpu workers: valid, fields as asked")

# 3. The fewest options: one worker, the defaults (1 CPU, 2Gi, /checkpoints, 3 restarts).
generate(minimal --image onelearn --workers 1 --pvc c -- train)
expect(minimal 1 spec mpiReplicaSpecs Worker replicas)
expect(minimal "1" ${worker} containers 0 resources limits cpu)
expect(minimal "2Gi" ${worker} containers 0 resources limits memory)
expect(minimal "OMP_NUM_THREADS=1" ${launcher} containers 0 env 0 value)
expect_command(minimal ${launcher} containers 0 command --
  onelearn-run --np 1 --max-restarts 3 --checkpoint-dir /checkpoints -- train)
message(STATUS "defaults: valid, fields as asked")

# 4. Bad options: status 2 and a message naming the option.
function(refuse name expected_message)
  execute_process(COMMAND ${RUN} k8s ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 2 OR NOT err MATCHES "${expected_message}" OR NOT out STREQUAL "")
    message(FATAL_ERROR "${name}: expected status 2, nothing on stdout and a message matching "
                        "'${expected_message}', found status ${status}:\n${out}\n${err}")
  endif()
  message(STATUS "${name}: refused")
endfunction()
refuse("0 workers" "expected --workers at least 1, found 0" --image i --workers 0 --pvc p -- x)
refuse("no --workers" "expected --workers at least 1, found 0" --image i --pvc p -- x)
refuse("no image" "expected --image IMAGE" --workers 1 --pvc p -- x)
refuse("no claim" "expected --pvc NAME" --image i --workers 1 -- x)
refuse("negative GPUs" "expected --gpus-per-worker at least 0, found -1" --image i --workers 1 --pvc p --gpus-per-worker -1 -- x)
refuse("no command" "expected the command after --, found none" --image i --workers 1 --pvc p)
refuse("memory that is no quantity" "expected --memory-per-worker as a Kubernetes quantity.*'8GB'"
       --image i --workers 1 --pvc p --memory-per-worker 8GB -- x)
refuse("0 CPUs" "expected --cpus-per-worker at least 1, found 0" --image i --workers 1 --pvc p --cpus-per-worker 0 -- x)
refuse("a name no pod can have" "expected --name as a DNS label.*'Fit_1'" --image i --workers 1 --pvc p --name Fit_1 -- x)
refuse("a relative checkpoint directory" "expected --checkpoint-dir as an absolute path" --image i --workers 1 --pvc p --checkpoint-dir ckpt -- x)
refuse("workers that are no number" "--workers" --image i --workers two --pvc p -- x)
refuse("an unknown option" "--gpus" --image i --workers 1 --pvc p --gpus 1 -- x)
file(REMOVE_RECURSE "${WORK}")
