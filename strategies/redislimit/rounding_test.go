package redislimit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
)

// stores returns the servers a test of the script runs on: miniredis
// (gopher-lua), and a real redis-server when one is installed. A test that
// needs the embedded server's fast path lives in the external package
// (oracle_test.go), which may import it.
func stores(t *testing.T) map[string]redis.Scripter {
	t.Helper()
	out := map[string]redis.Scripter{"miniredis": newClient(t)}
	if redistest.Available(t) {
		out["redis-server"] = realClient(t, redistest.Start(t))
	}
	return out
}

// tryCostAt runs the script once for a call of costs at the caller
// instant at (ns), without waiting, and returns the wait it asks for.
func tryCostAt(t *testing.T, l *Limiter, rt *stepRT, at int64, costs []int64) time.Duration {
	t.Helper()
	rt.t = at
	member := fmt.Sprintf("c%d", l.counter.Add(1))
	var tail []any
	if len(l.units) > 0 {
		member, tail = l.costArgs(member, costs)
	}
	wait, _, _, err := l.tryCost(context.Background(), member, false, tail)
	require.NoError(t, err)
	return wait
}

// TestBucketNeverEarlyOnCallerClocks: under 1/1s burst 1 a call at
// 999 ns past a microsecond drains the bucket, and one at 1 s past that
// microsecond finds it holding 0.999999001: it must wait. The script
// rounds a caller's instant down for the check, so the level it takes
// from must be dated at the instant rounded up, or the next call is given
// up to a microsecond of refill that never happened. The same for a cost
// bucket, a bucket with a margin, and a call in the same microsecond.
func TestBucketNeverEarlyOnCallerClocks(t *testing.T) {
	bucket := rule.Rule{Limit: 1, Window: time.Second, Kind: rule.Bucket, Burst: 1}
	tokens := rule.Rule{Limit: 3, Unit: "tokens", Window: time.Second, Kind: rule.Bucket, Burst: 3}
	margin := bucket
	margin.Burst, margin.Margin = 2, time.Second
	cases := []struct {
		name  string
		rule  rule.Rule
		costs []int64
		first int64 // ns after epoch
		next  int64
	}{
		{"1/1s burst 1, 1 s later", bucket, nil, 999, 999 + int64(time.Second) - 999},
		{"1/1s burst 1, 1 s less 1 ns later", bucket, nil, 1, int64(time.Second)},
		{"3 tokens/1s burst 3, cost 3", tokens, []int64{3}, 999, int64(time.Second)},
		{"1/1s burst 2 with a margin of 1s", margin, nil, 999, int64(time.Second)},
		{"the same microsecond", bucket, nil, 1, 999},
	}
	for name, c := range stores(t) {
		for _, src := range []TimeSource{Client, Virtual} {
			for i, tc := range cases {
				t.Run(fmt.Sprintf("%s/%v/%s", name, src, tc.name), func(t *testing.T) {
					rt := &stepRT{t: epoch}
					key := fmt.Sprintf("early-%v-%d", src, i)
					l, err := New(c, rt, []rule.Rule{tc.rule}, Options{Key: key, TimeSource: src, MaxSkew: -1})
					require.NoError(t, err)
					costs := tc.costs
					if costs == nil && len(l.units) > 0 {
						costs = l.ones
					}
					require.Zero(t, tryCostAt(t, l, rt, epoch+tc.first, costs), "the bucket starts full")
					assert.Positive(t, tryCostAt(t, l, rt, epoch+tc.next, costs),
						"admitted %d ns after a call that drained the bucket", tc.next-tc.first)
				})
			}
		}
	}
}
