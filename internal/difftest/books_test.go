package difftest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/oracle"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// books are the bookkeepings that keep a rule alone, by name. Left out:
// WindowCounter (the sliding-window counter), which approximates a
// sliding rule and overfills by design; FixedWindow on a fixed rule with
// an offset or a zone, whose windows it does not lay out (epoch-aligned).
func books(r rule.Rule) map[string]strategies.Book {
	out := map[string]strategies.Book{"NewBook": strategies.NewBook(r)}
	switch {
	case r.Kind == rule.Sliding:
		out["SlidingLog"] = strategies.NewSlidingLog(r)
		for _, k := range []int{1, 2, 5} {
			out[fmt.Sprintf("BucketWindow k=%d", k)] = strategies.NewBucketWindow(r, k)
		}
	case r.Kind == rule.Fixed && r.Offset == 0 && r.Zone == "":
		// FixedWindow takes a sliding rule, which it approximates in
		// windows aligned to the epoch: the fixed rule of the same N/W.
		sliding := r
		sliding.Kind = rule.Sliding
		out["FixedWindow"] = strategies.NewFixedWindow(sliding)
	}
	return out
}

// driveBook admits the case's requests one after another through a book,
// on a clock that jumps to each request's instant and on by each wait it
// is told, and records each admission with its cost in r's unit. A
// request costing more than r could ever admit is left out, as a limiter
// refuses it.
func driveBook(t *testing.T, c Case, r rule.Rule, b strategies.Book) []oracle.Send {
	t.Helper()
	cb, metered := b.(strategies.CostBook)
	require.True(t, metered || r.Unit == "", "a book of a cost rule meters costs")
	var admitted []oracle.Send
	now := int64(0)
	for _, s := range c.Sends {
		cost := int64(1)
		if r.Unit != "" {
			cost = s.Costs[r.Unit]
		}
		if cost > capOf([]rule.Rule{r}, r.Unit) {
			continue
		}
		now = max(now, s.At)
		for k := 0; ; k++ {
			var w time.Duration
			if metered {
				w = cb.WaitTimeCost(now, cost)
			} else {
				w = b.WaitTime(now)
			}
			if w <= 0 {
				break
			}
			require.Less(t, k, 10_000, "a book that never admits at %d", now)
			now += int64(w)
		}
		if metered {
			cb.RecordCost(now, cost)
		} else {
			b.Record(now)
		}
		admitted = append(admitted, oracle.Send{T: now, Costs: s.Costs})
	}
	return admitted
}

// TestSingleRuleLimitersKeepTheOracle: each rule of a case alone, kept by
// each bookkeeping that keeps its kind, or by the sequential limiter
// (which keeps one rule of any kind) on a virtual clock, admits no send
// the oracle finds violating it.
func TestSingleRuleLimitersKeepTheOracle(t *testing.T) {
	sequential := func(rt clock.Runtime, rs []rule.Rule) strategies.CostLimiter {
		return strategies.NewSequential(rt, rs...)
	}
	for _, f := range Families {
		t.Run(f.String(), func(t *testing.T) {
			for i, c := range limiterCases(f, testrun.Seeds(4, 100), 7) {
				for _, r := range c.Rules {
					one := []rule.Rule{r}
					for name, b := range books(r) {
						if !assert.Empty(t, broken(one, driveBook(t, c, r, b)), "%s, seed %d: %s", name, i, c) {
							return
						}
					}
					admitted, _ := drive(c, one, sequential, time.Duration(i%2)*time.Duration(r.Window)/5)
					if !assert.Empty(t, broken(one, admitted), "sequential, seed %d: %s", i, c) {
						return
					}
				}
			}
		})
	}
}

// TestWidenedLimitersKeepTheProvider: a limiter given rules widened by a
// margin m (strategies.Widen) keeps every rule as the provider counts it
// when each admitted send reaches the provider after a delay in [0, m]:
// the oracle judges the arrivals, reordered by their delays.
func TestWidenedLimitersKeepTheProvider(t *testing.T) {
	for _, f := range Families {
		t.Run(f.String(), func(t *testing.T) {
			for i, c := range limiterCases(f, testrun.Seeds(4, 100), 8) {
				rng := rand.New(rand.NewPCG(uint64(i), 88))
				m := time.Duration(1 + rng.Int64N(int64(c.Rules[0].Window)/2))
				for _, name := range []string{"combined", "gated", "combined-bucketed"} {
					admitted, _ := drive(c, strategies.Widen(m, c.Rules...), limiters[name], 0)
					arrivals := slices.Clone(admitted)
					for k := range arrivals {
						arrivals[k].T += rng.Int64N(int64(m) + 1)
					}
					slices.SortStableFunc(arrivals, func(a, b oracle.Send) int { return compareInt(a.T, b.T) })
					if !assert.Empty(t, broken(c.Rules, arrivals), "%s, margin %v, seed %d: %s", name, m, i, c) {
						return
					}
				}
			}
		})
	}
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
