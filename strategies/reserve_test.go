package strategies_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// reservedSend is one admitted reservation as the provider saw it.
type reservedSend struct {
	at, seq  int64 // admission instant, and its place in the processing order
	est      []int64
	settle   *checker.Settlement
	settleSq int64 // the settlement's place in the processing order
}

// newReserveCase draws arrivals and estimates as newKindCase does, with
// estimates kept within every cap (a reservation above one is refused).
func newReserveCase(seed uint64, kinds []rule.Kind) costCase {
	c := newKindCase(seed, kinds)
	for i, costs := range c.costs {
		for u, name := range c.units {
			costs[u] = min(costs[u], capOf(c.rules, name))
		}
		c.refuse[i] = false
	}
	return c
}

// drawSettlement picks a call's actual costs (below, at or above its
// estimates, or 0 in every unit, alike in every unit) and its delay (0, a
// tie with its own admission; a window exactly; or anything), or nil for
// a call never settled.
func drawSettlement(rng *rand.Rand, est []int64, w int64) ([]int64, int64, bool) {
	way := rng.IntN(5)
	if way == 4 {
		return nil, 0, false
	}
	actual := make([]int64, len(est))
	for u, e := range est {
		actual[u] = []int64{e / 2, e, e + rng.Int64N(e+3), 0}[way]
	}
	delay := []int64{0, w, rng.Int64N(2 * w), rng.Int64N(w)}[rng.IntN(4)]
	return actual, delay, true
}

// runReserveCase drives lim with c's calls on a virtual clock: each
// reserves its estimates, and settles after a drawn delay or never. It
// reports whether the run's order contradicts the provider's reading.
func runReserveCase(t *testing.T, c costCase, seed uint64, newLim func(clock.Runtime) strategies.Reserver) ([]*reservedSend, bool) {
	rng := rand.New(rand.NewPCG(seed, 29))
	sch := virtual.NewSched(virtual.Config{})
	lim := newLim(sch)
	var sends []*reservedSend
	var seq int64
	w := int64(c.rules[0].Window)
	sch.Arrivals(c.times, func(i int64) {
		res, err := lim.Reserve(context.Background(), c.costs[i])
		require.NoError(t, err)
		seq++
		s := &reservedSend{at: res.At(), seq: seq, est: res.Estimates()}
		sends = append(sends, s)
		actual, delay, ok := drawSettlement(rng, s.est, w)
		if !ok {
			return
		}
		require.NoError(t, sch.Sleep(context.Background(), time.Duration(delay)))
		require.NoError(t, res.Settle(actual))
		require.NoError(t, res.Settle(make([]int64, len(actual))), "a second settlement")
		require.True(t, res.Settled())
		seq++
		s.settle, s.settleSq = &checker.Settlement{At: sch.Now(), Actual: actual}, seq
	})
	sch.Run()
	return sends, contradicts(sends)
}

// contradicts reports whether a later call was admitted at a settlement's
// instant but before the settlement was applied: the provider's reading
// (a settlement counts for every later send at its instant) then differs
// from the order the limiter saw, and the case judges nothing.
func contradicts(sends []*reservedSend) bool {
	for _, s := range sends {
		for _, o := range sends {
			if s.settle != nil && o.at == s.settle.At && o.seq > s.seq && o.seq < s.settleSq {
				return true
			}
		}
	}
	return false
}

// ties counts the settlements at the instant of a later send.
func ties(sends []*reservedSend) int {
	n := 0
	for _, s := range sends {
		for _, o := range sends {
			if s.settle != nil && o.at == s.settle.At && o.seq > s.seq {
				n++
				break
			}
		}
	}
	return n
}

// reservedViolations judges sends as the provider settles them.
func reservedViolations(t *testing.T, rules []rule.Rule, units []string, sends []*reservedSend) int64 {
	ch := checker.New(checker.Config{Rules: rules, Units: units})
	for i, s := range sends {
		require.NoError(t, ch.ObserveReserved(s.at, int64(i), s.est, s.settle))
	}
	rep := ch.Report()
	return rep.Violations()
}

