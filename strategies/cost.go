package strategies

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// CostLimiter is a Limiter that meters costs. AcquireCost is Acquire for a
// call that costs costs[u] in the u-th unit the limiter's rules meter, the
// units in the order the rules first name them (Units; the checker's
// UnitsOf). A call rule charges every call 1 whatever its costs; a cost of
// 0 takes no room in a cost rule. A call that could never be admitted (a
// cost above a rule's limit) fails at once with a *CostError, as does a
// negative cost or a wrong number of costs. Acquire charges 1 in every
// unit.
type CostLimiter interface {
	Limiter
	AcquireCost(ctx context.Context, costs []int64) error
}

// CostError is a call a limiter refuses at once, without waiting: its cost
// in Rule's unit is above the rule's limit (no wait would admit it), or its
// costs are malformed (Rule is then the zero rule and Msg says why).
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

// Units names the units rules meter, in the order the rules first name
// them: the order of AcquireCost's costs.
func Units(rules []rule.Rule) []string { return rule.Units(rules) }

// charges maps a call's costs to what each rule is charged.
type charges struct {
	rules []rule.Rule // nil: every rule a call rule of unknown limit
	idx   []int       // per rule: its unit's index in costs, -1 for a call rule
	units int
}

func newCharges(rules []rule.Rule) charges {
	units := Units(rules)
	idx := make([]int, len(rules))
	for i, r := range rules {
		idx[i] = slices.Index(units, r.Unit)
	}
	return charges{rules: rules, idx: idx, units: len(units)}
}

// check refuses costs no wait can admit.
func (ch *charges) check(costs []int64) error {
	if costs == nil {
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
	for i, r := range ch.rules {
		if c := ch.cost(i, costs); c > int64(r.Limit) {
			return &CostError{Rule: r, Cost: c}
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
