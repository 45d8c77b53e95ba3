package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/workload"
)

func TestScenarioFlagsApply(t *testing.T) {
	s, err := scenarios.Load("seed")
	require.NoError(t, err)
	f := ScenarioFlags{Seed: OptionalUint{Value: 7, Given: true}, Strategies: " combined, ,sequential", Lateness: "0", OpCost: "2ms"}
	require.NoError(t, f.Apply(&s.Scenario))
	assert.Equal(t, uint64(7), s.Scenario.Seed)
	assert.Equal(t, []string{"combined", "sequential"}, s.Scenario.Strategies)
	assert.Equal(t, "0s", s.Scenario.Lateness.String())
	assert.Equal(t, time.Duration(2*time.Millisecond).String(), s.Scenario.OpCost.String())

	before, err := scenarios.Load("seed")
	require.NoError(t, err)
	after, err := scenarios.Load("seed")
	require.NoError(t, err)
	require.NoError(t, (&ScenarioFlags{}).Apply(&after.Scenario))
	assert.Equal(t, before.Scenario.Strategies, after.Scenario.Strategies, "no flag leaves the scenario's own")
	assert.Equal(t, before.Scenario.Seed, after.Scenario.Seed)
}

// TestScenarioFlagErrorsNameTheFlag: the library reports the field, the
// command line reads the flag, in the words the commands always used.
func TestScenarioFlagErrorsNameTheFlag(t *testing.T) {
	var sc workload.Scenario
	err := (&ScenarioFlags{Lateness: "uniform(3ms)"}).Apply(&sc)
	require.Error(t, err)
	assert.Regexp(t, `^--lateness: `, err.Error())
	err = (&ScenarioFlags{OpCost: "fast"}).Apply(&sc)
	require.Error(t, err)
	assert.Regexp(t, `^--op-cost: `, err.Error())

	sc.Strategies = []string{"combined", "gated"}
	_, err = sc.Pick("redis")
	var fe *workload.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "strategy", fe.Field)
	assert.Equal(t, `strategy "redis" is not among the strategies run (combined, gated)`, err.Error(), "the library's words")
	assert.Equal(t, `--strategy "redis" is not among the strategies run (combined, gated)`, FlagError(err).Error(), "the command's words")
}

// TestCostlyNoteNamesTheSeedsFlag: a real-clock run's note on a slow
// prediction names the strategies that make it slow and the flag.
func TestCostlyNoteNamesTheSeedsFlag(t *testing.T) {
	var b bytes.Buffer
	CostlyNote(&b, &workload.Scenario{Strategies: []string{"combined"}}, 1000)
	assert.Empty(t, b.String(), "no costly strategy")
	CostlyNote(&b, &workload.Scenario{Strategies: []string{"combined", "redis-rate"}}, 100)
	assert.Equal(t, "predicting over 100 seeds; redis-rate run every try on an embedded Redis of their own, which is slow (--seeds sets the count)\n", b.String())
}
