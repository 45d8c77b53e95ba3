package libs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// TestFleetPinned pins, at exact virtual instants (the Redis server's
// clock is the virtual one), what the Redis libraries and the hand-written
// designs let into one window when configured as their docs show.
func TestFleetPinned(t *testing.T) {
	straddle := func(n int) workload.Arrivals {
		// One call opens a 1 s window at 9 s; n calls at 9.99 s, n at 10 s.
		times := []int64{9 * sec}
		for range n {
			times = append(times, 10*sec-10*ms)
		}
		for range n {
			times = append(times, 10*sec)
		}
		return workload.Arrivals{Kind: workload.Replay, Times: times}
	}
	tests := []struct {
		name     string
		strategy string
		rules    string
		cfg      libs.Config
		arr      workload.Arrivals
		callers  int
		maxInWin []int64
	}{
		// 17 at once, then one every 30/17 s: 16 more before 30 s.
		{"redis_rate 17 per 30 s, burst 17", catalog.RedisRate, "17/30s", libs.Default(), idleThen(60), 0, []int64{33}},
		// PerDuration truncates 30 s/17 to 1,764,705,882 ns, so the 17th
		// spaced send lands 6 ns before the window's end: one more.
		{"throttled memstore 17 per 30 s, MaxBurst 16", catalog.ThrottledMem, "17/30s", libs.Default(), idleThen(60), 0, []int64{34}},
		// The Redis store reads the server's TIME in microseconds, which
		// rounds that 6 ns away.
		{"throttled go-redis store 17 per 30 s, MaxBurst 16", catalog.ThrottledRedis, "17/30s", libs.Default(), idleThen(60), 0, []int64{33}},
		{"ulule Redis store 5 per s across a window's end", catalog.UluleRedis, "5/1s", libs.Default(), straddle(5), 0, []int64{9}},
		{"INCR fixed windows 5 per s across an edge", catalog.FixedWindow, "5/1s", libs.Default(), straddle(5), 0, []int64{9}},
		{"timestamp members: 30 calls in one millisecond", catalog.TimestampMember, "5/1s", libs.Default(), workload.Arrivals{Kind: workload.AllAtOnce}, 30, []int64{30}},
		{"two round trips 500µs apart: 30 calls at once", catalog.TwoTrips, "5/1s", libs.Config{RoundTrip: 500 * time.Microsecond}, workload.Arrivals{Kind: workload.AllAtOnce}, 30, []int64{30}},
		{"the guide's script keeps 5 per s on an exact clock", catalog.GuideScript, "5/1s", libs.Default(), idleThen(30), 0, []int64{5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := exact(t, tt.strategy, tt.rules, tt.cfg, 0, tt.arr, tt.callers, 0)
			for i, rr := range res.Rules {
				assert.Equal(t, tt.maxInWin[i], rr.MaxInWindow, "%v: max in window; sends %v", rr.Rule, res.Sends[:min(len(res.Sends), 40)])
			}
		})
	}
}
