#!/usr/bin/env bash
# Measures the server's CPU per admission of strategies/redislimit/admit.lua
# inside a real redis-server, without the client or the network: one EVAL
# runs the script N times (default 60000) as the body of a Lua function,
# over 3 rules (1s, 1m, 1h, limits 2^30 that never bind) with server time,
# once with exact sets and once with bucket hashes (the default policy's
# 64 buckets). The CPU is the redis-server process's (utime + stime from
# /proc), min over REPS runs (default 3), so load from other processes
# shows less than in wall time. BASE=<revision> alternates that revision's
# script with the working tree's (a script with a constants block gets
# these rules' constants written in, an older one its full ARGV). Prints µs
# per admission and the load.
#
#	REPS=3 BASE=8eb8bc7 scripts/bench-admit-lua.sh 100000
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
# with a constants block (BEGIN CONSTANTS) gets the mode's constants there
# and the per-call ARGV; an older one, the full ARGV of its time.
{
  echo 'local variants, KK, AA = {exact = {}, bounded = {}}, nil, nil'
  i=0
  for f in "${files[@]}"; do
    i=$((i + 1))
    for mode in exact bounded; do
      echo "variants.$mode[$i] = function()"
      if grep -q '^-- BEGIN CONSTANTS' "$f"; then
        if [ "$mode" = bounded ]; then
          sed -e 's/^local lease, sentinelTTL, idem = \(.*\), 1$/local lease, sentinelTTL, idem = \1, 0/' \
            -e "s/^local R = .*/local R = {1073741824, 1073741824, 1073741824}/" \
            -e "s/^local G = .*/local G = {15625, 937500, 56250000}/" "$f"
        else
          cat "$f"
        fi
      else
        cat "$f"
      fi | sed -e 's/\bKEYS\b/KK/g' -e 's/\bARGV\b/AA/g'
      echo "end"
    done
    if grep -q '^-- BEGIN CONSTANTS' "$f"; then echo "variants.new$i = true"; fi
  done
  cat <<'LUA'
local W = {'0', '0', '0'}
if ARGV[1] == 'bounded' then W = {'15625', '937500', '56250000'} end
local v, ctr = tonumber(ARGV[3]), tonumber(ARGV[4])
local args, m, cue = nil, 3, 4
if variants['new' .. v] then
  args, m, cue = {'m', '0', '0', '0'}, 1, 2
else
  args = {'', '', 'm', '0', '1000', '0', '0', '3602000', '', '3660000000', '',
    '-1073741824', '1000000', '3000', W[1], '-1073741824', '60000000', '62000', W[2],
    '-1073741824', '3600000000', '3602000', W[3]}
end
local p = ARGV[1] .. v .. ':'
KK = {p .. '1', p .. '2', p .. '3', p .. 'marker', p .. 'live'}
AA = args
local run = variants[ARGV[1]][v]
for _ = 1, tonumber(ARGV[2]) do
  ctr = ctr + 1
  args[m] = 'p:' .. ctr
  args[cue] = (ctr % 16 == 0) and '1' or '0' -- the limiter's sweep cue
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
