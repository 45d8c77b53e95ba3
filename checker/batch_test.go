package checker

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

// columns cuts l's sends [from, to) into ObserveCostBatch's arguments.
func columns(l costLog, from, to, units int) (ats, refs []int64, costs [][]int64) {
	costs = make([][]int64, units)
	for i := from; i < to; i++ {
		ats, refs = append(ats, l.at[i]), append(refs, int64(i))
		for u := range units {
			costs[u] = append(costs[u], l.costs[i][u])
		}
	}
	return ats, refs, costs
}

// TestBatchAgreesWithOneAtATime: random logs cut into random runs give,
// through ObserveCostBatch, the report ObserveCost gives send by send,
// listed violations and maxima included, for mixed rules of every kind.
func TestBatchAgreesWithOneAtATime(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	units := []string{"tokens", "bytes"}
	for range 1000 {
		grid := int64(1 + rng.IntN(4))
		var rules []rule.Rule
		for range 1 + rng.IntN(4) {
			rules = append(rules, randomKindRule(rng, grid, []string{"", "tokens", "bytes"}[rng.IntN(3)]))
		}
		l := randomCostLog(rng, 1+rng.IntN(60), grid, 2, []int64{3, 5})
		cfg := Config{Rules: rules, Units: units, Boundary: rule.Boundary(rng.IntN(2)), List: rng.IntN(3)}
		one := New(cfg)
		for i, at := range l.at {
			require.NoError(t, one.ObserveCost(at, int64(i), l.costs[i]))
		}
		batch := New(cfg)
		for from := 0; from < len(l.at); {
			to := min(len(l.at), from+1+rng.IntN(12))
			ats, refs, costs := columns(l, from, to, len(units))
			require.NoError(t, batch.ObserveCostBatch(ats, refs, costs))
			from = to
		}
		require.Equal(t, one.Report(), batch.Report(), "%v on %v %v", rules, l.at, l.costs)
	}
}

// TestBatchErrorsAreObserveCosts: a run with a negative cost, a missing
// column or a send out of order fails as ObserveCost does on that send.
func TestBatchErrorsAreObserveCosts(t *testing.T) {
	tokens := rule.Rule{Limit: 5, Window: 10, Unit: "tokens"}
	for name, run := range map[string]struct {
		ats   []int64
		costs [][]int64
	}{
		"negative cost": {[]int64{1, 2, 3}, [][]int64{{1, -1, 1}}},
		"out of order":  {[]int64{1, 3, 2}, [][]int64{{1, 1, 1}}},
		"no costs":      {[]int64{1, 2, 3}, nil},
		"short column":  {[]int64{1, 2, 3}, [][]int64{{1, 1}}},
	} {
		refs := []int64{10, 11, 12}
		one := New(Config{Rules: []rule.Rule{tokens}})
		var want error
		for i, at := range run.ats {
			var vec []int64
			if run.costs != nil {
				vec = []int64{-1}
				if i < len(run.costs[0]) {
					vec[0] = run.costs[0][i]
				}
			}
			if want = one.ObserveCost(at, refs[i], vec); want != nil {
				break
			}
		}
		require.Error(t, want, name)
		batch := New(Config{Rules: []rule.Rule{tokens}})
		require.Equal(t, want, batch.ObserveCostBatch(run.ats, refs, run.costs), name)
		require.Equal(t, one.Report(), batch.Report(), name)
	}
}
