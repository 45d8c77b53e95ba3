package realrun

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/workload"
)

// TestRunMetersCosts: on the real clock each caller acquires with its
// costs, drawn from the seed as the simulator draws them; a call costing
// more than a rule's limit is refused at once; combined keeps the tokens
// rule, judged in tokens on the measured sends. The sends follow the
// admissions by the machine's timers: a margin of 10 ms, a tenth of the
// windows, keeps a loaded machine's drift from reading as the limiter's
// violation (without it, a loaded CI run judged 156 tokens in one window).
func TestRunMetersCosts(t *testing.T) {
	rules, err := rule.ParseList("6/100ms, 100 tokens/100ms")
	require.NoError(t, err)
	s := &workload.Scenario{Name: "c", Rules: rules, Strategies: []string{"combined"}, Callers: 24, Workers: 1,
		Arrivals: workload.Arrivals{Kind: workload.AllAtOnce}, Seed: 5,
		Costs: []workload.UnitCost{{Unit: "tokens", Dist: workload.Dist{Kind: workload.Uniform, A: 0, B: 110}}}}
	// The margin covers the send drift of a loaded machine's timers (10 ms
	// was seen short under load).
	res, err := Run(context.Background(), s, Options{Margin: 40 * time.Millisecond})
	require.NoError(t, err)
	costs := s.DrawCosts(s.Seed, s.Callers)
	over, want := 0, int64(0)
	for _, c := range costs {
		if c > 100 {
			over++
		} else {
			want += c
		}
	}
	st := res.Strategies[0]
	assert.Equal(t, over, st.Refused)
	require.Len(t, st.Sends, s.Callers-over)
	require.Len(t, st.SendCosts, len(st.Sends))
	var sum int64
	for _, c := range st.SendCosts {
		sum += c
	}
	assert.Equal(t, want, sum, "every admitted call's tokens are judged")
	assert.Zero(t, st.Rules[1].Violations, "combined keeps the tokens rule")
	assert.LessOrEqual(t, st.Rules[1].MaxInWindow, int64(100))
	assert.Positive(t, st.Rules[1].MaxInWindow)
}

// TestRunRedisMetersCosts: the Redis strategy on the real clock takes each
// call's costs, and its records (the script's instants) carry them: judged
// in tokens, the records keep both rules. (The sends may not, on a busy
// machine: their drift from the records is the machine's timers.)
func TestRunRedisMetersCosts(t *testing.T) {
	rules, err := rule.ParseList("6/100ms, 100 tokens/100ms")
	require.NoError(t, err)
	s := &workload.Scenario{Name: "c", Rules: rules, Strategies: []string{"redis"}, Callers: 24, Workers: 1,
		Arrivals: workload.Arrivals{Kind: workload.AllAtOnce}, Seed: 5,
		Costs: []workload.UnitCost{{Unit: "tokens", Dist: workload.Dist{Kind: workload.Uniform, A: 0, B: 100}}}}
	res, err := Run(context.Background(), s, Options{Margin: 2 * time.Millisecond})
	require.NoError(t, err)
	st := res.Strategies[0]
	require.Len(t, st.Sends, s.Callers)
	require.Len(t, st.RecordViolations, 2, "the records are judged, costs included")
	assert.Equal(t, []int64{0, 0}, st.RecordViolations)
	assert.Positive(t, st.Rules[1].MaxInWindow, "the sends are judged in tokens")
}

// TestRunSettles: on the real clock a scenario with actual costs is
// settled by the provider when each call ends, measured; the reserve
// limiter reserves the estimates and settles them, and keeps the tokens
// rule; the post-call limiter, which charges nothing while a call is in
// flight, lets four calls of 40 to 50 tokens be in flight at once and
// overfills it.
func TestRunSettles(t *testing.T) {
	rules, err := rule.ParseList("100 tokens/200ms")
	require.NoError(t, err)
	s := &workload.Scenario{Name: "settle", Rules: rules, Strategies: []string{"reserve", "post-call"}, Callers: 10, Workers: 1,
		Arrivals: workload.Arrivals{Kind: workload.Interval, Every: 40 * time.Millisecond}, Seed: 3,
		CallDuration: workload.Dist{Kind: workload.Fixed, A: 150 * time.Millisecond},
		Costs:        []workload.UnitCost{{Unit: "tokens", Dist: workload.Dist{Kind: workload.Uniform, A: 40, B: 50}}},
		Actual:       []workload.UnitCost{{Unit: "tokens", Dist: workload.Dist{Kind: workload.Uniform, A: 5, B: 10}}}}
	res, err := Run(context.Background(), s, Options{Margin: 2 * time.Millisecond})
	require.NoError(t, err)
	for _, st := range res.Strategies {
		require.Len(t, st.Sends, s.Callers, st.Name)
		require.Len(t, st.SendSettled, s.Callers, st.Name)
		for i, u := range st.SendSettled {
			assert.GreaterOrEqual(t, u, st.Sends[i]+int64(150*time.Millisecond), "%s: send %d settled when its call ended", st.Name, i)
			assert.LessOrEqual(t, st.SendActuals[i], int64(10), st.Name)
		}
	}
	reserve, postCall := res.Strategies[0], res.Strategies[1]
	assert.Zero(t, reserve.Rules[0].Violations, "reserve keeps the tokens rule")
	assert.Positive(t, postCall.Rules[0].Violations, "post-call overfills it")
}
