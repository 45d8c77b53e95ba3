#!/usr/bin/env bash
# Measures `rlcheck check` on a generated 10-million-line CSV (ts_ns,key, epoch
# nanoseconds) against three rules: wall time, CPU time, lines/s, MB/s and
# peak RSS, over 3 runs. scripts/bench-duckdb.sh measures the DuckDB baseline
# on the same file.
#
#   scripts/bench-check.sh [LINES]
#
# The log is written once to ${BENCH_DIR:-/tmp/rlcheck-bench} and reused.
# RUNS sets the number of runs. BASE=<revision> also builds that revision
# (from `git archive`) and alternates its runs with this tree's, then prints
# the min and median wall and CPU time of each.
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-10000000}
dir=${BENCH_DIR:-/tmp/rlcheck-bench}
rules=${RULES:-10/1s,500/1m,600000/24h}
runs=${RUNS:-3}
mkdir -p "$dir"
log="$dir/sends-$lines.csv"
if [ ! -s "$log" ]; then
  echo "generating $log" >&2
  go run ./scripts/genlog -lines "$lines" > "$log"
fi
go build -o "$dir/rlcheck" ./cmd/rlcheck
bins=("$dir/rlcheck")
if [ -n "${BASE:-}" ]; then
  rm -rf "$dir/base" && mkdir -p "$dir/base"
  git archive "$BASE" | tar -x -C "$dir/base"
  (cd "$dir/base" && go build -o "$dir/rlcheck-base" ./cmd/rlcheck)
  bins=("$dir/rlcheck-base" "$dir/rlcheck")
fi
cat "$log" > /dev/null # warm the page cache
bytes=$(stat -c %s "$log")
echo "load: $(cat /proc/loadavg)"
for bin in "${bins[@]}"; do
  "$bin" check --rules "$rules" "$log" | tail -6 || true
done
times=$(mktemp)
for run in $(seq "$runs"); do
  for bin in "${bins[@]}"; do
    out=$( { /usr/bin/time -f "%e %M %U %S" "$bin" check --rules "$rules" "$log" > /dev/null; } 2>&1 | tail -1 ) || true
    read -r wall rss_kb user sys <<<"$out"
    echo "$(basename "$bin") $wall $user $sys" >> "$times"
    awk -v w="$wall" -v kb="$rss_kb" -v u="$user" -v s="$sys" -v n="$lines" -v b="$bytes" -v r="$run" -v x="$(basename "$bin")" 'BEGIN {
      printf "run %d %s: %d lines, %.0f MB in %.2f s (CPU %.2f s): %.1f M lines/s, %.0f MB/s, peak RSS %.1f MB\n",
        r, x, n, b/1e6, w, u+s, n/w/1e6, b/w/1e6, kb/1024 }'
  done
done
echo "load: $(cat /proc/loadavg)"
if [ -n "${BASE:-}" ]; then
  for bin in "${bins[@]}"; do
    x=$(basename "$bin")
    wall=$(awk -v x="$x" '$1 == x { print $2 }' "$times" | sort -n | tr '\n' ' ')
    cpu=$(awk -v x="$x" '$1 == x { print $3 + $4 }' "$times" | sort -n | tr '\n' ' ')
    awk -v x="$x" -v w="$wall" -v c="$cpu" 'BEGIN {
      n = split(w, ws, " "); split(c, cs, " "); m = int((n + 1) / 2)
      printf "%s: wall min %.2f s, median %.2f s; CPU min %.2f s, median %.2f s (%d runs)\n", x, ws[1], ws[m], cs[1], cs[m], n }'
  done
fi
rm -f "$times"
