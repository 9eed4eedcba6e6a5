#!/usr/bin/env bash
# The CUDA compute space (onelearn::space::thrust_cuda) on a machine with an NVIDIA GPU: configures
# build-gpu/ with ONELEARN_CUDA=ON, builds the CUDA tests with nvcc and runs them on the device.
# They compare every kernel on the GPU with the host path's (double 1e-12, float 1e-5; the k
# nearest neighbours bit for bit), cuBLAS's Gram with the Thrust reduction, and the typed errors.
#   scripts/test-gpu.sh                 build and run (fails if no GPU can be used)
#   scripts/test-gpu.sh --compile-only  build only, as for a run (Release, sm_90 code): to build
#                                       here and run the binaries on a GPU machine later
#   scripts/test-gpu.sh --check-only    whether nvcc accepts the code, as cheaply as it can tell
#                                       (scripts/test.sh): build-gpu-check/, no optimisation, PTX
#                                       only (no ptxas); 209 s against 286 s for the test file
# Environment: CUDA_HOME (default /usr/local/cuda), CUDA_ARCHS (CMAKE_CUDA_ARCHITECTURES; default
# "native" when running, 90 (H100) with --compile-only, 90-virtual with --check-only), JOBS (default: the number of cores).
# Then onelearn-space-bench-cuda (bench/space_bench.cpp built by nvcc) prints the CUDA space's
# figures on the workloads' shapes, one JSON line each; compare them with
# `onelearn-space-bench --space host` (g++, -march=native) on the machine of the host figures.
set -euo pipefail
cd "$(dirname "$0")/.."

compile_only=0
check_only=0
if [[ "${1:-}" == "--compile-only" ]]; then compile_only=1; fi
if [[ "${1:-}" == "--check-only" ]]; then compile_only=1; check_only=1; fi

cuda_home=${CUDA_HOME:-/usr/local/cuda}
nvcc=$(command -v nvcc || true)
if [[ -z "$nvcc" ]]; then nvcc="$cuda_home/bin/nvcc"; fi
if [[ ! -x "$nvcc" ]]; then
  echo "test-gpu.sh: expected nvcc in PATH or at $cuda_home/bin/nvcc, found none (set CUDA_HOME)" >&2
  exit 1
fi

if [[ $compile_only == 1 ]]; then
  archs=${CUDA_ARCHS:-90}
else
  if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L; then
    echo "test-gpu.sh: expected an NVIDIA GPU (nvidia-smi -L), found none; use --compile-only" \
         "to build without running" >&2
    exit 1
  fi
  archs=${CUDA_ARCHS:-native}
fi

build_dir=build-gpu
build_type=Release
if [[ $check_only == 1 ]]; then
  # A build type CMake has no flags for: no -O, so the host compiler's -O0; virtual
  # architectures only: nvcc stops at PTX and ptxas does not run.
  build_dir=build-gpu-check
  build_type=NvccCheck
  archs=${CUDA_ARCHS:-90}-virtual
fi

start=$SECONDS
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=$build_type -DONELEARN_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$archs" \
  -DONELEARN_BUILD_EXAMPLES=OFF -DONELEARN_BUILD_BENCH=ON -DONELEARN_BUILD_TOOLS=OFF
cmake --build "$build_dir" -j"${JOBS:-$(nproc)}" --target onelearn_cuda_all
echo "test-gpu.sh: build took $((SECONDS - start)) s (nvcc $("$nvcc" --version | tail -1))"
if [[ $compile_only == 1 ]]; then exit 0; fi

start=$SECONDS
ONELEARN_REQUIRE_GPU=1 build-gpu/tests/onelearn_cuda_tests --duration=true
echo "test-gpu.sh: the CUDA equality tests took $((SECONDS - start)) s"

start=$SECONDS
build-gpu/bench/onelearn-space-bench-cuda --space cuda
echo "test-gpu.sh: the CUDA space's benchmarks took $((SECONDS - start)) s"
