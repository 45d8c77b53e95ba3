package checker

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

// TestNextAgainstOracles: on random logs of every kind, call and cost
// rules, both boundaries, the instant Next names admits a send of the cost
// asked (the oracle, judging the log with that send appended, finds it
// within the rule), and the nanosecond before it does not: Next is the
// earliest, not an upper bound.
func TestNextAgainstOracles(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for range 1500 {
		grid := int64(1 + rng.IntN(4))
		units := []string{"tokens"}
		var rules []rule.Rule
		for range 1 + rng.IntN(3) {
			rules = append(rules, randomKindRule(rng, grid, []string{"", "tokens"}[rng.IntN(2)]))
		}
		l := randomCostLog(rng, 1+rng.IntN(30), grid, 1, []int64{4})
		b := []rule.Boundary{rule.HalfOpen, rule.Closed}[rng.IntN(2)]
		c := New(Config{Rules: rules, Units: units, Boundary: b})
		for i, at := range l.at {
			require.NoError(t, c.ObserveCost(at, int64(i), l.costs[i]))
		}
		now := l.at[len(l.at)-1] + grid*int64(rng.IntN(3))
		for k, r := range rules {
			cost := int64(1)
			if r.Unit != "" {
				cost = int64(rng.IntN(capacityOf(r) + 2))
			}
			checkNext(t, l, r, b, now, cost, c.Next(k, now, cost))
		}
	}
}

func capacityOf(r rule.Rule) int {
	if r.Kind == rule.Bucket {
		return r.Burst
	}
	return r.Limit
}

// checkNext holds next, Next's answer for a send of cost at or after now,
// to the oracle's verdict on the log with that send appended.
func checkNext(t *testing.T, l costLog, r rule.Rule, b rule.Boundary, now, cost, next int64) {
	t.Helper()
	what := fmt.Sprintf("%v (%v) cost %d from %d on %v %v", r, b, cost, now, l.at, l.costs)
	unit := -1
	if r.Unit != "" {
		unit = 0
	}
	breaks := func(at int64) bool {
		x := costLog{at: append(slices.Clone(l.at), at), costs: append(slices.Clone(l.costs), []int64{cost})}
		v := kindOracle(x, r, unit, b)
		return len(v.viol) > 0 && v.viol[len(v.viol)-1] == int64(len(l.at))
	}
	if int(cost) > capacityOf(r) {
		require.Equal(t, Never, next, what)
		return
	}
	require.GreaterOrEqual(t, next, now, what)
	require.False(t, breaks(next), "Next %d breaks the rule: %s", next, what)
	if next > now {
		require.True(t, breaks(next-1), "Next %d is later than needed: %s", next, what)
	}
}

// TestNextOfSlidingCostRule: the example serve's Retry-After once
// overstated: 60+30 tokens against 100 tokens/1s, a send of 20 at 0.3 s
// waits only for the 60 to leave (1.1 s), not a whole window from now.
func TestNextOfSlidingCostRule(t *testing.T) {
	r, err := rule.Parse("100 tokens/1s")
	require.NoError(t, err)
	c := New(Config{Rules: []rule.Rule{r}})
	require.NoError(t, c.ObserveCost(100e6, 1, []int64{60}))
	require.NoError(t, c.ObserveCost(200e6, 2, []int64{30}))
	require.Equal(t, int64(300e6), c.Next(0, 300e6, 10))
	require.Equal(t, int64(1100e6), c.Next(0, 300e6, 20))
	require.Equal(t, int64(1200e6), c.Next(0, 300e6, 100), "the whole limit: once the window is empty")
	require.Equal(t, Never, c.Next(0, 300e6, 101))
	require.Equal(t, int64(90), c.Load(0, 300e6))
}
