package plots

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/oracle"
	"github.com/rlcheck/rlcheck/rule"
)

// TestEveryKindMarksTheOraclesViolations: a timeline of a fixed, a
// first-call or a bucket rule, calls or costs, marks exactly the sends the
// brute-force oracle finds violating, and the peak of a fixed or
// first-call rule is the oracle's fullest window. Sends at equal instants
// and at exact window edges are drawn often.
func TestEveryKindMarksTheOraclesViolations(t *testing.T) {
	kinds := []rule.Rule{
		{Limit: 4, Window: 100, Kind: rule.Fixed},
		{Limit: 4, Window: 100, Kind: rule.FirstCall},
		{Limit: 2, Window: 100, Kind: rule.Bucket, Burst: 4},
		{Limit: 30, Window: 100, Kind: rule.Fixed, Unit: "tokens"},
		{Limit: 20, Window: 100, Kind: rule.FirstCall, Unit: "tokens"},
		{Limit: 10, Window: 100, Kind: rule.Bucket, Burst: 25, Unit: "tokens"},
	}
	for trial := range 300 {
		rng := rand.New(rand.NewPCG(uint64(trial), 5))
		r := kinds[trial%len(kinds)]
		n := 5 + rng.IntN(60)
		times, costs := make([]int64, n), make([]int64, n)
		at := int64(rng.IntN(300))
		for i := range times {
			if rng.IntN(3) > 0 {
				at += []int64{0, 1, 25, 50, 100}[rng.IntN(5)]
			}
			times[i], costs[i] = at, int64(rng.IntN(12))
		}
		in := TimelineInput{Times: times, Rules: []rule.Rule{r}}
		sends := make([]oracle.Send, n)
		for i := range sends {
			sends[i] = oracle.Send{T: times[i], Costs: map[string]int64{"tokens": costs[i]}}
		}
		if r.Unit != "" {
			in.Costs = map[string][]int64{"tokens": costs}
		}
		s, err := TimelineSeries(in, 10_000)
		require.NoError(t, err)
		o := oracle.Rule{N: int64(r.Limit), W: int64(r.Window), Unit: r.Unit, Burst: int64(r.Burst),
			Kind: map[rule.Kind]oracle.Kind{rule.Fixed: oracle.Fixed, rule.FirstCall: oracle.FirstCall, rule.Bucket: oracle.Bucket}[r.Kind]}
		v := oracle.Judge(sends, o, false)
		var marked, want []int64
		for _, m := range s.Rules[0].Markers {
			marked = append(marked, m.Send)
		}
		for _, i := range v.Violations {
			want = append(want, int64(i))
		}
		require.Equal(t, want, marked, "trial %d, %s: %v %v", trial, r, times, costs)
		if v.Max != nil {
			require.Equal(t, v.Max.Int64(), s.Rules[0].Peak, "trial %d, %s: the peak is the oracle's fullest window", trial, r)
		}
	}
}
