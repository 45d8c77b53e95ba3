#!/usr/bin/env bash
# Times `rlcheck simulate provider-edge --find-margin --runs N` (default
# 1000) RUNS times (default 2), with `redis` on the in-process miniredis and
# on a local redis-server (started here on a free loopback port in a temp
# dir, stopped at the end), and prints each run's wall, CPU and peak RSS with
# the load, then min/median wall and CPU per setting. BASE=<revision> also
# builds that revision and alternates it in; GOGC100=1 adds this build with
# GOGC=100 (the collector's default, which simulate otherwise raises to 400).
# Every run's text output must be the same, byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
dir=${BENCH_DIR:-/tmp/rlcheck-bench-margin}
runs=${RUNS:-2}
mkdir -p "$dir"
. scripts/bench-lib.sh
bench_builds
variants=(new)
if [ -n "${BASE:-}" ]; then variants=(base new); fi
if [ -n "${GOGC100:-}" ]; then variants+=(new-gogc100); fi

redisdir=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --bind 127.0.0.1 --port "$port" --dir "$redisdir" --save "" --appendonly no > "$redisdir/log" 2>&1 &
redispid=$!
trap 'kill "$redispid" 2>/dev/null; wait "$redispid" 2>/dev/null; rm -rf "$redisdir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping > /dev/null 2>&1 && break; sleep 0.1; done

times=$(mktemp)
want=""
for run in $(seq "$runs"); do
  for store in embedded redis-server; do
    for v in "${variants[@]}"; do
      bin=$dir/rlcheck env=()
      case $v in
        base) bin=$dir/rlcheck-base ;;
        new-gogc100) env=(GOGC=100) ;;
      esac
      args=(simulate provider-edge --find-margin --runs "$n")
      if [ "$store" = redis-server ]; then args+=(--redis-url "redis://127.0.0.1:$port/0"); fi
      load=$(cut -d' ' -f1-3 /proc/loadavg)
      out=$( { env "${env[@]}" /usr/bin/time -f "%e %U %S %M" "$bin" "${args[@]}" > "$dir/margin.out"; } 2>&1 | tail -1 )
      sum=$(md5sum < "$dir/margin.out")
      if [ -z "$want" ]; then want=$sum; cp "$dir/margin.out" "$dir/margin.want"; fi
      if [ "$sum" != "$want" ]; then
        echo "FAIL: $v on $store: output differs" >&2
        diff "$dir/margin.want" "$dir/margin.out" >&2 || true
        exit 1
      fi
      read -r wall user sys rss <<<"$out"
      echo "$(date -u +%H:%M:%S) $v $store wall ${wall}s CPU ${user}+${sys}s RSS $((rss / 1024))MB load $load"
      echo "$v $store $wall $user $sys" >> "$times"
    done
  done
done
echo "load after: $(cat /proc/loadavg)"
echo "every run printed the same output:"
cat "$dir/margin.want"
stats() {
  awk -v v="$1" -v s="$2" -v f="$3" '$1 == v && $2 == s { print (f == "cpu" ? $4 + $5 : $3) }' "$times" |
    sort -g | awk '{ a[NR] = $1 } END { printf "%.1f %.1f", a[1], a[int((NR + 1) / 2)] }'
}
for store in embedded redis-server; do
  for v in "${variants[@]}"; do
    read -r w wm <<<"$(stats "$v" "$store" wall)"
    read -r c cm <<<"$(stats "$v" "$store" cpu)"
    echo "$v on $store: wall $w/$wm s, CPU $c/$cm s (min/median)"
  done
done
rm -f "$times"
