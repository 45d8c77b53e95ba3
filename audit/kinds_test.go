package audit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// kindTotal returns a strategy's violations of rule k as provider kind
// kind, over every workload and seed.
func kindTotal(t *testing.T, sa StrategyAudit, kind rule.Kind, k int) int64 {
	t.Helper()
	_, kos := kindTotals(sa.Outcomes)
	for _, ko := range kos {
		if ko.Kind == kind {
			return ko.Rules[k].Violations
		}
	}
	t.Fatalf("%s: no outcome for kind %v", sa.Name, kind)
	return 0
}

// TestProviderKindsMatchTheDesign: each design is exact against the
// provider that counts as it does and breaks the sliding one: GCRA of burst
// N (redis-rate, throttled) against a bucket of burst N, an aligned fixed
// window against a fixed provider, on an exact clock; and the guide's
// sliding log, clean on the sliding provider, is clean on all three.
func TestProviderKindsMatchTheDesign(t *testing.T) {
	opt := DefaultOptions(mustRules(t, "5/1s"))
	opt.Lateness, opt.OpCost = workload.Dist{}, workload.Dist{}
	opt.Seeds, opt.NoSearch, opt.ProviderKinds = 2, true, true
	opt.Strategies = []string{catalog.RedisRate, catalog.ThrottledMem, catalog.FixedWindow}
	rep, err := Run(opt)
	require.NoError(t, err)
	exact := map[string]rule.Kind{catalog.RedisRate: rule.Bucket, catalog.ThrottledMem: rule.Bucket, catalog.FixedWindow: rule.Fixed}
	for _, sa := range rep.Strategies {
		assert.Zero(t, kindTotal(t, sa, exact[sa.Name], 0), "%s against a %v provider", sa.Name, exact[sa.Name])
		assert.Positive(t, kindTotal(t, sa, rule.Sliding, 0), "%s against a sliding provider", sa.Name)
	}

	opt = DefaultOptions(mustRules(t, "5/1s,12/3s"))
	opt.Seeds, opt.NoSearch, opt.ProviderKinds = 2, true, true
	opt.Strategies = []string{catalog.GuideScript}
	rep, err = Run(opt)
	require.NoError(t, err)
	for _, k := range providerKinds {
		for i := range opt.Rules {
			assert.Zero(t, kindTotal(t, rep.Strategies[0], k, i), "the guide's log against a %v provider, rule %v", k, opt.Rules[i])
		}
	}
}

// TestProviderKindsSameSends: the three judgements are the checker's on
// the very sends the sliding one counts, and a workload clean under the
// sliding provider is clean under the fixed one (any offset keeps it) and
// under a bucket of burst N (a window of length L holds at most
// N·(⌊L/W⌋+1) ≤ N + N·L/W sends).
func TestProviderKindsSameSends(t *testing.T) {
	opt := DefaultOptions(mustRules(t, "5/1s,12/3s"))
	opt.Seeds, opt.NoSearch, opt.ProviderKinds = 2, true, true
	opt.Strategies = []string{catalog.XRateChained, catalog.UberRatelimit, catalog.UluleRedis, catalog.RedisClientTime}
	rep, err := Run(opt)
	require.NoError(t, err)
	for _, sa := range rep.Strategies {
		st, _ := catalog.LibStrategy(sa.Name, opt.Config)
		for w, wl := range rep.Workloads {
			o := sa.Outcomes[w]
			require.Len(t, o.Kinds, len(providerKinds), "%s %s", sa.Name, wl.Name)
			assert.Equal(t, o.Rules, o.Kinds[0].Rules, "%s %s: the sliding provider is the audit's own count", sa.Name, wl.Name)
			var runs []simulate.StrategyResult
			for seed := opt.Seed; seed < opt.Seed+uint64(opt.Seeds); seed++ {
				res, err := simulate.RunStrategy(wl.Scenario(&opt, sa.Name), st, seed, simulate.Options{})
				require.NoError(t, err)
				runs = append(runs, res)
			}
			for _, ko := range o.Kinds {
				want := make([]int64, len(opt.Rules))
				for _, res := range runs {
					cr, err := checker.Check(res.Sends, checker.Config{Rules: asKind(opt.Rules, ko.Kind)})
					require.NoError(t, err)
					for k, rr := range cr.Rules {
						want[k] += rr.Violations
					}
				}
				for k := range want {
					assert.Equal(t, want[k], ko.Rules[k].Violations, "%s %s %v rule %d", sa.Name, wl.Name, ko.Kind, k)
					if o.Rules[k].Violations == 0 {
						assert.Zero(t, ko.Rules[k].Violations, "%s %s: clean sliding, yet %v violations", sa.Name, wl.Name, ko.Kind)
					}
				}
			}
		}
	}
}

