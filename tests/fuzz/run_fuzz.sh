#!/usr/bin/env bash
# Runs the ONNX loader's fuzz target for a bounded number of inputs, as CTest's onnx_fuzz test does.
#   tests/fuzz/run_fuzz.sh FUZZER SECONDS TESTDATA_DIR WORK_DIR
# The seed corpus is the ONNX backend test data's models and input tensors (up to 200 KB each:
# bigger ones slow every mutation down and add no new structure), tests/fuzz/seeds/ (models of
# operators the backend data lacks: the ai.onnx.ml feature transforms; and onelearn's own
# exports of small fitted models, 30 rows: a forest and a boosting regressor as float64 tree
# walks, a boosting classifier with NaN directions, a scaler + logistic pipeline and a k-NN
# classifier in float64, KMeans, which seed onnx::to_estimator's readers), and
# tests/fuzz/regressions/, the inputs that once found a bug. New inputs libFuzzer finds go to WORK_DIR/corpus, so a
# second run starts from where the first stopped. A crash prints the input (also saved in
# WORK_DIR) and fails the test.
set -euo pipefail
fuzzer=$1 seconds=$2 testdata=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
seeds=$work/seeds
mkdir -p "$seeds" "$work/corpus"
# One find and one tar pipe, the paths flattened into the names (node/test_abs/model.onnx ->
# node_test_abs_model.onnx): a loop of stat and cp per file took 74 s for the 2,138 seeds on the
# reference VM (where every process start is expensive), and this 0.4 s.
if [[ -z "$(ls -A "$seeds")" ]]; then
  (cd "$testdata" &&
    find . -mindepth 3 -maxdepth 4 \( -path './*/test_*/model.onnx' -o \
      -path './*/test_*/test_data_set_0/input_0.pb' \) -size -200000c -print0 |
    tar --null -T - -cf -) | tar -xf - -C "$seeds" --transform 's,^\./,,;s,/,_,g'
fi
echo "run_fuzz: $(ls "$seeds" | wc -l) seeds from $testdata, $(ls "$here/seeds" | wc -l) of our own, $(ls "$here/regressions" | wc -l) regressions, $seconds s"
cd "$work"
# -seed and -runs make the run repeatable: CI executes the same mutations a developer ran
# (with an empty WORK_DIR/corpus), so a finding reproduces, and a bug found later by a longer
# local run (FUZZ_SEED=0 for a random seed, more SECONDS) does not make CI flaky. About
# 4,000 inputs a second on the reference machine (17,000 before each input also went through
# onnx::to_estimator): SECONDS x 4,000 runs, capped at 3 x SECONDS.
# -timeout: one input running longer than 10 s is reported as a hang; -rss_limit_mb bounds
# the memory (the target refuses single allocations above 64 MiB itself).
exec "$fuzzer" -seed="${FUZZ_SEED:-1}" -runs=$((seconds * 4000)) -max_total_time=$((seconds * 3)) \
  -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 corpus "$seeds" "$here/seeds" "$here/regressions"
