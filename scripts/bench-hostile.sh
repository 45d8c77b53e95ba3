#!/usr/bin/env bash
# Measures `rlcheck check` on hostile input, the build of a base revision
# against the working tree, alternating, 3 runs each: wall time, CPU time and
# peak RSS.
#
#   scripts/bench-hostile.sh [BASE_REV]      (default: 74737f2)
#
# Inputs, written once to ${BENCH_DIR:-/tmp/rlcheck-hostile}:
#   bomb   a gzip of the line "1" repeated ${BOMB_LINES:-20000000} times
#          (40 MB inflated, 175 KB compressed): every send at one instant
#   rev    ${REV_LINES:-200000} lines in reverse time order, 10 µs apart
#          (2 s, within the default 5 s --max-disorder)
#   csv    ${CSV_LINES:-2000000} generated lines in time order (ts_ns,key),
#          the common case, to see that it did not slow down
# Each is checked with the default horizon, the bomb and rev also with --sort.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-74737f2}
dir=${BENCH_DIR:-/tmp/rlcheck-hostile}
bomb_lines=${BOMB_LINES:-20000000}
rev_lines=${REV_LINES:-200000}
csv_lines=${CSV_LINES:-2000000}
mkdir -p "$dir"

bomb="$dir/bomb-$bomb_lines.txt.gz"
[ -s "$bomb" ] || { yes 1 || true; } | head -n "$bomb_lines" | gzip -1 > "$bomb"
rev="$dir/rev-$rev_lines.txt"
[ -s "$rev" ] || awk -v n="$rev_lines" 'BEGIN { for (i = n - 1; i >= 0; i--) { t = i * 10; printf "%d.%06d\n", 1700000000 + int(t / 1000000), t % 1000000 } }' > "$rev"
csv="$dir/sends-$csv_lines.csv"
[ -s "$csv" ] || go run ./scripts/genlog -lines "$csv_lines" > "$csv"

rm -rf "$dir/base-src" && mkdir -p "$dir/base-src"
git archive "$base" | tar -x -C "$dir/base-src"
(cd "$dir/base-src" && go build -o "$dir/rlcheck-base" ./cmd/rlcheck)
go build -o "$dir/rlcheck-new" ./cmd/rlcheck
cat "$csv" "$rev" "$bomb" > /dev/null # warm the page cache

# Memory is capped so that a run of the base build that holds every send
# fails instead of taking the shared machine down.
cap_kb=${CAP_KB:-4000000}

measure() { # label binary args...
  local label=$1 bin=$2
  shift 2
  ( ulimit -v "$cap_kb"; /usr/bin/time -o "$dir/time" -f "%e %M %U %S %x" "$bin" check "$@" > /dev/null 2>"$dir/stderr" ) || true
  read -r wall rss_kb user sys code < <(tail -1 "$dir/time")
  printf "%-34s %-5s wall %6.2f s  CPU %6.2f s  peak RSS %7.1f MB  exit %s  %s\n" \
    "$label" "$(basename "$bin" | sed 's/rlcheck-//')" "$wall" "$(echo "$user + $sys" | bc)" "$(echo "$rss_kb / 1024" | bc -l)" "$code" \
    "$(head -c 100 "$dir/stderr")"
}

echo "base $base ($(git rev-parse --short "$base")) against the working tree ($(git rev-parse --short HEAD)$(git diff --quiet || echo ', modified'))"
echo "load before: $(cat /proc/loadavg)"
for run in 1 2 3; do
  for bin in "$dir/rlcheck-base" "$dir/rlcheck-new"; do
    measure "bomb ($bomb_lines lines)" "$bin" --rules 5/1s "$bomb"
    measure "bomb ($bomb_lines lines) --sort" "$bin" --rules 5/1s --sort "$bomb"
    measure "reversed ($rev_lines lines)" "$bin" --rules 5/1s "$rev"
    measure "reversed ($rev_lines lines) --sort" "$bin" --rules 5/1s --sort "$rev"
    measure "in order ($csv_lines lines)" "$bin" --rules 10/1s,500/1m,600000/24h "$csv"
  done
  echo "load after run $run: $(cat /proc/loadavg)"
done
