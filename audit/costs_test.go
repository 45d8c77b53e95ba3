package audit

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// bruteUnits returns, for every window length w in 1..horizon, the most
// units an exact token bucket (capacity burst units, limit units refilled
// per per ns, full at 0, a call of cost c admitted when the level holds c)
// admits in a half-open window of w ns, over every schedule of calls of
// cost 1..maxCost at whole nanoseconds 0..horizon-1.
func bruteUnits(burst, limit, per, maxCost, horizon int64) []int64 {
	best := make([]int64, horizon+1)
	units := make([]int64, horizon)
	var walk func(now, level, maxNext int64)
	walk = func(now, level, maxNext int64) {
		if now == horizon {
			for w := int64(1); w <= horizon; w++ {
				for from := int64(0); from < horizon; from++ {
					var sum int64
					for t := from; t < min(from+w, horizon); t++ {
						sum += units[t]
					}
					best[w] = max(best[w], sum)
				}
			}
			return
		}
		// Admit one more call at now, costs in non-increasing order...
		for c := min(maxCost, maxNext); c >= 1; c-- {
			if level >= c*per {
				units[now] += c
				walk(now, level-c*per, c)
				units[now] -= c
			}
		}
		// ...or move on to the next nanosecond, the bucket refilled.
		walk(now+1, min(burst*per, level+limit), maxCost)
	}
	walk(0, burst*per, maxCost)
	return best
}

// TestBucketWorstUnitsBruteForce: BucketWorst bounds the units a bucket of
// burst B units admits, whatever the calls' costs, and is reached: the
// oracle tries every schedule of calls costing 1 to 3 units.
func TestBucketWorstUnitsBruteForce(t *testing.T) {
	const horizon = 6
	for burst := int64(1); burst <= 4; burst++ {
		for limit := int64(1); limit <= 2; limit++ {
			for per := limit; per <= 4; per++ {
				best := bruteUnits(burst, limit, per, 3, horizon)
				for w := int64(1); w <= horizon; w++ {
					got := bucketWorst(burst, limit, time.Duration(per), time.Duration(w))
					if per%limit == 0 {
						require.Equal(t, best[w], got, "burst %d units, %d per %d ns, window %d ns", burst, limit, per, w)
						continue
					}
					require.GreaterOrEqual(t, got, best[w], "burst %d units, %d per %d ns, window %d ns", burst, limit, per, w)
				}
			}
		}
	}
}

// weightedRuns re-runs every workload of rep (and its saturation ones)
// for strategy sa with cfg on
// seeds, and returns per workload the checker's violations and most units
// (or sends) in one window, per rule, judged with ObserveCost (with
// ObserveReserved for the designs whose costs are settled), and the calls
// refused.
func weightedRuns(t *testing.T, opt *Options, rep *Report, name string, cfg catalog.LibConfig, seeds int) ([]Outcome, int) {
	t.Helper()
	d := mustDesign(t, name)
	run, err := d.Construct(cfg)
	require.NoError(t, err)
	var out []Outcome
	refused := 0
	for _, wl := range append(slices.Clone(rep.Workloads), saturationWorkloads(d, cfg, opt)...) {
		sc := wl.Scenario(opt, name)
		o := Outcome{Workload: wl.Name, Rules: newRuleOutcomes(opt.Rules)}
		for seed := opt.Seed; seed < opt.Seed+uint64(seeds); seed++ {
			res, err := run(sc, seed)
			require.NoError(t, err, "%s %s seed %d", name, wl.Name, seed)
			refused += res.Refused
			c := checker.New(checker.Config{Rules: opt.Rules})
			nu := len(sc.Costs)
			require.Len(t, res.SendCosts, nu*len(res.Sends), "%s %s: a cost per unit per send", name, wl.Name)
			for i, at := range res.Sends {
				var settle *checker.Settlement
				if res.SendSettled != nil {
					settle = &checker.Settlement{At: res.SendSettled[i], Actual: res.SendActuals[i*nu : (i+1)*nu]}
				}
				require.NoError(t, c.ObserveReserved(at, int64(i), res.SendCosts[i*nu:(i+1)*nu], settle))
			}
			for k, rr := range c.Report().Rules {
				o.Rules[k].Violations += rr.Violations
				o.Rules[k].MaxInWindow = max(o.Rules[k].MaxInWindow, rr.MaxInWindow)
			}
		}
		out = append(out, o)
	}
	return out, refused
}

var costLibraries = []string{catalog.XRateChained, catalog.RedisRate, catalog.ThrottledMem, catalog.ThrottledRedis, catalog.RedisClientTime}

