package scenarios

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// kindSeeds is the seeds of the provider-kind tests: 1000 as
// docs/simulate.md reports, fewer under the race detector.
func kindSeeds() int {
	if raceEnabled {
		return 100
	}
	return 1000
}

// sendsWithin counts the sends less than d after the first.
func sendsWithin(sends []int64, d time.Duration) int {
	n := 0
	for _, s := range sends {
		if s-sends[0] < int64(d) {
			n++
		}
	}
	return n
}

// TestProviderFixedOverManySeeds: on every seed, a limiter that keeps the
// fixed rule sends the burst's 2N calls within the window after the first,
// N in each fixed window (the full allowance); the sliding log of the
// same N/W sends N in that time, half; neither ever breaks the rule.
func TestProviderFixedOverManySeeds(t *testing.T) {
	s, err := Shipped("provider-fixed")
	require.NoError(t, err)
	r := s.Rules[0]
	require.Equal(t, rule.Fixed, r.Kind)
	require.Equal(t, 2*r.Limit, s.Callers, "a burst of 2N")
	for seed := range uint64(kindSeeds()) {
		s.Seed = seed + 1
		res, err := simulate.Run(&s.Scenario, simulate.Options{})
		require.NoError(t, err)
		for _, st := range res.Strategies {
			require.Zero(t, st.Violations(), "%s seed %d", st.Name, s.Seed)
			within := sendsWithin(st.Sends, r.Window)
			switch st.Name {
			case "combined":
				require.Equal(t, 2*r.Limit, within, "seed %d", s.Seed)
				edge := st.Sends[0] - st.Sends[0]%int64(r.Window) + int64(r.Window)
				require.Equal(t, r.Limit, sendsWithin(st.Sends, time.Duration(edge-st.Sends[0])), "N before the edge, seed %d", s.Seed)
			case "combined-sliding":
				require.Equal(t, r.Limit, within, "seed %d", s.Seed)
			}
		}
	}
}

// TestProviderBucketOverManySeeds: against a bucket of burst B < N, the
// sliding log of N/W overfills the bucket in most runs, the bucket-aware
// limiter in none.
func TestProviderBucketOverManySeeds(t *testing.T) {
	s, err := Shipped("provider-bucket")
	require.NoError(t, err)
	require.Equal(t, rule.Bucket, s.Rules[0].Kind)
	require.Less(t, s.Rules[0].Burst, s.Rules[0].Limit)
	runs := kindSeeds()
	rs, err := simulate.RunSeeds(&s.Scenario, runs, simulate.Options{})
	require.NoError(t, err)
	for _, st := range rs.Strategies {
		switch st.Name {
		case "combined":
			assert.Zero(t, st.RunsWithViolations, st.Name)
		case "combined-sliding":
			assert.Greater(t, 2*st.RunsWithViolations, runs, "%s violates in most runs", st.Name)
		}
	}
}

// kindScenario is rules of every kind on a path to the provider with
// delays from 1 to 5 ms, for the strategies that keep kinds: the
// in-memory ones, and with firstCall false (rules the script keeps) the
// Redis ones on the in-process Redis.
func kindScenario(t *testing.T, margin time.Duration, firstCall bool) *workload.Scenario {
	third := "40 tokens/2s first-call"
	if !firstCall {
		third = "40 tokens/2s fixed"
	}
	s, err := Parse("kinds.yaml", []byte(fmt.Sprintf(`rules: [10/s fixed at 250ms, 10/s burst 4, %s, 30/5s]
strategies: [combined]
callers: 120
workers: 2
max_in_flight: 4
arrivals: {pattern: poisson, rate: 14}
costs:
  tokens: uniform(0, 5)
lateness: uniform(100us, 3ms)
op_cost: uniform(3us, 6us)
send_delay: uniform(1ms, 5ms)
margin: %v
`, third, margin)), files)
	require.NoError(t, err)
	var names []string
	for _, st := range catalog.Strategies() {
		if st.Kinds && st.CheckAll && (!st.NeedsRedis || !firstCall) {
			names = append(names, st.Name)
		}
	}
	s.Strategies = names
	return &s.Scenario
}

// TestKindStrategiesKeepTheProvider: every strategy that keeps kinds and
// must never violate keeps rules of every kind at the provider over 200
// seeds, given a margin as wide as the longest delay; with none, the
// delays break them.
func TestKindStrategiesKeepTheProvider(t *testing.T) {
	for _, firstCall := range []bool{true, false} {
		seeds := 200
		if !firstCall {
			seeds = 4 // every call runs the script
		}
		rs, err := simulate.RunSeeds(kindScenario(t, 5*time.Millisecond, firstCall), seeds, simulate.Options{})
		require.NoError(t, err)
		require.NotEmpty(t, rs.Strategies)
		for _, st := range rs.Strategies {
			assert.Zero(t, st.RunsWithViolations, st.Name)
			assert.Zero(t, st.RunsWithRecordViolations, st.Name)
		}
		rs, err = simulate.RunSeeds(kindScenario(t, 0, firstCall), seeds, simulate.Options{})
		require.NoError(t, err)
		for _, st := range rs.Strategies {
			assert.Positive(t, st.RunsWithViolations, "%s with no margin", st.Name)
		}
	}
}
