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
. scripts/bench-lib.sh
bench_setup "${1:-}"
bench_builds
runs=${RUNS:-3}
cat "$log" > /dev/null # warm the page cache
bytes=$(stat -L -c %s "$log")
echo "load: $(cat /proc/loadavg)"
for bin in "${bins[@]}"; do
  "$dir/$bin" check --rules "$rules" "$log" | tail -6 || true
done
times=$(mktemp)
for run in $(seq "$runs"); do
  for bin in "${bins[@]}"; do
    out=$( { /usr/bin/time -f "%e %M %U %S" "$dir/$bin" check --rules "$rules" "$log" > /dev/null; } 2>&1 | tail -1 ) || true
    read -r wall rss_kb user sys <<<"$out"
    echo "$bin $wall $user $sys" >> "$times"
    awk -v w="$wall" -v kb="$rss_kb" -v u="$user" -v s="$sys" -v n="$lines" -v b="$bytes" -v r="$run" -v x="$bin" 'BEGIN {
      printf "run %d %s: %d lines, %.0f MB in %.2f s (CPU %.2f s): %.1f M lines/s, %.0f MB/s, peak RSS %.1f MB\n",
        r, x, n, b/1e6, w, u+s, n/w/1e6, b/w/1e6, kb/1024 }'
  done
done
echo "load: $(cat /proc/loadavg)"
if [ -n "${BASE:-}" ]; then
  for bin in "${bins[@]}"; do
    wall=$(awk -v x="$bin" '$1 == x { print $2 }' "$times" | sort -n | tr '\n' ' ')
    cpu=$(awk -v x="$bin" '$1 == x { print $3 + $4 }' "$times" | sort -n | tr '\n' ' ')
    awk -v x="$bin" -v w="$wall" -v c="$cpu" 'BEGIN {
      n = split(w, ws, " "); split(c, cs, " "); m = int((n + 1) / 2)
      printf "%s: wall min %.2f s, median %.2f s; CPU min %.2f s, median %.2f s (%d runs)\n", x, ws[1], ws[m], cs[1], cs[m], n }'
  done
fi
rm -f "$times"
