#!/usr/bin/env bash
# The main job: installs what is missing, builds examples/quickstart and runs it.
#   scripts/quickstart.sh            one process
#   scripts/quickstart.sh --np 2     the same program across 2 MPI ranks
set -euo pipefail
cd "$(dirname "$0")/.."

ranks=""
if [[ "${1:-}" == "--np" ]]; then ranks="${2:?--np needs a number of ranks}"; fi

scripts/install-deps.sh
[[ -f build/CMakeCache.txt ]] || cmake -S . -B build
cmake --build build -j2 --target quickstart

if [[ -z "$ranks" ]]; then
  exec build/examples/quickstart
fi
flags=(--oversubscribe --mca btl_vader_single_copy_mechanism none)
[[ $(id -u) -eq 0 ]] && flags+=(--allow-run-as-root)
exec mpirun -np "$ranks" "${flags[@]}" build/examples/quickstart
