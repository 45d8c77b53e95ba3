package simulate

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/metrics"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/workload"
)

// bruteMean integrates the trailing-window occupancy piece by piece
// between every instant where it may change.
func bruteMean(sends []int64, w int64) float64 {
	first, last := sends[0], sends[len(sends)-1]
	if first == last {
		return float64(len(sends))
	}
	pts := []int64{first, last}
	for _, s := range sends {
		for _, p := range []int64{s, s + w} {
			if p > first && p < last {
				pts = append(pts, p)
			}
		}
	}
	slices.Sort(pts)
	var area float64
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		n := 0
		for _, s := range sends {
			if a-w < s && s <= a {
				n++
			}
		}
		area += float64(n) * float64(b-a)
	}
	return area / float64(last-first)
}

func bruteFirstFull(sends []int64, r rule.Rule, b rule.Boundary) int64 {
	for i, t := range sends {
		n := 0
		for j := 0; j <= i; j++ {
			if b.Within(time.Duration(t-sends[j]), r.Window) {
				n++
			}
		}
		if n >= r.Limit {
			return t
		}
	}
	return -1
}

// TestUsageAgainstBruteForce draws send logs full of ties and gaps of
// exactly W and compares the one-pass figures with brute force.
func TestUsageAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for iter := range 500 {
		w := int64(1 + rng.IntN(5))
		r := rule.Rule{Limit: 1 + rng.IntN(4), Window: time.Duration(w)}
		sends := make([]int64, 1+rng.IntN(12))
		for i := 1; i < len(sends); i++ {
			sends[i] = sends[i-1] + []int64{0, w, 1, int64(rng.IntN(8))}[rng.IntN(4)]
		}
		require.InDelta(t, bruteMean(sends, w), metrics.MeanOccupancy(sends, r.Window), 1e-9, "#%d mean %v (sends %v)", iter, r, sends)
		for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
			require.Equal(t, bruteFirstFull(sends, r, b), FirstFull(sends, r, b), "#%d first full %v %v (sends %v)", iter, r, b, sends)
		}
	}
}

func TestBinding(t *testing.T) {
	day := rule.Rule{Limit: 10000, Window: 24 * time.Hour}
	sec := rule.Rule{Limit: 10, Window: time.Second}
	odd := rule.Rule{Limit: 12, Window: 3 * time.Second}
	tests := []struct {
		us   []RuleUsage
		bind int
		say  string
	}{
		{
			[]RuleUsage{
				{Rule: sec, HasStats: true, Waited: 100 * time.Second, WaitShare: 0.1, FirstBound: int64(time.Second), FirstFull: 1},
				{Rule: day, HasStats: true, Waited: 900 * time.Second, WaitShare: 0.9, FirstBound: int64(19*time.Minute + 55*time.Second), FirstFull: 2},
			},
			1, "the daily quota (10000/24h) binds: 90% of the waiting (900.0 s), from 19m55s into the run",
		},
		{
			[]RuleUsage{{Rule: sec, FirstFull: -1, FirstBound: -1}, {Rule: odd, FirstFull: int64(2500 * time.Millisecond), FirstBound: -1}},
			1, "the 12/3s rule binds first: its window filled at 2.5s into the run (no wait figures for this strategy)",
		},
		{
			[]RuleUsage{{Rule: sec, HasStats: true, FirstFull: int64(120 * time.Millisecond), FirstBound: -1}},
			0, "no caller waited; the per-second limit (10/1s) was the first to fill its window, at 120ms into the run",
		},
		{[]RuleUsage{{Rule: sec, FirstFull: -1}}, -1, "no rule binds: no window ever filled"},
	}
	for _, tt := range tests {
		bind, say := Binding(tt.us)
		assert.Equal(t, tt.bind, bind, "Binding index, want %q", tt.say)
		assert.Equal(t, tt.say, say, "Binding text")
	}
}

// TestSimulateNamesBindingRule runs a contract whose daily quota runs out
// within the run: the report must say so in words. combined refuses at once
// the callers whose wait would outlast their timeout, so none waits on the
// quota: it is named as the window that filled first.
func TestSimulateNamesBindingRule(t *testing.T) {
	s := &workload.Scenario{
		Name: "quota", Rules: []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 20, Window: 24 * time.Hour}},
		Strategies: []string{"combined", "xrate-reserve-all"}, Callers: 40, Workers: 1,
		Arrivals: workload.Arrivals{Kind: workload.Interval, Every: 250 * time.Millisecond}, Timeout: 2 * time.Second, Seed: 1,
	}
	res, err := Run(s, Options{})
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, WriteText(&b, res))
	for _, want := range []string{
		"combined           no caller waited; the daily quota (20/24h) was the first to fill its window",
		"xrate-reserve-all  the daily quota (20/24h) binds",
	} {
		assert.Contains(t, b.String(), want, "report")
	}
}
