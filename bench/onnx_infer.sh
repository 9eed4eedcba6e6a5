#!/usr/bin/env bash
# The onnx_infer workloads in one run: onelearn's executor (onelearn-onnx-bench) and
# onnxruntime (bench/anchors/onnxruntime_bench.js) on the same model files, the same batches
# and the same thread count, then one JSON line per (model, batch) with both times and
# "speedup" (onnxruntime's seconds over onelearn's: above 1, onelearn is faster).
#
#   bench/onnx_infer.sh [BENCH_BINARY] [THREADS]
#     BENCH_BINARY  default build-release/bench/onelearn-onnx-bench
#     THREADS       OpenMP threads for onelearn, intra-op threads for onnxruntime (default 2)
# Needs node with onnxruntime-node (NODE_PATH, or build-onnxrt/node_modules from scripts/test.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bench="${1:-$here/../build-release/bench/onelearn-onnx-bench}"
threads="${2:-2}"
export NODE_PATH="${NODE_PATH:-$here/../build-onnxrt/node_modules}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
OMP_NUM_THREADS="$threads" "$bench" --out "$work" > "$work/onelearn.jsonl"
node "$here/anchors/onnxruntime_bench.js" "$work" --threads "$threads" > "$work/onnxruntime.jsonl"
python3 - "$work/onelearn.jsonl" "$work/onnxruntime.jsonl" <<'PY'
import json, sys
ours = [json.loads(l) for l in open(sys.argv[1])]
peer = {(r["model"], r["batch"]): r for r in map(json.loads, open(sys.argv[2]))}
for r in ours:
    p = peer[(r["model"], r["batch"])]
    print(json.dumps({"workload": "onnx_infer", "model": r["model"], "batch": r["batch"],
                      "threads": r["threads"], "onelearn_seconds": r["seconds"],
                      "onnxruntime_seconds": p["seconds"],
                      "speedup": round(p["seconds"] / r["seconds"], 2),
                      "max_abs_diff_vs_nn": r["max_abs_diff_vs_nn"]}))
PY
