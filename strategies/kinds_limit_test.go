package strategies_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// kindRule draws a rule of kind k over window w, a cost rule when unit is
// set, with small limits so that windows fill.
func kindRule(rng *rand.Rand, k rule.Kind, w time.Duration, unit string) rule.Rule {
	n := 1 + rng.IntN(4)
	if unit != "" {
		n = 3 + rng.IntN(12)
	}
	r := rule.Rule{Limit: n, Window: w, Kind: k, Unit: unit}
	switch k {
	case rule.Fixed:
		r.Offset = time.Duration(rng.Int64N(int64(w)))
	case rule.Bucket:
		r.Burst = 1 + rng.IntN(2*n)
	}
	return r
}

// newKindCase draws a case whose rules are of kinds (one call rule and
// one cost rule each, the rest drawn), with arrivals at ties, gaps of
// W-1, W and W+1 and exactly at the fixed windows' edges, and costs of 0,
// 1, the cap, one more, or anything.
func newKindCase(seed uint64, kinds []rule.Kind) costCase {
	rng := rand.New(rand.NewPCG(seed, 13))
	w := time.Duration(10 + rng.IntN(20))
	var rules []rule.Rule
	for i, k := range kinds {
		unit := ""
		if i%2 == 1 {
			unit = []string{"tokens", "points"}[rng.IntN(2)]
		}
		rules = append(rules, kindRule(rng, k, w*time.Duration(1+rng.IntN(3)), unit))
	}
	rng.Shuffle(len(rules), func(i, j int) { rules[i], rules[j] = rules[j], rules[i] })
	c := costCase{rules: rules, units: rule.Units(rules)}
	var t int64
	for range 40 {
		switch rng.IntN(7) {
		case 0, 1:
		case 2:
			t += int64(w) - 1 + rng.Int64N(3)
		case 3: // the next edge of the first fixed rule, if any
			for _, r := range rules {
				if r.Kind == rule.Fixed {
					o, ww := int64(r.Offset), int64(r.Window)
					t += ww - ((t-o)%ww+ww)%ww
					break
				}
			}
		default:
			t += rng.Int64N(int64(w))
		}
		c.times = append(c.times, t)
		costs, refuse := make([]int64, len(c.units)), false
		for u, name := range c.units {
			n := capOf(rules, name)
			costs[u] = []int64{0, 1, n, n + 1, rng.Int64N(n + 1)}[rng.IntN(5)]
			if rng.IntN(4) > 0 && costs[u] > n {
				costs[u] = n
			}
			refuse = refuse || costs[u] > n
		}
		c.costs, c.refuse = append(c.costs, costs), append(c.refuse, refuse)
	}
	return c
}

// capOf is the least cost cap (limit, or burst for a bucket) of the rules
// metering unit.
func capOf(rules []rule.Rule, unit string) int64 {
	n := int64(-1)
	for _, r := range rules {
		c := int64(r.Limit)
		if r.Kind == rule.Bucket {
			c = int64(r.Burst)
		}
		if r.Unit == unit && (n < 0 || c < n) {
			n = c
		}
	}
	return n
}

// kindViolations is the checker's count over admissions and their costs.
func kindViolations(t *testing.T, rules []rule.Rule, units []string, at []int64, costs [][]int64) int64 {
	ch := checker.New(checker.Config{Rules: rules, Units: units})
	for i := range at {
		require.NoError(t, ch.ObserveCost(at[i], int64(i), costs[i]))
	}
	rep := ch.Report()
	return rep.Violations()
}

// kindLimiters must keep every rule of every kind; combined-counter and
// sequential keep the kinds exactly too (counters approximate sliding
// rules only), the latter for one rule at a time.
var kindLimiters = map[string]func(clock.Runtime, []rule.Rule) strategies.CostLimiter{
	"combined":          costLimiters["combined"],
	"gated":             costLimiters["gated"],
	"gated-rates-first": costLimiters["gated-rates-first"],
	"combined-counter": func(rt clock.Runtime, rs []rule.Rule) strategies.CostLimiter {
		return strategies.NewCombinedCounter(rt, rs...)
	},
}

