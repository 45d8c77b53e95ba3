package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOverridesApply(t *testing.T) {
	s, err := Load("seed")
	require.NoError(t, err)
	seed := uint64(7)
	require.NoError(t, Overrides{Seed: &seed, Strategies: " combined, ,sequential", Lateness: "0", OpCost: "2ms"}.Apply(s))
	assert.Equal(t, uint64(7), s.Scenario.Seed)
	assert.Equal(t, []string{"combined", "sequential"}, s.Scenario.Strategies)
	assert.Equal(t, "0s", s.Scenario.Lateness.String())
	assert.Equal(t, time.Duration(2*time.Millisecond).String(), s.Scenario.OpCost.String())

	before, err := Load("seed")
	require.NoError(t, err)
	after, err := Load("seed")
	require.NoError(t, err)
	require.NoError(t, Overrides{}.Apply(after))
	assert.Equal(t, before.Scenario.Strategies, after.Scenario.Strategies, "no override leaves the scenario's own")
	assert.Equal(t, before.Scenario.Seed, after.Scenario.Seed)

	for _, o := range []Overrides{{Lateness: "uniform(3ms)"}, {OpCost: "fast"}} {
		assert.Error(t, o.Apply(after), "%+v", o)
	}
}