// TestAuditOfAKind: rules that name a kind are judged as that provider
// counts them, the libraries set from their N/W; no bound.
func TestAuditOfAKind(t *testing.T) {
	opt := DefaultOptions(mustRules(t, "5/1s fixed"))
	opt.Lateness, opt.OpCost = workload.Dist{}, workload.Dist{}
	opt.Seeds = 2
	opt.Strategies = []string{catalog.FixedWindow, catalog.XRateChained}
	rep, err := Run(opt)
	require.NoError(t, err)
	assert.Equal(t, []string{"5/1s fixed kept as 5/1s: each of its windows is one of the sliding windows of 1s, whatever their offset"}, rep.KeptAs)
	for _, sa := range rep.Strategies {
		assert.Nil(t, sa.Bounds, "%s: analytic bounds for a fixed provider", sa.Name)
		st, _ := catalog.LibStrategy(sa.Name, opt.Config)
		for w, wl := range rep.Workloads {
			sc := wl.Scenario(&opt, sa.Name)
			assert.Equal(t, rule.Sliding, sc.Rules[0].Kind, "the library is set from N/W")
			var want int64
			for seed := opt.Seed; seed < opt.Seed+uint64(opt.Seeds); seed++ {
				res, err := simulate.RunStrategy(sc, st, seed, simulate.Options{})
				require.NoError(t, err)
				cr, err := checker.Check(res.Sends, checker.Config{Rules: opt.Rules})
				require.NoError(t, err)
				want += cr.Rules[0].Violations
			}
			assert.Equal(t, want, sa.Outcomes[w].Rules[0].Violations, "%s %s", sa.Name, wl.Name)
			if sa.Name == catalog.FixedWindow {
				assert.Zero(t, sa.Outcomes[w].Rules[0].Violations, "an aligned fixed window against a fixed provider, %s", wl.Name)
			}
		}
	}
	opt.ProviderKinds = true
	_, err = Run(opt)
	assert.ErrorContains(t, err, "without a kind")
}

// TestSuggestionsForOtherKinds: a contract with a fixed or bucket rule gets
// suggestions, searched as the sliding rules that imply it, and each
// suggestion's sends on every workload and verify seed keep the rules as
// the provider counts them.
func TestSuggestionsForOtherKinds(t *testing.T) {
	for _, contract := range []string{"10/s,10000/day fixed", "10/s,1000/1h burst 50"} {
		t.Run(contract, func(t *testing.T) {
			rep, opt := audited(t, contract, 2, catalog.XRateReserveAll, catalog.ThrottledMem)
			require.Len(t, rep.KeptAs, 1, "the reason the second rule carries over")
			for _, sa := range rep.Strategies {
				require.NotNil(t, sa.Safe, "%s: a suggestion for %s (%s)", sa.Name, contract, sa.Rejected)
				st := mustStrategy(t, sa.Name, *sa.Safe)
				so, _ := slidingOptions(&opt)
				for _, wl := range append(rep.Workloads, saturationWorkloads(sa.design, *sa.Safe, so)...) {
					for seed := opt.Seed; seed < opt.Seed+uint64(opt.Verify); seed++ {
						res, err := simulate.RunStrategy(wl.Scenario(so, sa.Name), st, seed, simulate.Options{})
						require.NoError(t, err)
						cr, err := checker.Check(res.Sends, checker.Config{Rules: opt.Rules})
						require.NoError(t, err)
						for _, rr := range cr.Rules {
							assert.Zero(t, rr.Violations, "%s %s seed %d: %v", sa.Name, wl.Name, seed, rr.Rule)
						}
					}
				}
			}
		})
	}
}

func TestSlidingEquivalent(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"10000/day fixed", "10000/24h"},
		{"1000/1h burst 50", "50/3m"},
		{"10/1s burst 20", "10/1s"},
		{"5/1s", "5/1s"},
	} {
		r := mustRules(t, tt.in)[0]
		got, why := slidingEquivalent(r)
		assert.Equal(t, mustRules(t, tt.want)[0], got, tt.in)
		assert.Equal(t, r.Kind != rule.Sliding, why != "", "%s: a reason when the rule changes", tt.in)
	}
}
