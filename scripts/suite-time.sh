#!/usr/bin/env bash
# suite-time.sh [RUNS]: the everyday suite's wall time and CPU, as
# CONTRIBUTING quotes them. Runs `go test -count=1 ./...` RUNS times (3 by
# default) on a warm build cache, printing the load before and after each
# run, its wall time and CPU (user+system, the test programs and servers
# included), and the share of the time the CPU was idle (/proc/stat,
# sampled each second). Measure only on an otherwise quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
go test -count=1 -run '^$' ./... > /dev/null # warm the build cache
for i in $(seq "$runs"); do
	echo "run $i: load before $(cut -d' ' -f1-3 /proc/loadavg)"
	read -r -a a < <(head -1 /proc/stat)
	/usr/bin/time -f "run $i: %e s wall, %U s user + %S s system" go test -count=1 ./... > "/tmp/suite-time-$i.txt" 2>&1 || {
		grep -E '^(FAIL|---)' "/tmp/suite-time-$i.txt" | head
		exit 1
	}
	read -r -a b < <(head -1 /proc/stat)
	tail -1 "/tmp/suite-time-$i.txt"
	idle=$(((b[4] + b[5]) - (a[4] + a[5])))
	total=0
	for k in 1 2 3 4 5 6 7 8; do total=$((total + b[k] - a[k])); done
	echo "run $i: CPU idle $((100 * idle / total))% of the run; load after $(cut -d' ' -f1-3 /proc/loadavg)"
done
