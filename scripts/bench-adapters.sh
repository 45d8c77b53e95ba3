#!/usr/bin/env bash
# Times `rlcheck simulate seed --runs N` (default 1000) for the guide's two
# designs in Go (--strategies sequential,combined) and in Python through the
# adapter as well (--exec 'python3 adapters/python/guide.py', process
# start-up included; the Go rows take a few per cent of it), and the Node
# template's sliding log (--exec 'node adapters/node/my_limiter.mjs', after
# `npm ci` in adapters/node; left out without its node_modules), RUNS
# times each (default 5), alternating, and prints min and
# median wall and CPU time of each with the load. Each setting's output must
# be the same every run, byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
dir=${BENCH_DIR:-/tmp/rlcheck-bench}
runs=${RUNS:-5}
mkdir -p "$dir"
. scripts/bench-lib.sh
bench_builds
whats="go python"
if [ -d adapters/node/node_modules ]; then
  whats="$whats node"
else
  echo "node: left out (run npm ci in adapters/node first)" >&2
fi
times=$(mktemp)
echo "load before: $(cat /proc/loadavg)"
for run in $(seq "$runs"); do
  for what in $whats; do
    args=(--strategies sequential,combined)
    case $what in
      python) args+=(--exec 'python3 adapters/python/guide.py') ;;
      node) args+=(--exec 'node adapters/node/my_limiter.mjs') ;;
    esac
    out=$( { /usr/bin/time -f "%e %U %S" "$dir/rlcheck" simulate seed --runs "$n" "${args[@]}" > "$dir/adapters-$what.out.$run"; } 2>&1 | tail -1 )
    if ! cmp -s "$dir/adapters-$what.out.$run" "$dir/adapters-$what.out.1"; then
      echo "FAIL: $what run $run output differs from run 1" >&2
      exit 1
    fi
    read -r wall user sys <<<"$out"
    echo "$what $wall $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" >> "$times"
  done
done
echo "load after: $(cat /proc/loadavg)"
for what in $whats; do
  echo "$what: wall $(bench_stats "$times" "$what" 2) s, CPU $(bench_stats "$times" "$what" 3) s (min median), $n seeds, "
done
rm -f "$times"