// reserveLimiters must keep every window with reservations.
var reserveLimiters = map[string]func(clock.Runtime, []rule.Rule) strategies.Reserver{
	"combined": func(rt clock.Runtime, rs []rule.Rule) strategies.Reserver { return strategies.NewCombined(rt, rs...) },
	"gated":    func(rt clock.Runtime, rs []rule.Rule) strategies.Reserver { return strategies.NewGated(rt, 64, rs...) },
	"gated-rates-first": func(rt clock.Runtime, rs []rule.Rule) strategies.Reserver {
		return strategies.NewGatedRatesFirst(rt, 64, rs...)
	},
	"bounded": func(rt clock.Runtime, rs []rule.Rule) strategies.Reserver {
		b := make([]rule.Rule, len(rs))
		for i, r := range rs {
			b[i] = r
			if r.Kind == rule.Sliding {
				b[i].Buckets = 3
			}
		}
		return strategies.NewCombinedBounded(rt, b...)
	},
}

// TestReservationsKeepEveryWindow: on random cases of every kind alone
// and mixed, with estimates settled below, at and above themselves, to
// 0, at their own instant, a window later or never, every limiter's
// sends overfill no window as the checker judges reserved costs.
func TestReservationsKeepEveryWindow(t *testing.T) {
	mixes := map[string][]rule.Kind{
		"sliding":    {rule.Sliding, rule.Sliding},
		"fixed":      {rule.Fixed, rule.Fixed},
		"bucket":     {rule.Bucket, rule.Bucket},
		"first-call": {rule.FirstCall, rule.FirstCall},
		"mixed":      {rule.Fixed, rule.Sliding, rule.Bucket, rule.FirstCall, rule.Sliding},
	}
	for mix, kinds := range mixes {
		for name, newLim := range reserveLimiters {
			judged, tied := 0, 0
			for seed := range uint64(150) {
				c := newReserveCase(seed, kinds)
				sends, odd := runReserveCase(t, c, seed, func(rt clock.Runtime) strategies.Reserver { return newLim(rt, c.rules) })
				require.Len(t, sends, len(c.times))
				if odd {
					continue
				}
				judged, tied = judged+1, tied+ties(sends)
				require.Zero(t, reservedViolations(t, c.rules, c.units, sends), "%s %s seed %d: %v", mix, name, seed, c.rules)
			}
			require.Greater(t, judged, 100, "%s %s: too few runs in the provider's order", mix, name)
			require.Greater(t, tied, 50, "%s %s: too few settlements at a later send's instant", mix, name)
		}
	}
}

// TestSequentialReservesOneRule: sequential keeps a single rule of any
// kind with reservations too (it records early only across rules).
func TestSequentialReservesOneRule(t *testing.T) {
	for _, k := range []rule.Kind{rule.Sliding, rule.Fixed, rule.Bucket, rule.FirstCall} {
		for seed := range uint64(100) {
			c := newReserveCase(seed, []rule.Kind{k, k})
			c.rules = c.rules[1:2] // the cost rule
			c.units = rule.Units(c.rules)
			for i := range c.costs {
				c.costs[i] = c.costs[i][:len(c.units)]
			}
			sends, odd := runReserveCase(t, c, seed, func(rt clock.Runtime) strategies.Reserver { return strategies.NewSequential(rt, c.rules...) })
			if odd {
				continue
			}
			require.Zero(t, reservedViolations(t, c.rules, c.units, sends), "%v seed %d: %v", k, seed, c.rules)
		}
	}
}

// TestSettleRefusesBadCosts: actual costs of the wrong number or negative
// are refused with a *CostError and leave the reservation unsettled; a
// nil settles to the estimates.
func TestSettleRefusesBadCosts(t *testing.T) {
	sch := virtual.NewSched(virtual.Config{})
	lim := strategies.NewCombined(sch, rule.Rule{Limit: 10, Window: time.Second, Unit: "tokens"})
	sch.Go(0, func() {
		res, err := lim.Reserve(context.Background(), []int64{4})
		require.NoError(t, err)
		var ce *strategies.CostError
		require.ErrorAs(t, res.Settle([]int64{1, 2}), &ce)
		require.ErrorAs(t, res.Settle([]int64{-1}), &ce)
		require.False(t, res.Settled())
		require.NoError(t, res.Settle(nil))
		require.True(t, res.Settled())
		_, err = lim.Reserve(context.Background(), []int64{11})
		require.ErrorAs(t, err, &ce, "an estimate above the limit")
	})
	sch.Run()
}
