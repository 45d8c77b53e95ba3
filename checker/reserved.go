package checker

import (
	"container/heap"
	"fmt"

	"github.com/rlcheck/rlcheck/rule"
)

// A reserved send is charged its estimate from its instant and its actual
// cost from its settlement on: a window judged at s counts each earlier
// send at the cost known at s (docs/semantics.md, "Reserved costs"). The
// checker keeps each settlement until it is due, then corrects the rules
// whose windows still hold the send; call rules count a send once
// whatever its costs, and take no settlement.

// Settlement is when a reserved send's costs became known, and what they
// were.
type Settlement struct {
	// At is the settlement's instant, at or after the send's.
	At int64
	// Actual are the send's costs in the units of Config.Units, in place
	// of its estimates from At on.
	Actual []int64
}

// ObserveReserved takes the next send as ObserveCost does, charged its
// estimates from at; settle, when not nil, replaces them with its actual
// costs from its instant on. A settlement counts for a send at its very
// instant under the half-open boundary, only after it under the closed
// one; settlements due at one instant apply in the order of their sends.
// A send that is never settled keeps its estimates, as ObserveCost's do.
// The settlement is kept until it is due, or until the send has left
// every window it could change.
func (c *Checker) ObserveReserved(at, ref int64, estimates []int64, settle *Settlement) error {
	if settle != nil {
		if err := c.checkSettlement(Send{At: at, Ref: ref}, estimates, settle); err != nil {
			return err
		}
	}
	idx := c.sends
	if err := c.ObserveCost(at, ref, estimates); err != nil {
		return err
	}
	if settle != nil && c.slowPath && c.sends == idx+1 {
		c.reserve(idx, estimates, settle)
	}
	return nil
}

// checkSettlement refuses a settlement before its send, or with costs
// missing or negative.
func (c *Checker) checkSettlement(s Send, estimates []int64, settle *Settlement) error {
	switch {
	case settle.At < s.At:
		return &CostError{Send: s, Msg: fmt.Sprintf("settled at %d ns, before the send", settle.At)}
	case len(settle.Actual) != len(c.units):
		return &CostError{Send: s, Msg: fmt.Sprintf("%d actual costs for the %d units %q", len(settle.Actual), len(c.units), c.units)}
	}
	for k, v := range settle.Actual {
		if v < 0 {
			return &CostError{Send: s, Msg: fmt.Sprintf("negative actual cost %d in %s", v, c.units[k])}
		}
	}
	return nil
}

// reserve keeps the settlement of send idx, just taken, for the rules it
// changes.
func (c *Checker) reserve(idx int64, estimates []int64, settle *Settlement) {
	var fixes []fix
	for k := range c.slow {
		sr := &c.slow[k]
		if sr.unit < 0 || settle.Actual[sr.unit] == estimates[sr.unit] {
			continue
		}
		if m, ok := sr.j.mark(settle.At); ok {
			fixes = append(fixes, fix{rule: k, m: m, d: settle.Actual[sr.unit] - estimates[sr.unit]})
		}
	}
	if len(fixes) > 0 {
		heap.Push(&c.settles, pendingSettle{at: settle.At, idx: idx, fixes: fixes})
	}
}

// due reports whether a settlement at u counts for a send at s.
func (c *Checker) due(u, s int64) bool {
	return u < s || u == s && c.boundary != rule.Closed
}

// settleDue applies, in order, the settlements due for a send at at.
func (c *Checker) settleDue(at int64) error {
	for len(c.settles) > 0 && c.due(c.settles[0].at, at) {
		p := heap.Pop(&c.settles).(pendingSettle)
		for _, f := range p.fixes {
			sr := &c.slow[f.rule]
			if err := sr.j.settle(f.m, f.d, p.at); err != nil {
				c.err = &CostError{Send: Send{At: p.at}, Msg: fmt.Sprintf("rule %s: settling send %d: %v", sr.rep.Rule, p.idx, err)}
				return c.err
			}
		}
	}
	return nil
}

// settledBy applies the settlements due by now, and reports whether none
// is left pending: a checker waiting for one is not idle.
func (c *Checker) settledBy(now int64) bool {
	if len(c.settles) == 0 {
		return true
	}
	if c.err == nil && now >= c.last.At {
		_ = c.settleDue(now)
	}
	return len(c.settles) == 0
}

// fix is a settlement's correction of one slow rule: d units more (fewer
// when negative) for the send at m.
type fix struct {
	rule int
	m    mark
	d    int64
}

// pendingSettle is the settlement of send idx, due at at.
type pendingSettle struct {
	at, idx int64
	fixes   []fix
}

// settleHeap orders settlements by instant, ties by send.
type settleHeap []pendingSettle

func (h settleHeap) Len() int { return len(h) }
func (h settleHeap) Less(a, b int) bool {
	return h[a].at < h[b].at || h[a].at == h[b].at && h[a].idx < h[b].idx
}
func (h settleHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *settleHeap) Push(x any)   { *h = append(*h, x.(pendingSettle)) }
func (h *settleHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}
