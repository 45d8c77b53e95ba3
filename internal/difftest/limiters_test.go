package difftest

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/internal/oracle"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// limiter builds an in-memory limiter of the rules on a runtime.
type limiter func(clock.Runtime, []rule.Rule) strategies.CostLimiter

// limiters are the in-memory strategies that meter every kind, by the
// name simulate gives them. Left out, each for its reason: sequential,
// which records a rule before the later rules admit (it keeps a single
// rule, TestSingleRuleLimitersKeepTheOracle); combined-counter on sliding
// rules, whose counters approximate them and overfill by design (the
// simulator measures by how much); it keeps the other kinds exactly.
var limiters = map[string]limiter{
	"combined": func(rt clock.Runtime, rs []rule.Rule) strategies.CostLimiter {
		return strategies.NewCombined(rt, rs...)
	},
	"gated": func(rt clock.Runtime, rs []rule.Rule) strategies.CostLimiter {
		return strategies.NewGated(rt, 2, rs...)
	},
	"gated-rates-first": func(rt clock.Runtime, rs []rule.Rule) strategies.CostLimiter {
		return strategies.NewGatedRatesFirst(rt, 2, rs...)
	},
	"combined-bucketed": func(rt clock.Runtime, rs []rule.Rule) strategies.CostLimiter {
		return strategies.NewCombinedBounded(rt, rs...)
	},
	"combined-b3": func(rt clock.Runtime, rs []rule.Rule) strategies.CostLimiter {
		b := make([]rule.Rule, len(rs))
		for i, r := range rs {
			if b[i] = r; r.Kind == rule.Sliding {
				b[i].Buckets = 3
			}
		}
		return strategies.NewCombinedBounded(rt, b...)
	},
	"combined-counter": func(rt clock.Runtime, rs []rule.Rule) strategies.CostLimiter {
		return strategies.NewCombinedCounter(rt, rs...)
	},
}

// upTo draws a timer's lateness, uniform in [0, d].
type upTo time.Duration

func (d upTo) Draw(r *rand.Rand) time.Duration { return time.Duration(r.Int64N(int64(d) + 1)) }

// drive requests the case's sends from a limiter on a virtual clock, each
// caller arriving at its send's instant and waiting as told (timers late
// by up to lateness), and returns the admissions, each at the instant the
// limiter let it go, with its costs, and each request's error.
func drive(c Case, rules []rule.Rule, newLim limiter, lateness time.Duration) ([]oracle.Send, []error) {
	sch := virtual.NewSched(virtual.Config{Lateness: upTo(lateness), Rand: rand.New(rand.NewPCG(uint64(lateness), 1))})
	lim := newLim(sch, rules)
	units := rule.Units(rules)
	times := make([]int64, len(c.Sends))
	for i, s := range c.Sends {
		times[i] = s.At
	}
	var admitted []oracle.Send
	errs := make([]error, len(c.Sends))
	sch.Arrivals(times, func(i int64) {
		costs := make([]int64, len(units))
		for u, name := range units {
			costs[u] = c.Sends[i].Costs[name]
		}
		if errs[i] = lim.AcquireCost(context.Background(), costs); errs[i] == nil {
			admitted = append(admitted, oracle.Send{T: sch.Now(), Costs: c.Sends[i].Costs})
			lim.Release()
		}
	})
	sch.Run()
	return admitted, errs
}

// broken names the rules the oracle finds broken among admissions, with
// how many sends broke each.
func broken(rules []rule.Rule, sends []oracle.Send) map[string]int {
	out := map[string]int{}
	for r, v := range oracle.JudgeAll(sends, OracleRules(rules), false) {
		if len(v.Violations) > 0 {
			out[rules[r].String()] = len(v.Violations)
		}
	}
	return out
}

// TestLimitersKeepTheOracle: every in-memory limiter that meters the
// case's kind, driven at the case's request instants on a virtual clock
// (timers on time, or late), admits no send the oracle finds violating
// any rule, refuses at once (a *CostError) exactly the requests costing
// more than a rule could ever admit, and admits every other one.
func TestLimitersKeepTheOracle(t *testing.T) {
	for _, f := range Families {
		t.Run(f.String(), func(t *testing.T) {
			for i, c := range limiterCases(f, testrun.Seeds(4, 100), 6) {
				for name, newLim := range limiters {
					if name == "combined-counter" && f == Sliding {
						continue // approximates sliding rules (see limiters)
					}
					lateness := time.Duration(i%3) * time.Duration(c.Rules[0].Window) / 7
					admitted, errs := drive(c, c.Rules, newLim, lateness)
					if !assert.Empty(t, broken(c.Rules, admitted), "%s, seed %d, lateness %v: %s", name, i, lateness, c) ||
						!assertRefusals(t, c, errs, admitted, name, i) {
						return
					}
				}
			}
		})
	}
}

// limiterCases draws unkeyed cases (a limiter meters one key) with tiny
// windows.
func limiterCases(f Family, seeds int, salt uint64) []Case {
	var out []Case
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, salt+uint64(f)))
		out = append(out, Draw(rng, f, Options{Tiny: true, Sends: 30 + rng.IntN(50)}))
	}
	return out
}

// assertRefusals checks that a limiter refused exactly the requests that
// cost more than a rule could ever admit, each with a *CostError.
func assertRefusals(t *testing.T, c Case, errs []error, admitted []oracle.Send, name string, seed int) bool {
	t.Helper()
	refused := 0
	for i, err := range errs {
		if tooCostly(c, c.Sends[i]) {
			refused++
		}
		var ce *strategies.CostError
		if !assert.Equal(t, tooCostly(c, c.Sends[i]), errors.As(err, &ce), "%s, seed %d, request %d: %v", name, seed, i, err) {
			return false
		}
		if ce == nil && !assert.NoError(t, err, "%s, seed %d, request %d", name, seed, i) {
			return false
		}
	}
	return assert.Len(t, admitted, len(c.Sends)-refused, "%s, seed %d: every other request admitted", name, seed)
}

// TestSlidingKeepsFixedAndFirstCall: a log that keeps the sliding rule
// N/W keeps the fixed rule N/W at every offset and the first-call rule
// N/W (docs/semantics.md), so a limiter that knows only sliding windows
// (simulate's combined-sliding, catalog.AsSliding) keeps them: the oracle
// finds no violation among its admissions. Not for a zone's days, which
// last up to 25 hours and hold more than a sliding day, nor for buckets.
func TestSlidingKeepsFixedAndFirstCall(t *testing.T) {
	for _, f := range []Family{Fixed, FirstCall} {
		t.Run(f.String(), func(t *testing.T) {
			for i, c := range limiterCases(f, testrun.Seeds(4, 100), 9) {
				sliding := catalog.AsSliding(c.Rules)
				admitted, _ := drive(c, sliding, limiters["combined"], 0)
				if !assert.Empty(t, broken(sliding, admitted), "seed %d: %s", i, c) ||
					!assert.Empty(t, broken(c.Rules, admitted), "seed %d: %s", i, c) {
					return
				}
			}
		})
	}
}
