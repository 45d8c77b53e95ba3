#!/bin/sh
# The bounded-memory strategies over 1000 seeds of every shipped scenario:
# in memory, on the embedded Redis and on a real redis-server (started by
# the test). Slow: hours on a busy two-core machine. (RLCHECK_FULL=1, the
# CI run, takes 50 seeds in memory, 10 on the embedded Redis, 5 on a real
# one.)
set -eu
cd "$(dirname "$0")/.."
go test -count=1 -timeout 24h -run 'Bucketed' -v ./scenarios/ -args -seeds 1000
RLCHECK_FULL=1 go test -count=1 -timeout 24h -run 'Bucketed' -v ./strategies/redislimit/
