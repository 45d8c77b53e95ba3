package strategies_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// weightedViolations is the brute-force weighted oracle: send i of cost c
// breaks rule r when the cost in r's unit of the earlier sends j with
// t_i - t_j < W (ties count: they are earlier in the list), plus c,
// exceeds N. A call rule charges every send 1. It returns the violations
// per rule.
func weightedViolations(rules []rule.Rule, units []string, at []int64, costs [][]int64) []int {
	out := make([]int, len(rules))
	for k, r := range rules {
		charge := func(i int) int64 {
			for u, name := range units {
				if name == r.Unit {
					return costs[i][u]
				}
			}
			return 1
		}
		for i := range at {
			sum := charge(i)
			for j := 0; j < i; j++ {
				if at[i]-at[j] < int64(r.Window) {
					sum += charge(j)
				}
			}
			if sum > int64(r.Limit) {
				out[k]++
			}
		}
	}
	return out
}

// costCase is one random case: rules, arrivals and each call's costs.
type costCase struct {
	rules  []rule.Rule
	units  []string
	times  []int64
	costs  [][]int64
	refuse []bool // the call costs more than some rule's limit
}

// newCostCase draws a case from seed: a call rule and one or two cost
// rules with small limits; arrival gaps of 0, W-1, W, W+1 or anything;
// costs of 0, 1, N, N+1 or anything up to N.
func newCostCase(seed uint64) costCase {
	rng := rand.New(rand.NewPCG(seed, 7))
	w := time.Duration(10 + rng.IntN(20))
	rules := []rule.Rule{
		{Limit: 1 + rng.IntN(4), Window: w},
		{Limit: 3 + rng.IntN(20), Window: w, Unit: "tokens"},
	}
	if rng.IntN(2) == 0 {
		rules = append(rules, rule.Rule{Limit: 5 + rng.IntN(40), Window: 3 * w, Unit: "tokens"})
	}
	if rng.IntN(2) == 0 {
		rules = append(rules, rule.Rule{Limit: 2 + rng.IntN(6), Window: 2 * w, Unit: "points"})
	}
	if rng.IntN(2) == 0 {
		rules[0], rules[1] = rules[1], rules[0]
	}
	c := costCase{rules: rules, units: rule.Units(rules)}
	var t int64
	for range 40 {
		t += []int64{0, 0, int64(w) - 1, int64(w), int64(w) + 1, rng.Int64N(int64(w))}[rng.IntN(6)]
		c.times = append(c.times, t)
		costs, refuse := make([]int64, len(c.units)), false
		for u, name := range c.units {
			n := int64(limitOf(rules, name))
			costs[u] = []int64{0, 1, n, n + 1, rng.Int64N(n + 1)}[rng.IntN(5)]
			if rng.IntN(4) > 0 && costs[u] > n {
				costs[u] = n // keep refusals rarer
			}
			refuse = refuse || costs[u] > n
		}
		c.costs, c.refuse = append(c.costs, costs), append(c.refuse, refuse)
	}
	return c
}

// limitOf is the least limit of the rules metering unit.
func limitOf(rules []rule.Rule, unit string) int {
	n := -1
	for _, r := range rules {
		if r.Unit == unit && (n < 0 || r.Limit < n) {
			n = r.Limit
		}
	}
	return n
}

// runCostCase runs c on the virtual clock through the limiter newLim
// builds, each caller waiting as told, and returns the admissions with
// their costs and the errors of the refused calls.
func runCostCase(c costCase, newLim func(clock.Runtime) strategies.CostLimiter) ([]int64, [][]int64, []error) {
	sch := virtual.NewSched(virtual.Config{})
	lim := newLim(sch)
	var at []int64
	var costs [][]int64
	errs := make([]error, len(c.times))
	sch.Arrivals(c.times, func(i int64) {
		if err := lim.AcquireCost(context.Background(), c.costs[i]); err != nil {
			errs[i] = err
			return
		}
		at, costs = append(at, sch.Now()), append(costs, c.costs[i])
		lim.Release()
	})
	sch.Run()
	return at, costs, errs
}

// costLimiters are the strategies that must keep every window.
var costLimiters = map[string]func(clock.Runtime, []rule.Rule) strategies.CostLimiter{
	"combined": func(rt clock.Runtime, rs []rule.Rule) strategies.CostLimiter {
		return strategies.NewCombined(rt, rs...)
	},
	"gated": func(rt clock.Runtime, rs []rule.Rule) strategies.CostLimiter {
		return strategies.NewGated(rt, 2, rs...)
	},
	"gated-rates-first": func(rt clock.Runtime, rs []rule.Rule) strategies.CostLimiter {
		return strategies.NewGatedRatesFirst(rt, 2, rs...)
	},
	"bucketed": func(rt clock.Runtime, rs []rule.Rule) strategies.CostLimiter {
		b := make([]rule.Rule, len(rs))
		for i, r := range rs {
			b[i], b[i].Buckets = r, 3
		}
		return strategies.NewCombinedBounded(rt, b...)
	},
}