// TestWeightedAgreesWithChecker: the audit of a weighted contract reports,
// per rule, the violations and the most units in one window that the
// checker finds with ObserveCost on the same runs; the libraries as users
// configure them (burst N units) overfill the tokens window.
func TestWeightedAgreesWithChecker(t *testing.T) {
	opt := DefaultOptions(mustRules(t, "20/1s, 100 tokens/1s"))
	opt.Seeds, opt.NoSearch = 2, true
	rep, err := Run(opt)
	require.NoError(t, err)
	names := make([]string, len(rep.Strategies))
	for i, sa := range rep.Strategies {
		names[i] = sa.Name
	}
	require.Equal(t, append(slices.Clone(costLibraries), postCallName, reserveName, redisReserveName), names, "the strategies that meter costs")
	require.NotEmpty(t, rep.Skipped)
	opt.SearchDir = t.TempDir()
	_, err = Run(opt)
	assert.ErrorContains(t, err, "call rules only", "a worst-case search whose scenario would carry no costs")
	opt.SearchDir = ""
	for _, sk := range rep.Skipped {
		assert.NotEmpty(t, sk.Why, sk.Name)
	}
	for _, sa := range rep.Strategies {
		want, _ := weightedRuns(t, &opt, rep, sa.Name, opt.Config, opt.Seeds)
		var tokens int64
		for w, o := range sa.Outcomes {
			for k := range o.Rules {
				assert.Equal(t, want[w].Rules[k].Violations, o.Rules[k].Violations, "%s %s: violations of %v", sa.Name, o.Workload, o.Rules[k].Rule)
				assert.Equal(t, want[w].Rules[k].MaxInWindow, o.Rules[k].MaxInWindow, "%s %s: most in one window of %v", sa.Name, o.Workload, o.Rules[k].Rule)
			}
			tokens += o.Rules[1].Violations
			assert.LessOrEqual(t, o.Rules[1].MaxInWindow, sa.Bounds[1].Worst, "%s %s: units over the analytic worst case", sa.Name, o.Workload)
			if sa.design.Tuning().family == designBuckets {
				assert.Equal(t, int64(Unbounded), sa.Bounds[0].Worst, "%s: the requests limiter before a tokens limiter", sa.Name)
			}
		}
		if sa.Name != catalog.RedisClientTime && sa.Name != reserveName && sa.Name != redisReserveName {
			assert.Positive(t, tokens, "%s with burst N units: no violation of the tokens rule", sa.Name)
		}
	}
}

// TestWeightedSafeSetting: the setting suggested for a weighted contract
// has no violation on any workload over the verify seeds, as the checker
// judges the units, refuses no call (its burst in units holds the largest
// call), and keeps each analytic worst case within its limit. A chain of
// limiters of different units has none to suggest; the atomic script has.
func TestWeightedSafeSetting(t *testing.T) {
	for _, tt := range []struct {
		contract string
		safe     []string
		none     []string
	}{
		{"100 tokens/1s", []string{catalog.XRateChained, catalog.RedisRate, catalog.ThrottledMem}, nil},
		{"20/1s, 100 tokens/1s", []string{catalog.RedisClientTime}, []string{catalog.XRateChained, catalog.ThrottledMem}},
	} {
		opt := DefaultOptions(mustRules(t, tt.contract))
		opt.Seeds, opt.Verify = 1, 3
		opt.Strategies = append(append([]string{}, tt.safe...), tt.none...)
		rep, err := Run(opt)
		require.NoError(t, err)
		for _, sa := range rep.Strategies {
			if slices.Contains(tt.none, sa.Name) {
				assert.Nil(t, sa.Safe, "%s %s: a safe setting for a chain of units", tt.contract, sa.Name)
				assert.Equal(t, chainedUnits, sa.Bounds[0].Why, "%s %s", tt.contract, sa.Name)
				continue
			}
			require.NotNil(t, sa.Safe, "%s %s: no safe setting (%s)", tt.contract, sa.Name, sa.Rejected)
			if sa.design.Tuning().family == designBuckets {
				assert.GreaterOrEqual(t, int64(sa.Safe.UnitBurst), maxCost(opt.Rules, "tokens"), "%s: a burst below the largest call", sa.Name)
			}
			assert.True(t, analyticSafe(boundsOf(sa.design, *sa.Safe, &opt)), "%s: bounds of %+v", sa.Name, *sa.Safe)
			got, refused := weightedRuns(t, &opt, rep, sa.Name, *sa.Safe, opt.Verify)
			assert.Zero(t, refused, "%s: calls refused", sa.Name)
			for _, o := range got {
				for _, rr := range o.Rules {
					assert.Zero(t, rr.Violations, "%s %s: violations of %v", sa.Name, o.Workload, rr.Rule)
					assert.LessOrEqual(t, rr.MaxInWindow, int64(rr.Rule.Limit), "%s %s: %v", sa.Name, o.Workload, rr.Rule)
				}
			}
		}
	}
}

