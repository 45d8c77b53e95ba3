#!/usr/bin/env bash
# Measures `rlcheck check` on a generated 10-million-line CSV (ts_ns,key, epoch
# nanoseconds) against three rules: wall time, CPU time, lines/s, MB/s and
# peak RSS, over 3 runs. scripts/bench-duckdb.sh measures the DuckDB baseline
# on the same file.
#
#   scripts/bench-check.sh [LINES]
#
# The log is written once to ${BENCH_DIR:-/tmp/rlcheck-bench} and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-10000000}
dir=${BENCH_DIR:-/tmp/rlcheck-bench}
rules=${RULES:-10/1s,500/1m,600000/24h}
mkdir -p "$dir"
log="$dir/sends-$lines.csv"
if [ ! -s "$log" ]; then
  echo "generating $log" >&2
  go run ./scripts/genlog -lines "$lines" > "$log"
fi
go build -o "$dir/rlcheck" ./cmd/rlcheck
cat "$log" > /dev/null # warm the page cache
bytes=$(stat -c %s "$log")
echo "load: $(cat /proc/loadavg)"
"$dir/rlcheck" check --rules "$rules" "$log" | tail -6 || true
for run in 1 2 3; do
  out=$( { /usr/bin/time -f "%e %M %U %S" "$dir/rlcheck" check --rules "$rules" "$log" > /dev/null; } 2>&1 | tail -1 ) || true
  read -r wall rss_kb user sys <<<"$out"
  awk -v w="$wall" -v kb="$rss_kb" -v u="$user" -v s="$sys" -v n="$lines" -v b="$bytes" -v r="$run" 'BEGIN {
    printf "run %d: %d lines, %.0f MB in %.2f s (CPU %.2f s): %.1f M lines/s, %.0f MB/s, peak RSS %.1f MB\n",
      r, n, b/1e6, w, u+s, n/w/1e6, b/w/1e6, kb/1024 }'
done
