package plots

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

// TestCostOccupancy: with costs, every send's step holds the sum of the
// costs in its window up to it (a direct sum over the log), from any start;
// the step is over the limit exactly when the checker finds the send breaks
// the cost rule, and the timeline marks those sends and no others.
func TestCostOccupancy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		w := time.Duration(1 + rng.IntN(40))
		b := rule.Boundary(trial % 2)
		times := randomTimes(rng, 1+rng.IntN(120), int64(w))
		limit := 1 + rng.IntN(9)
		costs := make([]int64, len(times))
		for i := range costs {
			costs[i] = []int64{0, 1, int64(limit), int64(limit) + 1, rng.Int64N(4)}[rng.IntN(5)]
		}
		r := rule.Rule{Limit: limit, Window: w, Unit: "tokens"}
		var maxIn int64
		broke := make([]bool, len(times))
		c := checker.New(checker.Config{Rules: []rule.Rule{r}, Boundary: b,
			OnViolation: func(_ int, v checker.Violation) { broke[v.Index] = true }})
		for i, at := range times {
			require.NoError(t, c.ObserveCost(at, int64(i), []int64{costs[i]}))
		}
		maxIn = c.Report().Rules[0].MaxInWindow
		start := rng.IntN(len(times))
		for st := range CostOccupancyFrom(times, costs, w, b, start) {
			if st.Send < 0 {
				continue
			}
			var want int64
			for j, s := range times[:st.Send+1] {
				if b.Within(time.Duration(st.At-s), w) {
					want += costs[j]
				}
			}
			require.Equal(t, want, st.Count, "trial %d: send %d: units in its window", trial, st.Send)
			require.Equal(t, broke[st.Send], st.Count > int64(limit), "trial %d: send %d against the checker", trial, st.Send)
		}
		s, err := TimelineSeries(TimelineInput{Times: times, Costs: map[string][]int64{"tokens": costs}, Rules: []rule.Rule{r}, Boundary: b}, 1<<20)
		require.NoError(t, err)
		var marked []int64
		for _, m := range s.Rules[0].Markers {
			marked = append(marked, m.Send)
		}
		var want []int64
		for i, v := range broke {
			if v {
				want = append(want, int64(i))
			}
		}
		require.Equal(t, want, marked, "trial %d: the timeline marks the checker's violations", trial)
		require.Equal(t, maxIn, s.Rules[0].Peak, "trial %d: the peak is the checker's fullest window", trial)
	}
}

// TestTimelineNeedsCosts: a cost rule without a cost per send is refused
// rather than drawn as calls.
func TestTimelineNeedsCosts(t *testing.T) {
	times := []int64{1, 2, 3}
	_, err := TimelineSeries(TimelineInput{Times: times, Rules: []rule.Rule{{Limit: 5, Window: 10, Unit: "tokens"}}}, 100)
	require.ErrorContains(t, err, "no tokens cost for each send")
}
