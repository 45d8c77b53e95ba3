#!/bin/sh
# The bounded-memory strategies over 1000 seeds of every shipped scenario:
# in memory, on the embedded Redis and on a real redis-server (started by
# the test). Slow: hours on a busy two-core machine.
set -eu
cd "$(dirname "$0")/.."
RLCHECK_FULL=1 go test -count=1 -timeout 24h -run 'Bucketed' -v ./scenarios/ ./strategies/redislimit/
