#!/usr/bin/env bash
# Measures the DuckDB baseline (bench/duckdb, its own Go module) on the same
# generated CSV as scripts/bench-check.sh: wall time and peak RSS of 3 runs,
# loading the CSV included. CPU seconds (user+sys) are printed too: on a busy
# machine they move less than the wall time does.
#
#   scripts/bench-duckdb.sh [LINES]
#
# THREADS=N passes -threads N (default: DuckDB's own choice, one per core).
# ONE_QUERY=1 counts all rules in one query over one shared sort.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
bench_setup "${1:-}"
threads=${THREADS:-0}
extra=()
if [ -n "${ONE_QUERY:-}" ]; then extra=(-one-query); fi
(cd bench/duckdb && go build -o "$dir/duckdb-baseline" .)
cat "$log" > /dev/null # warm the page cache
bytes=$(stat -c %s "$log")
echo "load: $(cat /proc/loadavg)"
for run in 1 2 3; do
  if ! /usr/bin/time -f "%e %M %U %S" "$dir/duckdb-baseline" -csv "$log" -rules "$rules" -threads "$threads" "${extra[@]}" \
      > "$dir/duckdb-run$run.out" 2> "$dir/duckdb-run$run.time"; then
    cat "$dir/duckdb-run$run.time" >&2
    exit 2
  fi
  if [ "$run" = 1 ]; then cat "$dir/duckdb-run1.out"; fi
  read -r wall rss_kb user sys < <(tail -1 "$dir/duckdb-run$run.time")
  awk -v w="$wall" -v kb="$rss_kb" -v u="$user" -v s="$sys" -v n="$lines" -v b="$bytes" -v r="$run" 'BEGIN {
    printf "run %d: %d lines, %.0f MB in %.2f s (CPU %.2f s): %.1f M lines/s, %.0f MB/s, peak RSS %.1f MB\n",
      r, n, b/1e6, w, u+s, n/w/1e6, b/w/1e6, kb/1024 }'
done
echo "load: $(cat /proc/loadavg)"
