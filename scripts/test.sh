#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds everything, runs every test (the test
# executables built with AddressSanitizer and UndefinedBehaviorSanitizer), fuzzes the ONNX
# loader and importer (240,000 inputs, at most 180 s of fuzzing) and, where nvcc is installed,
# builds the CUDA compute space's tests (those two builds beside the main one where memory allows).
#   scripts/test.sh                 everything
#   scripts/test.sh --no-sanitize   the test executables without the sanitizers (they build in
#                                   about half the time; each switch rebuilds them)
# Incremental: a second run rebuilds only what changed (and ccache remembers the rest).
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=ON
if [[ "${1:-}" == "--no-sanitize" ]]; then sanitize=OFF; fi

scripts/install-deps.sh
# onnxruntime, the independent runtime the ONNX export tests run exported models in (through
# Node: the npm package ships the CPU runtime). Without Node those tests say they are skipped.
if command -v npm >/dev/null && [[ ! -d build-onnxrt/node_modules/onnxruntime-node ]]; then
  npm install --silent --ignore-scripts --prefix build-onnxrt onnxruntime-node ||
    echo "test.sh: npm could not install onnxruntime-node; the onnxruntime tests will be skipped"
fi

# As many compile jobs as there are cores, but at most one per 4 GiB of available memory: a
# sanitized unity test source (tests/cmake/test_groups.cmake) needs up to ~3 GiB to compile.
cores=$(nproc)
mem_jobs=$(( $(awk '/MemAvailable/ {print $2}' /proc/meminfo) / (4 * 1024 * 1024) ))
jobs=$(( cores < mem_jobs ? cores : mem_jobs ))
if (( jobs < 1 )); then jobs=1; fi
echo "test.sh: $jobs jobs ($cores cores)"

# The ONNX loader and importer under libFuzzer (clang's), 240,000 inputs (tests/fuzz/run_fuzz.sh): its own
# build tree, since the rest is built with g++. Skipped, saying why, where clang or the ONNX
# test data is missing. fuzz_build leaves build/fuzz-ready when there is a target to run.
fuzz_build() {
  local start=$SECONDS
  if ! command -v clang++ >/dev/null; then
    echo "test.sh: clang++ is not installed, so the ONNX fuzz target is skipped"
    return 0
  fi
  [[ -f build-fuzz/CMakeCache.txt ]] ||
    cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DONELEARN_FUZZ=ON \
      -DONELEARN_BUILD_EXAMPLES=OFF -DONELEARN_BUILD_BENCH=OFF -DONELEARN_BUILD_TOOLS=OFF
  if [[ "$(cmake --build build-fuzz --target help)" != *onelearn_fuzz_onnx* ]]; then
    echo "test.sh: the fuzz target was not configured (see build-fuzz's cmake output); skipped"
    return 0
  fi
  cmake --build build-fuzz -j"$jobs" --target onelearn_fuzz_onnx
  touch build/fuzz-ready
  echo "test.sh: the fuzz target's build took $((SECONDS - start)) s"
}
fuzz_run() {
  [[ -f build/fuzz-ready ]] || return 0
  local start=$SECONDS
  ctest --test-dir build-fuzz --output-on-failure -L '^fuzz$'
  echo "test.sh: fuzzing took $((SECONDS - start)) s"
}

# The CUDA compute space compiled by nvcc (tests/cuda, onelearn-space-bench-cuda) wherever the
# CUDA toolkit is installed, so that a change nvcc rejects shows here and not only on a GPU
# machine; scripts/test-gpu.sh runs them where there is a GPU. --check-only: unoptimised and
# stopping at PTX, since only whether nvcc accepts the code matters here (297 s against 391 s for
# the Release build with sm_90 code). Skipped, saying so, without nvcc.
cuda_phase() {
  local start=$SECONDS
  if command -v nvcc >/dev/null || [[ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]]; then
    JOBS=$jobs scripts/test-gpu.sh --check-only
    echo "test.sh: the CUDA build check took $((SECONDS - start)) s"
  else
    echo "test.sh: nvcc (the CUDA toolkit) is not installed, so the CUDA build check is skipped"
  fi
}

