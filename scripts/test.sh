#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds everything, runs every test (the test
# executables built with AddressSanitizer and UndefinedBehaviorSanitizer), then fuzzes the ONNX
# loader (1,020,000 inputs, at most three minutes) and, where nvcc is installed, builds the CUDA
# compute space's tests.
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

start=$SECONDS
# Configured every time (quick when the cache exists), so that the switch above holds. The
# sanitizers apply to the test executables only; examples, tools and benchmarks keep the build
# type's optimisation but not its debug information (nothing here reads it).
cmake -S . -B build -DONELEARN_SANITIZE=$sanitize -DONELEARN_PROGRAMS_DEBUG_INFO=OFF
cmake --build build -j2
echo "test.sh: build took $((SECONDS - start)) s"
start=$SECONDS
ctest --test-dir build -j2 --output-on-failure
echo "test.sh: tests took $((SECONDS - start)) s"

# The ONNX loader under libFuzzer (clang's), 1,020,000 inputs (tests/fuzz/run_fuzz.sh): its own build tree, since the rest
# is built with g++. Skipped, saying why, where clang or the ONNX test data is missing.
start=$SECONDS
if command -v clang++ >/dev/null; then
  [[ -f build-fuzz/CMakeCache.txt ]] ||
    cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DONELEARN_FUZZ=ON \
      -DONELEARN_BUILD_EXAMPLES=OFF -DONELEARN_BUILD_BENCH=OFF -DONELEARN_BUILD_TOOLS=OFF
  if [[ "$(cmake --build build-fuzz --target help)" == *onelearn_fuzz_onnx* ]]; then
    cmake --build build-fuzz -j2 --target onelearn_fuzz_onnx
    ctest --test-dir build-fuzz --output-on-failure -L '^fuzz$'
    echo "test.sh: fuzzing took $((SECONDS - start)) s"
  else
    echo "test.sh: the fuzz target was not configured (see build-fuzz's cmake output); skipped"
  fi
else
  echo "test.sh: clang++ is not installed, so the ONNX fuzz target is skipped"
fi


# The CUDA compute space compiled by nvcc (tests/cuda, onelearn-space-bench-cuda) wherever the
# CUDA toolkit is installed, so that a change nvcc rejects shows here and not only on a GPU
# machine; scripts/test-gpu.sh runs them where there is a GPU. --check-only: unoptimised and
# stopping at PTX, since only whether nvcc accepts the code matters here (297 s against 391 s for
# the Release build with sm_90 code). Skipped, saying so, without nvcc.
start=$SECONDS
if command -v nvcc >/dev/null || [[ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]]; then
  JOBS=2 scripts/test-gpu.sh --check-only
  echo "test.sh: the CUDA build check took $((SECONDS - start)) s"
else
  echo "test.sh: nvcc (the CUDA toolkit) is not installed, so the CUDA build check is skipped"
fi
