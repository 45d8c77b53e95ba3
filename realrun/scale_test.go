package realrun

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/workload"
)

func TestScale(t *testing.T) {
	s := &workload.Scenario{
		Name:         "x",
		Rules:        []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}},
		Arrivals:     workload.Arrivals{Kind: workload.Poisson, Start: 100 * time.Millisecond, Rate: 8},
		CallDuration: workload.Dist{Kind: workload.Uniform, A: 10 * time.Millisecond, B: 30 * time.Millisecond},
		Lateness:     workload.Dist{Kind: workload.Uniform, A: 100 * time.Microsecond, B: 3 * time.Millisecond},
		Skew:         []time.Duration{0, -4 * time.Millisecond},
		Timeout:      2 * time.Second,
	}
	c, err := Scale(s, 4)
	require.NoError(t, err)
	assert.Equal(t, []rule.Rule{{Limit: 5, Window: 250 * time.Millisecond}, {Limit: 12, Window: 750 * time.Millisecond}}, c.Rules)
	assert.Equal(t, 25*time.Millisecond, c.Arrivals.Start)
	assert.Equal(t, 32.0, c.Arrivals.Rate)
	assert.Equal(t, 500*time.Millisecond, c.Timeout)
	assert.Equal(t, workload.Dist{Kind: workload.Uniform, A: 2500 * time.Microsecond, B: 7500 * time.Microsecond}, c.CallDuration)
	assert.Equal(t, []time.Duration{0, -time.Millisecond}, c.Skew)
	assert.Equal(t, s.Lateness, c.Lateness, "lateness belongs to the machine")
	assert.Equal(t, time.Second, s.Rules[0].Window, "Scale changed its argument")
	assert.Equal(t, -4*time.Millisecond, s.Skew[1], "Scale changed its argument")
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1), 1e10} {
		_, err := Scale(s, bad)
		assert.Error(t, err, "speed %v", bad)
	}
}

// TestArrivalsMatchSimulate: on an exact virtual clock with rules that
// never bind, the simulator sends at the arrival instants, which must be
// the ones the real driver starts its callers at.
func TestArrivalsMatchSimulate(t *testing.T) {
	for _, a := range []workload.Arrivals{
		{Kind: workload.Poisson, Rate: 50, Start: time.Millisecond},
		{Kind: workload.Interval, Every: 7 * time.Millisecond},
		{Kind: workload.AllAtOnce},
		{Kind: workload.Replay, Start: 5, Times: []int64{100, 100, 250, 900}},
	} {
		s := &workload.Scenario{Name: "arrivals", Rules: []rule.Rule{{Limit: 1 << 20, Window: time.Second}},
			Strategies: []string{"combined"}, Callers: 200, Workers: 1, Arrivals: a, Seed: 7}
		if a.Kind == workload.Replay {
			s.Callers = 0 // the replayed instants set them
		}
		res, err := simulate.Run(s, simulate.Options{})
		require.NoError(t, err)
		require.Equal(t, res.Strategies[0].Sends, s.ArrivalTimes(s.Seed), "%s: arrivals against the simulator's sends", a.Kind)
	}
}
