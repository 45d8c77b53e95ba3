package simulate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/workload"
)

// TestCostsRefusedAndJudged: a call costing more than a cost rule's limit
// is refused at once and counted, never waited for; the others are judged
// in the rule's unit, their costs sorted with their sends.
func TestCostsRefusedAndJudged(t *testing.T) {
	rules, err := rule.ParseList("4/1s, 100 tokens/1s")
	require.NoError(t, err)
	s := &workload.Scenario{Name: "c", Rules: rules, Strategies: []string{"sequential", "combined"}, Callers: 200, Workers: 2,
		Arrivals: workload.Arrivals{Kind: workload.AllAtOnce}, Seed: 3,
		SendDelay: []workload.Dist{{Kind: workload.Uniform, A: 0, B: 2 * time.Millisecond}},
		Costs:     []workload.UnitCost{{Unit: "tokens", Dist: workload.Dist{Kind: workload.Uniform, A: 0, B: 130}}}}
	res, err := Run(s, Options{})
	require.NoError(t, err)
	costs := s.DrawCosts(s.Seed, s.Callers)
	over := 0
	for _, c := range costs {
		if c > 100 {
			over++
		}
	}
	require.Positive(t, over)
	for _, st := range res.Strategies {
		assert.Equal(t, over, st.Refused, st.Name)
		assert.Len(t, st.Sends, s.Callers-over, st.Name)
		require.Len(t, st.SendCosts, len(st.Sends), st.Name)
		var sum, want int64
		for _, c := range st.SendCosts {
			sum += c
		}
		for _, c := range costs {
			if c <= 100 {
				want += c
			}
		}
		assert.Equal(t, want, sum, "%s: every admitted call's cost is kept", st.Name)
		assert.LessOrEqual(t, st.Rules[1].MaxInWindow, int64(100)+130, st.Name)
	}
	assert.Zero(t, res.Strategies[1].RecordViolations(), "combined keeps its own admissions")
}

// TestSortSendsKeepsCosts: sorting the sends and the admissions by time
// carries each one's costs with it (two units a call here).
func TestSortSendsKeepsCosts(t *testing.T) {
	res := StrategyResult{Sends: []int64{30, 10, 20, 10}, SendWorkers: []int32{0, 1, 0, 1},
		SendCosts: []int64{3, 33, 1, 11, 2, 22, 4, 44}, Admissions: []int64{25, 5, 15, 6}}
	adm := (&simRun{}).sortSends(&res, []int64{3, 30, 1, 10, 2, 20, 4, 40}, 2)
	assert.Equal(t, []int64{10, 10, 20, 30}, res.Sends)
	assert.Equal(t, []int64{1, 11, 4, 44, 2, 22, 3, 33}, res.SendCosts)
	assert.Equal(t, []int64{5, 6, 15, 25}, res.Admissions)
	assert.Equal(t, []int64{1, 10, 4, 40, 2, 20, 3, 30}, adm)
}
