#!/usr/bin/env bash
# scripts/plot.py on the files in tests/data/plot/: every kind of picture (training curves from
# a CSVLogger file and a History, a search's results as GridSearchCV/HalvingGridSearchCV and
# tune::run write them, bench/compare.py's ratios) is written as a PNG, and bad input (a missing
# file, an unknown format, no numbers to draw) ends with status 2 and one line of error.
#   tests/scripts/test_plot.sh [SOURCE_DIR] [WORK_DIR]
# Exits 77 (ctest's SKIP_RETURN_CODE) when no python3 here can import matplotlib.
set -u
src="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
work="${2:-$(mktemp -d)}"
mkdir -p "$work"
data="$src/tests/data/plot"
plot="$src/scripts/plot.py"

# Debian's python3-matplotlib is for /usr/bin/python3, which is not always the python3 on PATH.
py=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import matplotlib" 2>/dev/null; then
    py="$candidate"
    break
  fi
done
if [[ -z "$py" ]]; then
  echo "test_plot: SKIPPED: no python3 with matplotlib (apt-get install python3-matplotlib)"
  exit 77
fi

failures=0
fail() {
  echo "test_plot: FAILED: $*"
  failures=$((failures + 1))
}

# A PNG with content: nonzero size and the PNG signature.
expect_png() {
  local name="$1"
  shift
  local out="$work/$name.png"
  rm -f "$out"
  if ! "$py" "$plot" "$@" -o "$out" >"$work/$name.log" 2>&1; then
    fail "$name: plot.py $* exited $? ($(tail -n 1 "$work/$name.log"))"
  elif [[ ! -s "$out" ]]; then
    fail "$name: expected a PNG in $out, found none or an empty file"
  elif [[ "$(head -c 8 "$out" | od -An -c | tr -d ' ')" != '211PNG\r\n032\n' ]]; then
    fail "$name: expected the PNG signature at the start of $out"
  else
    echo "test_plot: ok: $name ($(stat -c %s "$out") bytes)"
  fi
}

# Status 2, one line on stderr that names the problem, and no picture.
expect_error() {
  local name="$1" pattern="$2"
  shift 2
  local out="$work/$name.png"
  rm -f "$out"
  "$py" "$plot" "$@" -o "$out" >"$work/$name.out" 2>"$work/$name.err"
  local rc=$?
  local lines
  lines=$(wc -l <"$work/$name.err")
  if [[ $rc -ne 2 ]]; then
    fail "$name: expected exit status 2, found $rc"
  elif [[ $lines -ne 1 ]] || ! grep -q "^plot.py: error: .*$pattern" "$work/$name.err"; then
    fail "$name: expected one line 'plot.py: error: ...$pattern...'," \
      "found: $(cat "$work/$name.err")"
  elif [[ -e "$out" ]]; then
    fail "$name: expected no picture after an error, found $out"
  else
    echo "test_plot: ok: $name exits 2 ($(cat "$work/$name.err"))"
  fi
}

expect_png csvlogger "$data/training_log.csv"
expect_png history "$data/history.json"
expect_png curves_forced "$data/training_log.csv" --kind curves --title "forced"
expect_png grid_csv "$data/grid_search.csv"
expect_png grid_json "$data/grid_search.json"
expect_png halving_csv "$data/halving.csv"
expect_png tune_csv "$data/tune_results.csv" --mode max
expect_png tune_json "$data/tune_results.json"
expect_png bench "$data/compare_output.jsonl" --note auto

expect_error missing "no such file" "$data/does_not_exist.csv"
expect_error unknown "unknown format" "$data/unknown.txt"
expect_error no_numbers "no numeric columns" "$data/all_missing.csv"
expect_error wrong_kind "expected bench data" "$data/training_log.csv" --kind bench
expect_error bench_without_anchor "bench/compare.py" "$data/onelearn_bench_only.jsonl"

if [[ $failures -ne 0 ]]; then
  echo "test_plot: $failures failure(s); outputs in $work"
  exit 1
fi
echo "test_plot: all passed"
