#!/usr/bin/env bash
# Builds the reference manual with doxygen: scripts/docs.sh [OUTPUT_DIR] (default build/docs);
# open OUTPUT_DIR/html/index.html. Any doxygen warning fails the build (docs/Doxyfile:
# WARN_AS_ERROR = FAIL_ON_WARNINGS) and is printed. Exit status 77 when doxygen is not installed
# (ctest's docs_doxygen then reports a skip). Debian: apt-get install doxygen.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:-$root/build/docs}")

if ! command -v doxygen >/dev/null; then
  echo "docs.sh: doxygen not found (Debian: apt-get install doxygen)" >&2
  exit 77
fi

mkdir -p "$out"
version=$(sed -n 's/^project(onelearn VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
warnings="$out/doxygen-warnings.txt"
rm -f "$warnings"
cd "$root"  # the paths in docs/Doxyfile are relative to the repository root
status=0
ONELEARN_DOCS_OUTPUT="$out" ONELEARN_DOCS_WARNINGS="$warnings" ONELEARN_DOCS_VERSION="$version" \
  doxygen docs/Doxyfile || status=$?
if [[ -s "$warnings" ]]; then
  cat "$warnings" >&2
  echo "docs.sh: $(grep -c . "$warnings") line(s) of doxygen warnings; each warning fails the build" >&2
  exit 1
fi
if ((status != 0)); then
  echo "docs.sh: doxygen failed (status $status)" >&2
  exit "$status"
fi
echo "docs.sh: $out/html/index.html"
