#!/usr/bin/env bash
# Measures the server's CPU per admission of strategies/redislimit/admit.lua
# inside a real redis-server, without the client or the network: one EVAL
# runs the script N times (default 60000) as the body of a Lua function,
# over 3 rules (1s, 1m, 1h, limits 2^30 that never bind) with server time,
# once with exact rules (one sorted set) and once with bucketed rules (the
# default policy's 64 buckets). The CPU is the redis-server process's (utime + stime from
# /proc), min over REPS runs (default 3), so load from other processes
# shows less than in wall time. BASE=<revision> alternates that revision's
# script (of the head-hash layout) with the working tree's. The EVALSHA's
# own arguments are not in the figure (about 0.25 µs each). Prints µs per
# admission and the load.
#
#	REPS=3 scripts/bench-admit-lua.sh 100000
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-60000}
reps=${REPS:-3}
dir=${BENCH_DIR:-/tmp/rlcheck-bench-lua}
mkdir -p "$dir"
files=()
if [ -n "${BASE:-}" ]; then
  git show "$BASE:strategies/redislimit/admit.lua" >"$dir/base.lua"
  files+=("$dir/base.lua")
fi
cp strategies/redislimit/admit.lua "$dir/new.lua"
files+=("$dir/new.lua")

port=$((20000 + RANDOM % 20000))
redis-server --port "$port" --save '' --appendonly no --daemonize yes \
  --logfile "$dir/redis.log" >/dev/null
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
pid=$(redis-cli -p "$port" info server | tr -d '\r' | sed -n 's/^process_id://p')

# Each script becomes a function per mode (exact, bounded); KEYS and ARGV
# become upvalues the driver sets (Redis keeps them read-only). A script
# of the head-hash layout gets that layout's ARGV, which carries the rules,
# with the key lease among them when its constants line no longer holds
# it; an older one is refused.
{
  echo 'local variants, leased, KK, AA = {exact = {}, bounded = {}}, {}, nil, nil'
  i=0
  for f in "${files[@]}"; do
    i=$((i + 1))
    if grep -q '^local serverTime, virtual, lease = ' "$f"; then
      echo "leased[$i] = false"
    elif grep -q '^local serverTime, virtual = ' "$f"; then
      echo "leased[$i] = true"
    else
      echo "$f: not the head-hash layout of admit.lua; pick a BASE of that layout" >&2
      exit 2
    fi
    for mode in exact bounded; do
      echo "variants.$mode[$i] = function()"
      sed -e 's/\bKEYS\b/KK/g' -e 's/\bARGV\b/AA/g' "$f"
      echo "end"
    done
  done
  cat <<'LUA'
local v, ctr = tonumber(ARGV[3]), tonumber(ARGV[4])
local p = ARGV[1] .. v .. ':{k}'
local big = '1073741824'
local args
if ARGV[1] == 'bounded' then
  args = {'m', '0', '0', '0', '3660000000', '', '',
    big, '1000000', '15625', big, '60000000', '937500', big, '3600000000', '56250000',
    '1s:b64', '1m:b64', '1h:b64'}
  KK = {p, p .. ':1s:b64', p .. ':1m:b64', p .. ':1h:b64'}
else
  args = {'m', '0', '0', '0', '3660000000', '', '',
    '-' .. big, '1000000', '0', '-' .. big, '60000000', '0', '-' .. big, '3600000000', '0'}
  KK = {p, p .. ':1h', p .. ':1h', p .. ':1h'}
end
if leased[v] then table.insert(args, 5, '56250') end
AA = args
local run = variants[ARGV[1]][v]
for _ = 1, tonumber(ARGV[2]) do
  ctr = ctr + 1
  args[1] = 'p:' .. ctr
  args[2] = (ctr % 16 == 0) and '1' or '0' -- the limiter's sweep cue
  args[4] = (ctr % 20000 == 1) and '1' or '0' -- a refresh of the keys' expiries
  run()
end
return 0
LUA
} >"$dir/driver.lua"
sha=$(redis-cli -p "$port" -x script load <"$dir/driver.lua")
tck=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in exact bounded; do
  best=()
  for r in $(seq "$reps"); do
    for v in $(seq ${#files[@]}); do
      c0=$(cpu)
      out=$(redis-cli -p "$port" evalsha "$sha" 0 "$mode" "$n" "$v" $((r * n)))
      [ "$out" = 0 ] || { echo "run failed: $out" >&2; exit 1; }
      d=$(($(cpu) - c0))
      if [ -z "${best[$v]:-}" ] || [ "$d" -lt "${best[$v]}" ]; then best[$v]=$d; fi
    done
  done
  line="$mode:"
  for v in $(seq ${#files[@]}); do
    line="$line $(basename "${files[$((v - 1))]}" .lua) $(echo "scale=2; ${best[$v]} * 1000000 / $tck / $n" | bc) µs"
  done
  echo "$line"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