// TestKindLimitersKeepEveryWindow: for each kind alone, each beside a
// sliding rule, and all kinds mixed, on 200 random cases each, every
// limiter admits no call the checker judges a violation of the rules'
// kinds, refuses at once exactly the calls costing more than a cap (with
// a *CostError), and admits every other call, each waiting as told.
func TestKindLimitersKeepEveryWindow(t *testing.T) {
	mixes := map[string][]rule.Kind{
		"fixed":      {rule.Fixed, rule.Fixed},
		"bucket":     {rule.Bucket, rule.Bucket},
		"first-call": {rule.FirstCall, rule.FirstCall},
		"beside":     {rule.Fixed, rule.Sliding, rule.Bucket},
		"mixed":      {rule.Fixed, rule.Bucket, rule.FirstCall, rule.Fixed, rule.Bucket},
	}
	for mix, kinds := range mixes {
		for name, newLim := range kindLimiters {
			if name == "combined-counter" && mix == "beside" {
				continue // its sliding rule is approximate
			}
			for seed := range uint64(200) {
				c := newKindCase(seed, kinds)
				at, costs, errs := runCostCase(c, func(rt clock.Runtime) strategies.CostLimiter { return newLim(rt, c.rules) })
				require.Zero(t, kindViolations(t, c.rules, c.units, at, costs), "%s %s seed %d: %v", mix, name, seed, c.rules)
				refused := 0
				for i, err := range errs {
					var ce *strategies.CostError
					require.Equal(t, c.refuse[i], errors.As(err, &ce), "%s %s seed %d call %d: %v", mix, name, seed, i, err)
					if err != nil {
						refused++
					}
				}
				require.Len(t, at, len(c.times)-refused)
			}
		}
	}
}

// TestSequentialKeepsOneKindRule: sequential keeps a single rule of any
// kind (it records early only across rules).
func TestSequentialKeepsOneKindRule(t *testing.T) {
	for _, k := range []rule.Kind{rule.Fixed, rule.Bucket, rule.FirstCall} {
		for seed := range uint64(100) {
			c := newKindCase(seed, []rule.Kind{k})
			at, costs, _ := runCostCase(c, func(rt clock.Runtime) strategies.CostLimiter { return strategies.NewSequential(rt, c.rules...) })
			require.Zero(t, kindViolations(t, c.rules, c.units, at, costs), "%v seed %d", k, seed)
		}
	}
}

// admitAll runs callers arriving at times through lim and returns the
// admission instants.
func admitAll(lim strategies.Limiter, sch *virtual.Sched, times []int64) []int64 {
	var at []int64
	sch.Arrivals(times, func(int64) {
		if lim.Acquire(context.Background()) == nil {
			at = append(at, sch.Now())
		}
	})
	sch.Run()
	return at
}

// TestKindLimitersUseTheWholeAllowance: 2N callers arriving together
// just before a fixed window's edge go N at once and N at the edge, where
// the sliding log of the same N/W holds the second N a whole window; a
// bucket of burst B lets B go at once and the rest one refill apart.
func TestKindLimitersUseTheWholeAllowance(t *testing.T) {
	const n, w = 5, int64(time.Second)
	edge := 10 * w
	times := make([]int64, 2*n)
	for i := range times {
		times[i] = edge - 1
	}
	fixed := rule.Rule{Limit: n, Window: time.Duration(w), Kind: rule.Fixed}
	sch := virtual.NewSched(virtual.Config{})
	at := admitAll(strategies.NewCombined(sch, fixed), sch, times)
	assert.Equal(t, append(repeat(edge-1, n), repeat(edge, n)...), at)
	sch = virtual.NewSched(virtual.Config{})
	at = admitAll(strategies.NewCombined(sch, rule.Rule{Limit: n, Window: time.Duration(w)}), sch, times)
	assert.Equal(t, append(repeat(edge-1, n), repeat(edge-1+w, n)...), at)

	bucket := rule.Rule{Limit: n, Window: time.Duration(w), Kind: rule.Bucket, Burst: 2}
	sch = virtual.NewSched(virtual.Config{})
	at = admitAll(strategies.NewCombined(sch, bucket), sch, times[:4])
	assert.Equal(t, []int64{edge - 1, edge - 1, edge - 1 + w/n, edge - 1 + 2*w/n}, at)
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestKindLimitersRefuseAtOnce: a call above a bucket's burst, or one a
// margin leaves no room for, fails at once with a *CostError naming the
// rule; a cost between the rate and the burst waits as any other.
func TestKindLimitersRefuseAtOnce(t *testing.T) {
	rt := virtual.NewSched(virtual.Config{})
	bucket := rule.Rule{Limit: 2, Window: 10, Kind: rule.Bucket, Burst: 6, Unit: "tokens"}
	lim := strategies.NewCombined(rt, bucket)
	var ce *strategies.CostError
	require.ErrorAs(t, lim.AcquireCost(context.Background(), []int64{7}), &ce)
	assert.Equal(t, int64(7), ce.Cost)
	assert.EqualError(t, ce, "strategies: a call of 7 tokens exceeds rule 2 tokens/10ns burst 6 on its own: no wait admits it")
	assert.NoError(t, lim.AcquireCost(context.Background(), []int64{6}), "above the rate, within the burst")

	starved := strategies.NewCombined(rt, strategies.Widen(10, rule.Rule{Limit: 2, Window: 10, Kind: rule.Fixed})...)
	assert.EqualError(t, starved.Acquire(context.Background()),
		"strategies: rule 2/10ns fixed with a margin of 10ns admits at most 0: no wait admits a call of 1")
}
