#!/usr/bin/env bash
# Measures the memory of checking and inferring per key with many keys: the
# build of a base revision against the working tree, alternating, REPS runs
# each (3): peak RSS and wall time. Memory is capped (CAP_KB, 7 GB) so that
# a build that holds every key cannot take the machine down.
#
#   scripts/bench-keys.sh [BASE_REV]      (default: e45a6a7)
#
# Inputs, written once to ${BENCH_DIR:-/tmp/rlcheck-keys}:
#   dense  1,000,000 keys, one send each, all within one second
#   quiet  1,000,000 keys, one send each, 2 s apart (every window passed)
#   infer  200,000 calls of 50,000 keys over 16 minutes, a quarter 429
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-e45a6a7}
dir=${BENCH_DIR:-/tmp/rlcheck-keys}
reps=${REPS:-3}
cap_kb=${CAP_KB:-7000000}
mkdir -p "$dir"
[ -s "$dir/dense.csv" ] || awk 'BEGIN { print "ts_ns,key"; for (i = 0; i < 1000000; i++) printf "%d,k%07d\n", 1700000000000000000 + i * 1000, i }' > "$dir/dense.csv"
[ -s "$dir/quiet.csv" ] || awk 'BEGIN { print "ts_ns,key"; for (i = 0; i < 1000000; i++) printf "%d,k%07d\n", 1700000000000000000 + i * 2000000000, i }' > "$dir/quiet.csv"
[ -s "$dir/infer.csv" ] || awk 'BEGIN { srand(3); print "ts_ms,key,status"; t = 1700000000000; for (i = 0; i < 200000; i++) { t += int(rand() * 10); printf "%d,k%d,%d\n", t, int(rand() * 50000), rand() < 0.25 ? 429 : 200 } }' > "$dir/infer.csv"

rm -rf "$dir/base-src" && mkdir -p "$dir/base-src"
git archive "$base" | tar -x -C "$dir/base-src"
(cd "$dir/base-src" && go build -o "$dir/rlcheck-base" ./cmd/rlcheck)
go build -o "$dir/rlcheck-new" ./cmd/rlcheck

six='10/1s,500/1m,10000/24h,100/1h fixed,5/1s burst 10,1000/1h first-call'
measure() { # case build args...
  local name=$1 b=$2
  shift 2
  ( ulimit -v "$cap_kb"; /usr/bin/time -o "$dir/time" -f '%M %e %x' "$dir/rlcheck-$b" "$@" > /dev/null 2> "$dir/err" ) || true
  read -r kb wall code < <(tail -1 "$dir/time")
  printf '%-14s %-5s %8d %8s  exit %s\n' "$name" "$b" $((kb / 1024)) "$wall" "$code"
}
echo "load before: $(cat /proc/loadavg)"
printf '%-14s %-5s %8s %8s\n' case build peak_MB wall_s
for ((r = 0; r < reps; r++)); do
  for b in base new; do
    measure dense-6-rules $b check --key-col key --rules "$six" "$dir/dense.csv"
    measure quiet-text $b check --key-col key --rules 5/1s "$dir/quiet.csv"
    measure quiet-json $b check --key-col key --rules 5/1s --format json "$dir/quiet.csv"
    measure infer-text $b infer --key-col key "$dir/infer.csv"
    measure infer-json $b infer --key-col key --format json "$dir/infer.csv"
  done
  echo "load after run $((r + 1)): $(cat /proc/loadavg)"
done