# Two builds need nothing from build/: the ONNX fuzz target's (clang, build-fuzz/) and the nvcc
# check's (build-gpu-check/). Where memory allows them beside the main build (its jobs at 4 GiB
# each, and about 7 GiB for these two: 2.7 GiB for the fuzz target's clang, 2.5 and 1.7 GiB for
# nvcc's two sources), they start now instead of in a phase of their own after ctest (559 s of
# the 3769 s cold run here, 2026-11-29):
# - the fuzz target (one source, ~365 CPU s) at normal priority, so that it is built early: at
#   the lowest priority it got almost nothing while the build and ctest kept both cores busy,
#   and was still compiling alone 409 s after ctest (the 2878 s cold run, 2026-11-29);
# - the nvcc check at the lowest priority, SCHED_IDLE where the kernel allows it (else nice 19),
#   to take only the cycles the rest leaves idle: at nice 19 it still took the cycles the MPI
#   tests' ranks yield while they wait for each other, and the 3-rank run took 126 s instead of
#   71; under SCHED_IDLE, 88 s (same machine, the same background compile, 2026-11-29). The
#   build itself leaves no idle cycle (the check got 4 CPU s during a 2523 s build), so in
#   practice it compiles in ctest's quiet moments and after: 118 s after ctest in the cold run
#   of 2026-11-29 (tests/build-cost.md);
# - the fuzz run right after its build, also at normal priority, beside the main build: it was
#   the last minute of the run when it waited for ctest (63 s after ctest in the 2026-11-29
#   runs). Beside two compile jobs it gets about two thirds of a core, so its 240,000 inputs
#   take ~100 s, well inside libFuzzer's 180 s limit (at the lowest priority it would be starved
#   and stop at the limit with fewer inputs than it is asked for). Its memory (at most 2 GiB,
#   -rss_limit_mb) comes after the fuzz target's compile has given back its 2.7 GiB.
lowest_priority() {
  chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 || renice -n 19 -p "$BASHPID" >/dev/null || true
}
mem_gib=$(( $(awk '/MemAvailable/ {print $2}' /proc/meminfo) / (1024 * 1024) ))
early=0
if (( mem_gib >= 4 * jobs + 8 )); then early=1; fi
mkdir -p build
rm -f build/fuzz-ready
early_pids=()
if (( early )); then
  echo "test.sh: the fuzz target (then its run) and the nvcc check beside the main build"
  ( fuzz_build; fuzz_run ) >build/fuzz-phase.log 2>&1 &
  early_pids+=($!)
  ( lowest_priority; cuda_phase ) >build/cuda-phase.log 2>&1 &
  early_pids+=($!)
  # A failed build or test ends them too.
  trap 'kill "${early_pids[@]}" 2>/dev/null || true' EXIT
fi

start=$SECONDS
# Configured every time (quick when the cache exists), so that the switch above holds. The
# sanitizers apply to the test executables only; examples and tools keep the build type's
# optimisation but not its debug information (nothing here reads it); the benchmarks, whose
# tests only run --help and --version, are compiled without optimisation (bench/README.md says
# how to build them for measuring).
cmake -S . -B build -DONELEARN_SANITIZE=$sanitize -DONELEARN_PROGRAMS_DEBUG_INFO=OFF \
  -DONELEARN_BENCH_OPTIMIZE=OFF
cmake --build build -j$jobs
echo "test.sh: build took $((SECONDS - start)) s"
start=$SECONDS
ctest --test-dir build -j$jobs --output-on-failure
echo "test.sh: tests took $((SECONDS - start)) s"

# Waits for a background phase, prints its log, and stops with its exit status if it failed.
wait_for() {  # pid log
  local status=0
  wait "$1" || status=$?
  echo "test.sh: $2:"
  cat "$2"
  if (( status != 0 )); then
    echo "test.sh: $2 ended with exit $status" >&2
    exit "$status"
  fi
}

start=$SECONDS
if (( early )); then
  wait_for "${early_pids[0]}" build/fuzz-phase.log
  echo "test.sh: waited $((SECONDS - start)) s after ctest for the fuzz phase"
  wait_for "${early_pids[1]}" build/cuda-phase.log
  trap - EXIT
else
  # Without the memory for the early start: the fuzz phase (about one core: one clang compile,
  # then libFuzzer's one input at a time) beside the nvcc check, its output kept in a log that
  # is printed when it ends.
  fuzz_log=build/fuzz-phase.log
  ( fuzz_build; fuzz_run ) >"$fuzz_log" 2>&1 &
  fuzz_pid=$!
  trap 'kill "$fuzz_pid" 2>/dev/null || true' EXIT  # a failed CUDA check ends the fuzz phase too
  cuda_phase
  trap - EXIT
  wait_for "$fuzz_pid" "$fuzz_log"
fi
echo "test.sh: the fuzz and CUDA phases took $((SECONDS - start)) s after ctest"
