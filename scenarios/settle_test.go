package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/simulate"
)

// settleSeeds is how many seeds TestLLMSettle runs in memory and on the
// embedded Redis: a sample in go test, more with RLCHECK_FULL=1, -seeds
// for the acceptance run (go test ./scenarios -run LLMSettle -args -seeds
// 1000).
func settleSeeds() (inMemory, embedded int) {
	switch {
	case *acceptSeeds > 0:
		return *acceptSeeds, *acceptSeeds
	case testrun.Full():
		return 200, 50
	case testing.Short() || raceEnabled:
		return 3, 1
	}
	return 20, 3
}

// TestLLMSettle: over every seed, the checker finds no send that
// overfills the provider's windows under the reserve limiters, in memory
// and in the script on the embedded Redis; the post-call limiter
// overfills the token window on every seed, so the scenario can fail.
func TestLLMSettle(t *testing.T) {
	s, err := Shipped("llm-settle")
	require.NoError(t, err)
	require.True(t, s.Reserved(), "llm-settle settles its calls")
	mem, emb := settleSeeds()
	for _, c := range []struct {
		strategy string
		seeds    int
	}{{"reserve", mem}, {"redis-reserve", emb}, {"combined", mem}} {
		rs, err := simulate.RunSeeds(&s.Scenario, c.seeds, simulate.Options{Strategies: []string{c.strategy}})
		require.NoError(t, err, c.strategy)
		assert.Zero(t, rs.Strategies[0].RunsWithViolations, "%s: runs with violations over %d seeds", c.strategy, c.seeds)
		assert.EqualValues(t, 400, rs.Strategies[0].MeanSends, "%s: every caller sent", c.strategy)
	}
	rs, err := simulate.RunSeeds(&s.Scenario, mem, simulate.Options{Strategies: []string{"post-call"}})
	require.NoError(t, err)
	pc := rs.Strategies[0]
	assert.Equal(t, mem, pc.RunsWithViolations, "post-call: runs with violations over %d seeds", mem)
	tokens := pc.Rules[1]
	assert.Equal(t, "90000 tokens/1m", tokens.Rule.String())
	assert.Greater(t, tokens.P50, int64(50), "post-call: median violations of the token window")
	assert.Zero(t, pc.Rules[0].Max, "post-call counts the requests at admission: 500/1m holds")
}

// TestLLMSettleReserveAdmitsMore: settling to the usage frees the room an
// estimate held, so the reserve limiter sends the 400 calls in much less
// time than combined, which keeps every estimate for good.
func TestLLMSettleReserveAdmitsMore(t *testing.T) {
	s, err := Shipped("llm-settle")
	require.NoError(t, err)
	r, err := simulate.Run(&s.Scenario, simulate.Options{Strategies: []string{"combined", "reserve"}})
	require.NoError(t, err)
	combined, reserve := r.Strategies[0], r.Strategies[1]
	assert.Less(t, 10*reserve.Duration, 7*combined.Duration, "reserve %v against combined %v", reserve.Duration, combined.Duration)
}
