package strategies

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// CostLimiter is a Limiter that meters costs. AcquireCost is Acquire for a
// call that costs costs[u] in the u-th unit the limiter's rules meter, the
// units in the order the rules first name them (rule.Units). A call rule charges every call 1 whatever its costs; a cost of
// 0 takes no room in a cost rule. A call that could never be admitted (a
// cost above a rule's limit) fails at once with a *CostError, as does a
// negative cost or a wrong number of costs. Acquire charges 1 in every
// unit.
type CostLimiter interface {
	Limiter
	AcquireCost(ctx context.Context, costs []int64) error
}

// CostError is a call a limiter refuses at once, without waiting: its cost
// in Rule's unit is above what the rule can ever admit (its limit, a
// bucket's burst, less what a margin keeps in reserve), or its costs are
// malformed (Rule is then the zero rule and Msg says why).
type CostError struct {
	Rule rule.Rule
	Cost int64
	Msg  string
}

func (e *CostError) Error() string {
	if e.Msg != "" {
		return "strategies: " + e.Msg
	}
	return fmt.Sprintf("strategies: a call of %d %s exceeds rule %s on its own: no wait admits it", e.Cost, e.Rule.Unit, e.Rule)
}

// charges maps a call's costs to what each rule is charged.
type charges struct {
	rules []rule.Rule // nil: every rule a call rule of unknown limit
	idx   []int       // per rule: its unit's index in costs, -1 for a call rule
	caps  []int64     // per rule: the largest cost it can ever admit
	units int
	// starved is the first rule that can admit no call at all (its margin
	// leaves no room), or -1.
	starved int
}

func newCharges(rules []rule.Rule) charges {
	units := rule.Units(rules)
	idx := make([]int, len(rules))
	caps := make([]int64, len(rules))
	starved := -1
	for i, r := range rules {
		idx[i] = slices.Index(units, r.Unit)
		if caps[i] = capacity(r); caps[i] < 1 && starved < 0 {
			starved = i
		}
	}
	return charges{rules: rules, idx: idx, caps: caps, units: len(units), starved: starved}
}

// refuse is the error for a call of cost c that rule i can never admit.
func (ch *charges) refuse(i int, c int64) error {
	r := ch.rules[i]
	if natural := cmp.Or(int64(r.Burst), int64(r.Limit)); c <= natural {
		return &CostError{Rule: r, Cost: c, Msg: fmt.Sprintf("rule %s with a margin of %v admits at most %d: no wait admits a call of %d",
			r, r.Margin, ch.caps[i], c)}
	}
	return &CostError{Rule: r, Cost: c}
}

// check refuses costs no wait can admit.
func (ch *charges) check(costs []int64) error {
	if costs == nil {
		if ch.starved >= 0 {
			return ch.refuse(ch.starved, 1)
		}
		return nil
	}
	if len(costs) != ch.units {
		return &CostError{Msg: fmt.Sprintf("%d costs for %d units", len(costs), ch.units)}
	}
	for _, c := range costs {
		if c < 0 {
			return &CostError{Cost: c, Msg: fmt.Sprintf("a negative cost (%d)", c)}
		}
	}
	for i := range ch.rules {
		if c := ch.cost(i, costs); c > ch.caps[i] {
			return ch.refuse(i, c)
		}
	}
	return nil
}

// cost returns what rule i is charged for costs (nil: 1 in every unit).
func (ch *charges) cost(i int, costs []int64) int64 {
	if costs == nil || i >= len(ch.idx) || ch.idx[i] < 0 {
		return 1
	}
	return costs[ch.idx[i]]
}

// waitCost is b.WaitTime for a call of cost c; only a CostBook is ever
// charged other than 1.
func waitCost(b Book, now, c int64) time.Duration {
	if c == 1 {
		return b.WaitTime(now)
	}
	return b.(CostBook).WaitTimeCost(now, c)
}

// recordCost is b.Record for a call of cost c.
func recordCost(b Book, now, c int64) {
	if c == 1 {
		b.Record(now)
		return
	}
	b.(CostBook).RecordCost(now, c)
}
