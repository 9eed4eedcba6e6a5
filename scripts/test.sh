#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds everything, runs every test, then
# runs the tests that execute code again under AddressSanitizer and UndefinedBehaviorSanitizer.
#   scripts/test.sh                 everything
#   scripts/test.sh --no-sanitize   skip the sanitizer pass (about half the time)
# Incremental: a second run rebuilds only what changed (and ccache remembers the rest).
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=1
if [[ "${1:-}" == "--no-sanitize" ]]; then sanitize=0; fi

scripts/install-deps.sh
# onnxruntime, the independent runtime the ONNX export tests run exported models in (through
# Node: the npm package ships the CPU runtime). Without Node those tests say they are skipped.
if command -v npm >/dev/null && [[ ! -d build-onnxrt/node_modules/onnxruntime-node ]]; then
  npm install --silent --ignore-scripts --prefix build-onnxrt onnxruntime-node ||
    echo "test.sh: npm could not install onnxruntime-node; the onnxruntime tests will be skipped"
fi

start=$SECONDS
[[ -f build/CMakeCache.txt ]] || cmake -S . -B build
cmake --build build -j2
echo "test.sh: build took $((SECONDS - start)) s"
start=$SECONDS
ctest --test-dir build -j2 --output-on-failure
echo "test.sh: tests took $((SECONDS - start)) s"

# The ONNX loader under libFuzzer (clang's), for a minute: its own build tree, since the rest
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

if ((sanitize)); then
  start=$SECONDS
  # Configured every time (quick when the cache exists), so that the target list below is
  # current after tests were added.
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DONELEARN_SANITIZE=ON \
    -DONELEARN_BUILD_EXAMPLES=OFF -DONELEARN_BUILD_BENCH=OFF
  # The executables of the tests labelled unit or mpi (those that exist on this machine).
  targets=(onelearn_tests)
  available=$(cmake --build build-sanitize --target help)
  for optional in onelearn_mpi_tests onelearn_mpi_timeout_abort onelearn_onnx_tests; do
    if [[ "$available" == *"$optional"* ]]; then targets+=("$optional"); fi
  done
  cmake --build build-sanitize -j2 --target "${targets[@]}"
  # Only the tests that run onelearn's code; the build and packaging tests ran above.
  ctest --test-dir build-sanitize -j2 --output-on-failure -L '^(unit|mpi)$'
  echo "test.sh: sanitizer pass took $((SECONDS - start)) s"
fi
