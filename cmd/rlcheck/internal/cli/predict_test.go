package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/realrun"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/simulate"
)

// TestPredictionIsTheSimulatorsSummary: the real-clock runner's
// prediction, built from the simulator's per-seed counts (Simulate),
// gives every strategy the share of violating runs and each rule's mean
// and maximum that the simulator's own summary (RunSeeds) gives.
func TestPredictionIsTheSimulatorsSummary(t *testing.T) {
	scn, err := scenarios.Shipped("provider-edge")
	require.NoError(t, err)
	s := &scn.Scenario
	const seeds = 30
	pred, err := realrun.Predict(Simulate, s, seeds, nil)
	require.NoError(t, err)
	rr, err := simulate.RunSeeds(s, seeds, simulate.Options{})
	require.NoError(t, err)
	require.Len(t, pred.Strategies, len(rr.Strategies))
	violating := 0
	for i, st := range rr.Strategies {
		p := pred.Strategies[i]
		assert.Equal(t, st.Name, p.Name)
		assert.Equal(t, st.RunsWithViolations, p.RunsWithViolations, "%s: runs with violations", st.Name)
		violating += st.RunsWithViolations
		require.Len(t, p.Rules, len(st.Rules))
		for k, r := range st.Rules {
			assert.Equal(t, r.Mean, p.Rules[k].Mean, "%s rule %d: mean", st.Name, k)
			assert.Equal(t, r.Max, p.Rules[k].Max, "%s rule %d: max", st.Name, k)
			assert.Equal(t, r.P50, p.Rules[k].P50, "%s rule %d: p50", st.Name, k)
		}
	}
	assert.Positive(t, violating, "a scenario where some strategy violates")
}
