#!/usr/bin/env bash
# Measures what --html adds to `rlcheck check` on the generated 10-million-line
# CSV (the log of scripts/bench-check.sh) with the benchmark's three rules:
# per build, RUNS rounds (default 5) of the plain check and of the check with
# --html, alternated, then the min and median wall and CPU time (user+sys),
# the peak RSS, the report's size, and what the report adds: the median with
# --html minus the median without, of the same build.
#
#   scripts/bench-html.sh [LINES]
#
# BASE=<revision> also builds that revision and alternates its runs with this
# tree's. The load is printed before and after: on a shared machine, read the
# CPU times.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
bench_setup "${1:-}"
bench_builds
runs=${RUNS:-5}
cat "$log" > /dev/null # warm the page cache
times=$(mktemp)
echo "load before: $(cat /proc/loadavg)"
for run in $(seq "$runs"); do
  for bin in "${bins[@]}"; do
    for mode in plain html; do
      args=(check --rules "$rules")
      if [ "$mode" = html ]; then args+=(--html "$dir/$bin.html"); fi
      out=$( { /usr/bin/time -f "%e %M %U %S" "$dir/$bin" "${args[@]}" "$log" > /dev/null; } 2>&1 | tail -1 ) || true
      read -r wall rss_kb user sys <<<"$out"
      echo "$bin $mode $wall $user $sys $rss_kb" | awk '{ print $1, $2, $3, $4 + $5, $6 / 1024 }' >> "$times"
    done
  done
done
echo "load after: $(cat /proc/loadavg)"
for bin in "${bins[@]}"; do
  for mode in plain html; do
    read -r w wm <<<"$(bench_stats "$times" "$bin $mode" 3)"
    read -r c cm <<<"$(bench_stats "$times" "$bin $mode" 4)"
    read -r _ rss <<<"$(bench_stats "$times" "$bin $mode" 5)"
    printf "%-12s %-5s: wall min %s s, median %s s; CPU min %s s, median %s s; median peak RSS %.0f MB (%d runs)\n" \
      "$bin" "$mode" "$w" "$wm" "$c" "$cm" "$rss" "$runs"
    eval "wall_$mode=$wm cpu_$mode=$cm"
  done
  # shellcheck disable=SC2154
  awk -v b="$bin" -v w="$wall_html - $wall_plain" -v c="$cpu_html - $cpu_plain" -v size="$(stat -c %s "$dir/$bin.html")" 'BEGIN {
    split(w, ws, " - "); split(c, cs, " - ")
    printf "%s: --html adds %.2f s wall, %.2f s CPU (medians); report %d bytes\n", b, ws[1] - ws[2], cs[1] - cs[2], size }'
done
rm -f "$times"