// TestChainedUnitsBunch pins why a requests limiter followed by a tokens
// limiter has no bound: redis-rate with burst 1 and 20 per 1.2 s on the
// requests admits at most 17 calls in any second, yet the tokens limiter
// after it holds callers back by their cost and lets them go together, so
// more than 17 calls are sent in one second.
func TestChainedUnitsBunch(t *testing.T) {
	opt := DefaultOptions(mustRules(t, "20/1s, 100 tokens/1s"))
	opt.Seeds, opt.NoSearch = 3, true
	opt.Config.Burst, opt.Config.UnitBurst, opt.Config.Margin = 1, 12, 200*time.Millisecond
	opt.Strategies = []string{catalog.RedisRate}
	rep, err := Run(opt)
	require.NoError(t, err)
	own := bucketWorst(1, 20, 1200*time.Millisecond, time.Second+time.Millisecond)
	var most int64
	for _, o := range rep.Strategies[0].Outcomes {
		most = max(most, o.Rules[0].MaxInWindow)
	}
	assert.Greater(t, most, own, "calls in one second against the requests limiter's own bound")
	assert.Equal(t, int64(Unbounded), rep.Strategies[0].Bounds[0].Worst)
}

// TestCostLibrariesChargeTheirUnit: each library that takes a quantity is
// charged the call's cost in the rule's unit (WaitN, AllowN, RateLimit's
// quantity): three calls of 60 tokens under 100 tokens/1s (burst 100) go at
// 0, 200 ms and 800 ms, and a call of 101 tokens is refused at once.
func TestCostLibrariesChargeTheirUnit(t *testing.T) {
	rules := mustRules(t, "10/1s, 100 tokens/1s")
	for _, name := range []string{catalog.XRateChained, catalog.RedisRate, catalog.ThrottledMem, catalog.ThrottledRedis} {
		st, ok := catalog.LibStrategy(name, DefaultOptions(rules).Config)
		require.True(t, ok)
		sc := &workload.Scenario{
			Name: "charge", Rules: rules, Strategies: []string{name}, Workers: 1,
			Arrivals: workload.Arrivals{Kind: workload.Replay, Times: []int64{0, 0, 0}},
			Costs:    []workload.UnitCost{{Unit: "tokens", Dist: workload.Dist{Kind: workload.Fixed, A: 60}}},
		}
		require.NoError(t, catalog.Validate(sc), name)
		res, err := simulate.RunStrategy(sc, st, 1, simulate.Options{})
		require.NoError(t, err, name)
		want := []time.Duration{0, 200 * time.Millisecond, 800 * time.Millisecond}
		require.Len(t, res.Sends, len(want), name)
		for i, w := range want {
			// The Redis libraries read the server's TIME in microseconds.
			assert.InDelta(t, int64(w), res.Sends[i], float64(2*time.Microsecond), "%s: send %d", name, i)
		}
		sc.Costs[0].Dist.A = 101
		res, err = simulate.RunStrategy(sc, st, 1, simulate.Options{})
		require.NoError(t, err, name)
		assert.Empty(t, res.Sends, name)
		assert.Equal(t, 3, res.Refused, name)
	}
}

// TestRefusingIsNotSafe: a setting whose burst in units is below the
// largest call refuses it, and so keeps every window clean by sending
// less: it is never suggested.
func TestRefusingIsNotSafe(t *testing.T) {
	opt := DefaultOptions(mustRules(t, "100 tokens/1s"))
	opt.Seeds, opt.Verify = 1, 1
	sa := &StrategyAudit{Name: catalog.XRateChained, design: mustDesign(t, catalog.XRateChained)}
	c := opt.Config
	c.UnitBurst, c.Margin = int(maxCost(opt.Rules, "tokens")/2), 500*time.Millisecond
	require.True(t, analyticSafe(boundsOf(sa.design, c, &opt)))
	clean := func(c catalog.LibConfig, seeds int) ([]Outcome, error) {
		return run(&opt, workloadsFor(opt.Rules), sa.design, c, seeds, true)
	}
	ok, err := confirm(&opt, sa, c, clean)
	require.NoError(t, err)
	assert.False(t, ok, "a setting that refuses calls suggested")
	assert.Contains(t, sa.Rejected, "refuses")
}
