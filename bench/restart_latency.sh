#!/usr/bin/env bash
# The time from a rank's death to the resumed job's first completed batch, under onelearn-run on
# this machine (2 ranks): the test program of the restart tests (tests/launcher/resumable_fit.cpp)
# kills rank 1 with SIGKILL mid-training; onelearn-run restarts the job, which resumes from its
# newest checkpoint. Prints, per run, in seconds:
#   relaunch    the death to the restarted program entering main (the launcher noticing the
#               dead rank and ending the others, onelearn-run cleaning up, the new launch)
#   to_batch    main to the end of the resumed first batch (MPI_Init, data, checkpoint read)
#   total       the death to that first batch
#
# usage: bench/restart_latency.sh BUILD_DIR [RUNS] [--slurm]
#   BUILD_DIR holds onelearn-run and the test program, e.g. a Release build:
#     cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release
#     cmake --build build-bench --target onelearn-run onelearn_resumable_fit
#   --slurm: on a one-node Slurm cluster started here (scripts/slurm-local.sh; Debian's
#     slurm-wlm and munge), the job submitted with sbatch from `onelearn-run slurm`, which
#     starts the ranks with `srun --mpi=pmix` inside the allocation. Without it: mpirun on
#     local slots.
set -euo pipefail
build=${1:?usage: bench/restart_latency.sh BUILD_DIR [RUNS] [--slurm]}
runs=${2:-5}
slurm=${3:-}
run=$build/tools/onelearn-run
fit=$build/tests/onelearn_resumable_fit
here=$(cd "$(dirname "$0")/.." && pwd)
for program in "$run" "$fit"; do
  [[ -x $program ]] || { echo "restart_latency: expected $program (see usage)" >&2; exit 2; }
done
run=$(cd "$(dirname "$run")" && pwd)/$(basename "$run")
fit=$(cd "$(dirname "$fit")" && pwd)/$(basename "$fit")

cluster=""
if [[ $slurm == --slurm ]]; then
  cluster=$(mktemp -d)
  "$here/scripts/slurm-local.sh" start "$cluster/slurm" > /dev/null
  trap '"$here/scripts/slurm-local.sh" stop "$cluster/slurm" > /dev/null; rm -rf "$cluster"' EXIT
  export SLURM_CONF=$cluster/slurm/slurm.conf
elif [[ -n $slurm ]]; then
  echo "restart_latency: expected --slurm or nothing as the third argument, found '$slurm'" >&2
  exit 2
fi

echo "run relaunch_s to_batch_s total_s"
for i in $(seq 1 "$runs"); do
  work=$(mktemp -d)
  # Rank 1 dies after its 20th batch (epoch 3 of 6: two checkpoints are there).
  export ONELEARN_RESTART_LOG=$work/events OMP_NUM_THREADS=1
  if [[ -n $cluster ]]; then
    "$run" slurm --np 2 --max-restarts 1 --checkpoint-dir "$work/ckpt" --time 5 \
      --job-name latency -- "$fit" "$work/out.olw" per-rank 1 20 > "$work/job.sh"
    (cd "$work" && sbatch --wait job.sh > "$work/out.log" 2>&1) ||
      { echo "restart_latency: the Slurm job failed:" >&2; cat "$work"/*.out "$work/out.log" >&2; exit 1; }
  else
    "$run" --np 2 --max-restarts 1 --checkpoint-dir "$work/ckpt" -- \
      "$fit" "$work/out.olw" per-rank 1 20 > "$work/out.log" 2>&1 ||
      { echo "restart_latency: the job failed:" >&2; cat "$work/out.log" >&2; exit 1; }
  fi
  awk -v run="$i" '
    $1 == "killed" { killed = $2 }
    $1 == "started" && (started == "" || $2 < started) { started = $2 }
    $1 == "first_batch" { batch = $2 }
    END {
      if (killed == "" || started == "" || batch == "") { print "restart_latency: incomplete log" > "/dev/stderr"; exit 1 }
      printf "%d %.3f %.3f %.3f\n", run, started - killed, batch - started, batch - killed
    }' "$work/events"
  rm -rf "$work"
done
