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

// Pending is a send taken by ObservePending whose settlement is not known
// yet: a server judges each request at its arrival and learns its usage
// with the answer, while later requests arrive.
type Pending struct {
	send  Send
	idx   int64
	est   []int64
	marks []pendingMark
	done  bool
}

// pendingMark is where a pending send lies in one cost rule, and the
// instant from which its settlement changes nothing there.
type pendingMark struct {
	rule  int
	m     mark
	until int64
}

// ObservePending takes the next send as ObserveCost does, charged its
// estimates from at, and returns it for a settlement to come (Settle).
// Until then, or for good when none comes, its estimates stand.
func (c *Checker) ObservePending(at, ref int64, estimates []int64) (*Pending, error) {
	idx := c.sends
	if err := c.ObserveCost(at, ref, estimates); err != nil {
		return nil, err
	}
	p := &Pending{send: Send{At: at, Ref: ref}, idx: idx, est: append([]int64(nil), estimates...)}
	if !c.slowPath || c.sends != idx+1 {
		return p, nil
	}
	for k := range c.slow {
		sr := &c.slow[k]
		if sr.unit < 0 {
			continue
		}
		if m, ok := sr.j.mark(at); ok {
			p.marks = append(p.marks, pendingMark{rule: k, m: m, until: sr.j.until()})
		}
	}
	return p, nil
}

// Settle settles a send taken by ObservePending: its actual costs replace
// its estimates from s.At on, as ObserveReserved's settlement does. s.At
// must be one that the sends taken after p were judged before: after the
// last of them, or at its instant under the closed boundary, where a
// settlement at a send's instant counts only after it. A second settlement
// of p is refused.
func (c *Checker) Settle(p *Pending, s Settlement) error {
	if err := c.checkSettlement(p.send, p.est, &s); err != nil {
		return err
	}
	switch {
	case p.done:
		return &CostError{Send: p.send, Msg: "settled twice"}
	case p.idx != c.sends-1 && c.due(s.At, c.last.At):
		return &CostError{Send: p.send, Msg: fmt.Sprintf("settled at %d ns, which a later send, at %d ns, was judged without", s.At, c.last.At)}
	}
	p.done = true
	var fixes []fix
	for _, pm := range p.marks {
		sr := &c.slow[pm.rule]
		if s.At < pm.until && s.Actual[sr.unit] != p.est[sr.unit] {
			fixes = append(fixes, fix{rule: pm.rule, m: pm.m, d: s.Actual[sr.unit] - p.est[sr.unit]})
		}
	}
	if len(fixes) > 0 {
		heap.Push(&c.settles, pendingSettle{at: s.At, idx: p.idx, fixes: fixes})
	}
	return nil
}

// SettleDue applies the settlements due for a send at now, so that Next
// and Load answer for a send at now; no send may come before now after it.
func (c *Checker) SettleDue(now int64) error {
	if c.err != nil || len(c.settles) == 0 || c.sends > 0 && now < c.last.At {
		return c.err
	}
	return c.settleDue(now)
}

// CheckReserved is CheckCosts for reserved sends: send i is charged its
// costs (estimates) from times[i] and settled at settled[i] to its actual
// costs, laid out as costs; a settlement of -1 is none (its estimates
// stand).
func CheckReserved(times, costs, actual, settled []int64, cfg Config) (Report, error) {
	nu := len(cfg.Units)
	if len(costs) != nu*len(times) || len(actual) != len(costs) || len(settled) != len(times) {
		return Report{}, &CostError{Msg: fmt.Sprintf("%d costs, %d actual costs and %d settlements for %d sends in %d units",
			len(costs), len(actual), len(settled), len(times), nu)}
	}
	c := New(cfg)
	defer c.hist.free() // c is done with, and the report holds copies
	for i, t := range times {
		var st *Settlement
		if settled[i] >= 0 {
			st = &Settlement{At: settled[i], Actual: actual[i*nu : (i+1)*nu]}
		}
		if err := c.ObserveReserved(t, int64(i), costs[i*nu:(i+1)*nu], st); err != nil {
			return Report{}, err
		}
	}
	return c.Report(), nil
}
