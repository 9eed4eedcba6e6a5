#!/bin/sh
# Regenerates docs/onnx-operators.md from the executor's operator registry
# (include/onelearn/onnx/ops/registry.hpp). The ctest onnx_operators_doc fails until it is rerun
# after a change to the registry.
#
#   scripts/onnx-operators-doc.sh [BUILD_DIR]     (default: build)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
tool="$build/tools/onelearn-onnx"
if [ ! -x "$tool" ]; then
  echo "onnx-operators-doc: $tool not found; build it first: cmake --build $build --target onelearn-onnx" >&2
  exit 1
fi
tmp="$root/docs/onnx-operators.md.tmp.$$"
"$tool" ops --markdown > "$tmp"
mv "$tmp" "$root/docs/onnx-operators.md"
echo "wrote $root/docs/onnx-operators.md"