// TestCostLimitersKeepEveryWindow: on 300 random cases, every limiter
// that must keep the rules admits no call the weighted oracle counts as a
// violation, refuses at once exactly the calls costing more than a
// limit (with a *CostError naming the rule), and admits every other call.
func TestCostLimitersKeepEveryWindow(t *testing.T) {
	for name, newLim := range costLimiters {
		for seed := range uint64(300) {
			c := newCostCase(seed)
			at, costs, errs := runCostCase(c, func(rt clock.Runtime) strategies.CostLimiter { return newLim(rt, c.rules) })
			viol := weightedViolations(c.rules, c.units, at, costs)
			require.Equal(t, make([]int, len(c.rules)), viol, "%s seed %d rules %v", name, seed, c.rules)
			admitted := 0
			for i, err := range errs {
				if !c.refuse[i] {
					require.NoError(t, err, "%s seed %d call %d", name, seed, i)
					admitted++
					continue
				}
				var ce *strategies.CostError
				require.ErrorAs(t, err, &ce, "%s seed %d call %d", name, seed, i)
				assert.Greater(t, ce.Cost, int64(ce.Rule.Limit))
				assert.Contains(t, err.Error(), ce.Rule.String())
			}
			require.Len(t, at, admitted, "%s seed %d", name, seed)
		}
	}
}

// TestSequentialCostsOverfill: requests limiter, then tokens limiter, as
// clients chain them. A caller that passes the requests limiter and waits
// for tokens holds a requests record that expires before its send, so
// cheap callers behind it pass both and the requests window overfills.
func TestSequentialCostsOverfill(t *testing.T) {
	rules, err := rule.ParseList("2/10ns, 10 tokens/10ns")
	require.NoError(t, err)
	c := costCase{rules: rules, units: []string{"tokens"},
		times: []int64{0, 0, 10, 10}, costs: [][]int64{{10}, {10}, {0}, {0}}, refuse: make([]bool, 4)}
	at, costs, errs := runCostCase(c, func(rt clock.Runtime) strategies.CostLimiter { return strategies.NewSequential(rt, rules...) })
	assert.Equal(t, []error{nil, nil, nil, nil}, errs)
	assert.Equal(t, []int{1, 0}, weightedViolations(rules, c.units, at, costs), "admitted at %v", at)
	at, costs, _ = runCostCase(c, func(rt clock.Runtime) strategies.CostLimiter { return strategies.NewCombined(rt, rules...) })
	assert.Equal(t, []int{0, 0}, weightedViolations(rules, c.units, at, costs), "admitted at %v", at)
}

// TestAcquireCostRefusesAtOnce: a call costing more than a rule's limit,
// or a negative cost, or the wrong number of costs, fails before any wait,
// in every strategy, sequential and counter included.
func TestAcquireCostRefusesAtOnce(t *testing.T) {
	rules, err := rule.ParseList("5/1s, 100 tokens/1m, 10 points/1s")
	require.NoError(t, err)
	rt := virtual.NewSched(virtual.Config{})
	for name, lim := range map[string]strategies.CostLimiter{
		"sequential": strategies.NewSequential(rt, rules...), "combined": strategies.NewCombined(rt, rules...),
		"counter": strategies.NewCombinedCounter(rt, rules...), "gated": strategies.NewGated(rt, 1, rules...),
	} {
		err := lim.AcquireCost(context.Background(), []int64{101, 0})
		var ce *strategies.CostError
		require.True(t, errors.As(err, &ce), name)
		assert.Equal(t, "strategies: a call of 101 tokens exceeds rule 100 tokens/1m on its own: no wait admits it", err.Error(), name)
		assert.EqualError(t, lim.AcquireCost(context.Background(), []int64{1, -1}), "strategies: a negative cost (-1)", name)
		assert.EqualError(t, lim.AcquireCost(context.Background(), []int64{1}), "strategies: 1 costs for 2 units", name)
		assert.NoError(t, lim.AcquireCost(context.Background(), []int64{100, 10}), name)
	}
}

// TestBooksChargeCosts: each bookkeeping takes a call of cost c only while
// the costs in its window plus c fit the limit; cost 0 always fits a
// window that is not over.
func TestBooksChargeCosts(t *testing.T) {
	r := rule.Rule{Limit: 10, Window: 10, Unit: "tokens"}
	for name, b := range map[string]strategies.CostBook{
		"log": strategies.NewSlidingLog(r), "buckets": strategies.NewBucketWindow(r, 10),
		"counter": strategies.NewWindowCounter(r),
	} {
		assert.Zero(t, b.WaitTimeCost(0, 7), name)
		b.RecordCost(0, 7)
		assert.Zero(t, b.WaitTimeCost(0, 3), name)
		assert.Positive(t, b.WaitTimeCost(0, 4), name)
		b.RecordCost(0, 3)
		assert.Zero(t, b.WaitTimeCost(1, 0), name)
		assert.Positive(t, b.WaitTimeCost(1, 1), name)
		if name == "log" {
			assert.Equal(t, time.Duration(9), b.WaitTimeCost(1, 1), name) // the window (t-10, t] leaves 0 at t = 10
		}
	}
}
