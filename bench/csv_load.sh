#!/usr/bin/env bash
# Loading a numeric CSV: pandas.read_csv (its C parser, single-threaded) against onelearn's
# io::load_csv and io::read_table, on the same file, on the same machine, in one run.
#
#   bench/csv_load.sh [SIZE] [REPEATS]
#
# SIZE is the file's size in bytes, with an optional K, M or G suffix (powers of 1000; default
# 1G); REPEATS how many times each loader runs, alternating, the best time of each kept (default
# 3). The file (16 columns: uniform numbers with 6 decimals, every fourth column integers; see
# bench/csv_load.cpp) is written once to $CSV_DIR (default /tmp) and reused; it is read once
# before timing, so every loader reads it from the page cache.
#
# onelearn runs with OpenMP on all cores (OMP_NUM_THREADS, if set) and again on one thread, the
# like-for-like comparison with pandas' one thread. Prints one JSON line per run, then a summary
# with the ratios (pandas' time / onelearn's: above 1, onelearn is faster).
#
# Needs g++ (C++20), Eigen 3, and pandas for /usr/bin/python3 (apt-get install python3-pandas);
# $PYTHON and $CXX override the interpreter and the compiler.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
size_arg="${1:-1G}"
repeats="${2:-3}"
python="${PYTHON:-/usr/bin/python3}"
cxx="${CXX:-g++}"

case "$size_arg" in
  *[Gg]) size=$(( ${size_arg%?} * 1000000000 )) ;;
  *[Mm]) size=$(( ${size_arg%?} * 1000000 )) ;;
  *[Kk]) size=$(( ${size_arg%?} * 1000 )) ;;
  *) size=$size_arg ;;
esac

work="$(mktemp -d "${TMPDIR:-/tmp}/onelearn_csv_bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
csv="${CSV_DIR:-/tmp}/onelearn_bench_${size}.csv"

if ! "$python" -c 'import pandas' 2>/dev/null; then
  echo "csv_load.sh: $python has no pandas (apt-get install -y python3-pandas)" >&2
  exit 1
fi

echo "building bench/csv_load.cpp (g++ -O2 -fopenmp)" >&2
"$cxx" -std=c++20 -O2 -fopenmp -I"$root/include" -isystem /usr/include/eigen3 \
  "$here/csv_load.cpp" -o "$work/csv_load"

if [[ ! -f "$csv" ]] || (( $(stat -c %s "$csv") < size )); then
  echo "writing $csv ($size bytes)" >&2
  "$work/csv_load" generate "$csv" "$size"
fi
cat "$csv" > /dev/null  # into the page cache, for every loader alike

cat > "$work/pandas_load.py" <<'EOF'
import json, sys, time
import pandas
path = sys.argv[1]
start = time.perf_counter()
frame = pandas.read_csv(path, engine="c")
seconds = time.perf_counter() - start
print(json.dumps({"loader": "pandas.read_csv", "seconds": round(seconds, 3),
                  "rows": frame.shape[0], "columns": frame.shape[1],
                  "sum": float(frame.to_numpy(dtype="float64").sum()),
                  "pandas": pandas.__version__}))
EOF

threads="${OMP_NUM_THREADS:-$(nproc)}"
results="$work/results.jsonl"
for ((r = 1; r <= repeats; ++r)); do
  "$python" "$work/pandas_load.py" "$csv" | tee -a "$results"
  OMP_NUM_THREADS=$threads "$work/csv_load" load_csv "$csv" |
    sed "s/}\$/, \"threads\": $threads}/" | tee -a "$results"
  OMP_NUM_THREADS=1 "$work/csv_load" load_csv "$csv" | sed 's/}$/, "threads": 1}/' |
    tee -a "$results"
  OMP_NUM_THREADS=$threads "$work/csv_load" read_table "$csv" |
    sed "s/}\$/, \"threads\": $threads}/" | tee -a "$results"
done

"$python" - "$results" "$csv" "$repeats" <<'EOF'
import json, os, platform, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
best = {}
for run in runs:
    key = (run["loader"], run.get("threads", 1))
    if key not in best or run["seconds"] < best[key]["seconds"]:
        best[key] = run
pandas_run = best[("pandas.read_csv", 1)]
size = os.path.getsize(sys.argv[2])
print(f"\n{sys.argv[2]}: {size / 1e9:.2f} GB, {pandas_run['rows']} rows x "
      f"{pandas_run['columns']} columns; best of {sys.argv[3]} runs each; "
      f"{platform.node()}, {os.cpu_count()} cores")
for (loader, threads), run in best.items():
    ratio = pandas_run["seconds"] / run["seconds"]
    note = "" if loader.startswith("pandas") else f"  pandas / onelearn = {ratio:.2f}"
    print(f"  {loader:34s} {threads} thread{'s' if threads > 1 else ' '}  "
          f"{run['seconds']:7.3f} s  {size / 1e6 / run['seconds']:7.1f} MB/s{note}")
EOF
