package libs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

const (
	ms  = int64(time.Millisecond)
	sec = int64(time.Second)
)

// idleThen is one call at 0, then n callers at 10 s: every bucket is full
// and every window empty when the burst comes.
func idleThen(n int) workload.Arrivals {
	times := []int64{0}
	for range n {
		times = append(times, 10*sec)
	}
	return workload.Arrivals{Kind: workload.Replay, Times: times}
}

// exact runs one library strategy on the exact virtual clock (no lateness,
// no cost), so every send lands on the instant the library computes.
func exact(t *testing.T, name, rules string, cfg libs.Config, b rule.Boundary, arr workload.Arrivals, callers int, timeout time.Duration) simulate.StrategyResult {
	t.Helper()
	rs, err := rule.ParseList(rules)
	require.NoError(t, err)
	st, ok := catalog.LibStrategy(name, cfg)
	require.True(t, ok, "no strategy %s", name)
	sc := &workload.Scenario{Name: "pin", Rules: rs, Boundary: b, Strategies: []string{name}, Workers: 1,
		Callers: callers, Arrivals: arr, Timeout: timeout}
	require.NoError(t, catalog.Validate(sc))
	res, err := simulate.RunStrategy(sc, st, 1, simulate.Options{})
	require.NoError(t, err)
	return res
}

// TestPinnedInstants pins, at exact virtual instants, what each library
// lets through when configured as users write it.
func TestPinnedInstants(t *testing.T) {
	slack0 := libs.Config{Slack: 0}
	tests := []struct {
		name     string
		strategy string
		rules    string
		cfg      libs.Config
		boundary rule.Boundary
		arr      workload.Arrivals
		callers  int
		// first sends after the idle spell (or from 0), in ms
		sends      []int64
		maxInWin   []int64
		violations []int64
	}{
		{
			name:     "rate.NewLimiter(5, 5) lets 9 sends into one half-open second after idle",
			strategy: catalog.XRateChained, rules: "5/1s", cfg: libs.Default(), arr: idleThen(12),
			sends:    []int64{10000, 10000, 10000, 10000, 10000, 10200, 10400, 10600, 10800, 11000},
			maxInWin: []int64{9}, violations: []int64{4},
		},
		{
			name:     "reserve-all is the same bucket: 9 in one second after idle",
			strategy: catalog.XRateReserveAll, rules: "5/1s", cfg: libs.Default(), arr: idleThen(12),
			sends:    []int64{10000, 10000, 10000, 10000, 10000, 10200, 10400, 10600, 10800, 11000},
			maxInWin: []int64{9}, violations: []int64{4},
		},
		{
			name:     "chained 5/1s and 12/3s with burst N: 19 sends in one 3 s window",
			strategy: catalog.XRateChained, rules: "5/1s,12/3s", cfg: libs.Default(), arr: idleThen(30),
			sends:    []int64{10000, 10000, 10000, 10000, 10000, 10200, 10400, 10600, 10800, 11000},
			maxInWin: []int64{9, 19}, violations: []int64{4, 18},
		},
		{
			name:     "rate.NewLimiter(5, 1) spaces sends exactly 200 ms: clean half-open",
			strategy: catalog.XRateChained, rules: "5/1s", cfg: libs.Config{Burst: 1}, arr: idleThen(10),
			sends:    []int64{10000, 10200, 10400, 10600, 10800, 11000, 11200, 11400, 11600, 11800},
			maxInWin: []int64{5}, violations: []int64{0},
		},
		{
			name:     "rate.NewLimiter(5, 1) breaks a closed window: send 6 is exactly 1 s after send 1",
			strategy: catalog.XRateChained, rules: "5/1s", cfg: libs.Config{Burst: 1}, boundary: rule.Closed, arr: idleThen(10),
			sends:    []int64{10000, 10200, 10400, 10600, 10800, 11000, 11200, 11400, 11600, 11800},
			maxInWin: []int64{6}, violations: []int64{5},
		},
		{
			name:     "ratelimit.New(5) banks 10 permissions of slack: 11 at once after idle, 15 in one second",
			strategy: catalog.UberRatelimit, rules: "5/1s", cfg: libs.Default(), arr: idleThen(16),
			sends:    []int64{10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10200, 10400, 10600, 10800, 11000},
			maxInWin: []int64{15}, violations: []int64{10},
		},
		{
			name:     "uber 5/1s then 12/3s: 11 at once, then 250 ms apart: 14 in one second, 22 in three",
			strategy: catalog.UberRatelimit, rules: "5/1s,12/3s", cfg: libs.Default(), arr: idleThen(30),
			sends:    []int64{10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10000, 10250, 10500, 10750, 11000},
			maxInWin: []int64{14, 22}, violations: []int64{9, 10},
		},
		{
			name:     "a fresh ratelimit.New(5) has no slack yet: 200 ms apart from the first call",
			strategy: catalog.UberRatelimit, rules: "5/1s", cfg: libs.Default(), arr: workload.Arrivals{Kind: workload.AllAtOnce}, callers: 7,
			sends:    []int64{0, 200, 400, 600, 800, 1000, 1200},
			maxInWin: []int64{5}, violations: []int64{0},
		},
		{
			name:     "ratelimit.New(5, WithoutSlack) after idle: one send, then 200 ms apart",
			strategy: catalog.UberRatelimit, rules: "5/1s", cfg: slack0, arr: idleThen(7),
			sends:    []int64{10000, 10200, 10400, 10600, 10800, 11000, 11200},
			maxInWin: []int64{5}, violations: []int64{0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := exact(t, tt.strategy, tt.rules, tt.cfg, tt.boundary, tt.arr, tt.callers, 0)
			sends := res.Sends
			if tt.arr.Kind == workload.Replay {
				sends = sends[1:] // the call before the idle spell
			}
			got := make([]int64, 0, len(tt.sends))
			for _, s := range sends[:min(len(sends), len(tt.sends))] {
				require.Zero(t, s%ms, "send at %d ns: not on a whole millisecond", s)
				got = append(got, s/ms)
			}
			assert.Equal(t, tt.sends, got, "sends (ms)")
			for i, rr := range res.Rules {
				assert.Equal(t, tt.maxInWin[i], rr.MaxInWindow, "%v: max in window", rr.Rule)
				assert.Equal(t, tt.violations[i], rr.Violations, "%v: violations", rr.Rule)
			}
		})
	}
}

// TestXRateSpacingOneNanosecondShort pins a float rounding in x/time/rate:
// with burst 1 and 5 per second, a caller arriving while the bucket refills
// is let through 199,999,999 ns after the previous one, so an exact clock
// already puts 6 sends in one half-open second (seed 1 of Poisson arrivals
// at 5 per second).
func TestXRateSpacingOneNanosecondShort(t *testing.T) {
	res := exact(t, catalog.XRateChained, "5/1s", libs.Config{Burst: 1}, rule.HalfOpen,
		workload.Arrivals{Kind: workload.Poisson, Rate: 5}, 20, 0)
	minGap := int64(1 << 62)
	for i := 1; i < len(res.Sends); i++ {
		minGap = min(minGap, res.Sends[i]-res.Sends[i-1])
	}
	rr := res.Rules[0]
	assert.Equal(t, int64(199_999_999), minGap, "smallest gap (ns)")
	assert.Equal(t, int64(2), rr.Violations, "violations")
	assert.Equal(t, []int64{1_348_490_151, 3_748_490_151}, rr.ViolationAt, "violations at")
	assert.Equal(t, int64(6), rr.MaxInWindow, "max in window")
}
