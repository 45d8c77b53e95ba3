#!/usr/bin/env bash
# Times `rlcheck simulate seed --runs N` (default 10000) with GOMAXPROCS=1
# and 2, alternating, RUNS times each (default 5), and prints min and median
# wall and CPU time per setting and the wall ratio 2 cores / 1 core, with
# the load. BASE=<revision> also builds that revision and alternates it in.
# Every run's output must be the same, byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
dir=${BENCH_DIR:-/tmp/rlcheck-bench}
runs=${RUNS:-5}
mkdir -p "$dir"
. scripts/bench-lib.sh
bench_builds
times=$(mktemp)
want=""
echo "load before: $(cat /proc/loadavg)"
for run in $(seq "$runs"); do
  for bin in "${bins[@]}"; do
    for procs in 1 2; do
      out=$( { GOMAXPROCS=$procs /usr/bin/time -f "%e %U %S" "$dir/$bin" simulate seed --runs "$n" > "$dir/seeds.out"; } 2>&1 | tail -1 )
      sum=$(md5sum < "$dir/seeds.out")
      if [ -z "$want" ]; then want=$sum; fi
      if [ "$sum" != "$want" ]; then
        echo "FAIL: $bin GOMAXPROCS=$procs output differs" >&2
        exit 1
      fi
      read -r wall user sys <<<"$out"
      echo "$bin $procs $wall $user $sys" >> "$times"
    done
  done
done
echo "load after: $(cat /proc/loadavg)"
echo "every run printed the same output"
stats() {
  awk -v b="$1" -v p="$2" -v f="$3" '$1 == b && $2 == p { print (f == "cpu" ? $4 + $5 : $3) }' "$times" |
    sort -g | awk '{ a[NR] = $1 } END { printf "%.2f %.2f", a[1], a[int((NR + 1) / 2)] }'
}
for bin in "${bins[@]}"; do
  read -r w1 w1m <<<"$(stats "$bin" 1 wall)"
  read -r w2 w2m <<<"$(stats "$bin" 2 wall)"
  read -r c1 c1m <<<"$(stats "$bin" 1 cpu)"
  read -r c2 c2m <<<"$(stats "$bin" 2 cpu)"
  awk -v b="$bin" -v w1="$w1" -v w1m="$w1m" -v w2="$w2" -v w2m="$w2m" -v c1="$c1" -v c1m="$c1m" -v c2="$c2" -v c2m="$c2m" 'BEGIN {
    printf "%s: GOMAXPROCS=1 wall %.2f/%.2f s CPU %.2f/%.2f s; GOMAXPROCS=2 wall %.2f/%.2f s CPU %.2f/%.2f s (min/median); wall ratio 2/1: min %.2f, median %.2f\n",
      b, w1, w1m, c1, c1m, w2, w2m, c2, c2m, w2 / w1, w2m / w1m }'
done
rm -f "$times"
