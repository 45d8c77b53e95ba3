package checker

import (
	"fmt"
	"math"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Send is one send as the checker saw it. Ref is the caller's locator for it
// (a line number, say); the checker only carries it through to reports.
type Send struct {
	At  int64
	Ref int64
}

// Violation is one send that broke a rule.
type Violation struct {
	// Send is the offending send; Index is its 0-based position in the stream.
	Send  Send
	Index int64
	// WindowStart is the earliest send still in the window that the offending
	// send overfilled, and Count the sends in that window, the offending one
	// included. Count is a lower bound when CountSaturated is set.
	WindowStart    Send
	Count          int64
	CountSaturated bool
	// Window lists the sends in the overfilled window, oldest first and the
	// offending send last (at most the newest maxListed); it is filled only
	// for listed violations.
	Window []Send
	// WindowCosts are the costs of Window's sends in the rule's unit, for
	// the rules the exact path judges (every cost rule); nil otherwise.
	WindowCosts []int64
	// Cost is the offending send's cost and Units the cost of the sends in
	// the window, the offending one included: set for cost rules, where
	// Count still counts sends.
	Cost  int64
	Units int64
	// Span is the window of a fixed or first-call rule that the send
	// overfilled. For a bucket rule, Level is the level the send found,
	// rounded down to nine decimals ("0.8"), and WindowStart and Count
	// are the sends since the bucket was last full.
	Span  *Span
	Level string
}

// RuleReport is the verdict on one rule.
type RuleReport struct {
	Rule       rule.Rule
	Violations int64
	// MaxInWindow is the largest number of sends found in any window (the
	// largest cost, for a cost rule; 0 for a bucket rule, which has no
	// window), and MaxWindowStart the earliest send of the first such window.
	// MaxSaturated marks MaxInWindow as a lower bound: more sends shared a
	// window than the checker keeps (see Config.MaxTrack).
	MaxInWindow    int64
	MaxWindowStart Send
	MaxSaturated   bool
	First          *Violation
	// Listed holds the first Config.List violations, windows included.
	Listed []Violation
	// Explained counts the refused sends (ObserveRefused) that broke the
	// rule: refusals the rule explains. They are not violations.
	Explained int64
}

// Report is the checker's verdict over the whole stream.
type Report struct {
	// Sends counts every send observed, Refused those among them observed
	// as refused (ObserveRefused), which Sends includes.
	Sends   int64
	Refused int64
	// Explained counts the refused sends that broke at least one rule.
	Explained int64
	First     int64
	Last      int64
	Boundary  rule.Boundary
	Rules     []RuleReport
}

// Violations returns the total violation count over every rule.
func (r *Report) Violations() int64 {
	var n int64
	for _, rr := range r.Rules {
		n += rr.Violations
	}
	return n
}

// Config says what to check.
type Config struct {
	Rules    []rule.Rule
	Boundary rule.Boundary
	// List keeps the first List violations of each rule with their windows.
	List int
	// ListFrom, when set, lists only violations by sends at or after it (a
	// time shard's judged sends); earlier ones take no place in the list.
	ListFrom *int64
	// MaxTrack bounds, per rule, how many in-window sends are kept to count
	// MaxInWindow exactly (rounded up to a power of two). Zero means
	// max(2*(Limit+1), 65536). It never drops below Limit+1, which deciding
	// violations needs. The sends are kept once for all rules, in memory
	// that grows with the sends seen up to one more than the fullest window
	// seen, within this bound: a limit the log never reaches costs no
	// memory of its own.
	MaxTrack int
	// Units names the costs each send carries, in the order ObserveCost
	// takes them; nil lists the units the rules meter, in the order the
	// rules first name them (rule.Units). Every unit a rule meters must be
	// listed. When a rule meters a unit, sends must come with their costs
	// (ObserveCost): Observe and ObserveBatch refuse them.
	Units []string
	// OnViolation, when set, is called for every violation, in stream order
	// (the violations of one send in Rules order), with the index of the
	// broken rule in Rules. Window is not filled. It must not call the
	// checker's Idle: the history it frees is still being read.
	OnViolation func(rule int, v Violation)
}

// maxListed bounds the sends kept for each listed violation.
const maxListed = 1000

// OrderError reports a send earlier than the one before it.
type OrderError struct {
	Prev, At Send
}

func (e *OrderError) Error() string {
	return fmt.Sprintf("checker: send at %d ns comes after one at %d ns: sends must be in time order", e.At.At, e.Prev.At)
}

// Checker judges a stream of sends in time order. The zero value is not
// usable; call New. It is not safe for concurrent use.
type Checker struct {
	// slow holds the rules the fast path does not take (cost rules and
	// kinds other than sliding); slowPath sends every send through
	// observeSlow, which also returns err, a config the checker cannot
	// judge.
	slow     []slowRule
	slowPath bool
	err      error
	units    []string
	costs    bool  // some rule meters a unit
	fastIdx  []int // the index in Rules of each runs entry
	runOf    []int // the index in runs of each rule; -1 for a slow one
	userViol func(int, Violation)
	pending  []pendingViolation // one send's violations, to report in Rules order

	boundary rule.Boundary
	list     int
	listFrom int64
	onViol   func(int, Violation)
	rules    []ruleState
	runs     []ruleRun // the hot part of each rule's state, in Rules order
	hist     history
	sends    int64
	first    int64
	last     Send
	// refusing is set while ObserveRefused takes a send, and refused
	// counts those sends.
	refusing  bool
	refused   int64
	broke     bool // the refused send being taken broke a rule
	explained int64
	// settles are the settlements of reserved sends not yet due, a heap
	// by instant (ties in send order).
	settles settleHeap
}

type ruleState struct {
	report RuleReport
	window time.Duration
}

// ruleRun is what deciding a send needs of one rule, kept apart from the
// report so that it fits in one cache line.
type ruleRun struct {
	// Send j is in the window of send i when uint64(t[i]-t[j]) < w.
	w     uint64
	limit int64
	// m is the largest occupancy so far while it is exact; once it reaches
	// bound the next window as full marks the maximum a lower bound and m
	// becomes unreachable.
	m int64
	// look is min(m, limit): how far back the one test of a send looks.
	look  int64
	bound int64 // how many recent sends the rule may look at: a power of two
	viol  int64
	// detail is set while violations need more than counting.
	detail bool
	rep    *RuleReport // in Checker.rules
}

// unreachable is beyond any send index: a rule whose m is this large no
// longer looks for a larger maximum.
const unreachable = 1 << 62

// New returns a checker for cfg. A config the checker cannot judge (a
// rule that fails rule.Validate other than a plain sliding call rule, a
// unit missing from Units) makes every Observe return its error.
func New(cfg Config) *Checker {
	c := &Checker{boundary: cfg.Boundary, list: cfg.List, listFrom: math.MinInt64, onViol: cfg.OnViolation}
	if cfg.ListFrom != nil {
		c.listFrom = *cfg.ListFrom
	}
	c.units = cfg.Units
	if c.units == nil {
		c.units = rule.Units(cfg.Rules)
	}
	for i, r := range cfg.Rules {
		c.rules = append(c.rules, ruleState{report: RuleReport{Rule: r}, window: r.Window})
		if !r.SlidingCalls() {
			c.runOf = append(c.runOf, -1)
			c.addSlow(i, r)
			continue
		}
		limit := max(int64(r.Limit), 0) // a negative limit is broken by every send, as 0 is
		var w uint64                    // a negative window holds nothing
		if r.Window >= 0 {
			w = uint64(r.Window)
			if cfg.Boundary == rule.Closed {
				w++ // at most 2^63: no overflow
			}
		}
		c.runOf = append(c.runOf, len(c.runs))
		c.fastIdx = append(c.fastIdx, i)
		c.runs = append(c.runs, ruleRun{
			w:      w,
			limit:  limit,
			bound:  bound(limit, cfg.MaxTrack),
			detail: true,
		})
	}
	for i := range c.runs {
		c.runs[i].rep = &c.rules[c.fastIdx[i]].report
	}
	for i := range c.slow {
		c.slow[i].rep = &c.rules[c.slow[i].idx].report
	}
	c.slowPath = len(c.slow) > 0 || c.err != nil
	if c.slowPath && c.onViol != nil {
		// The fast rules report a send's violations before the slow ones;
		// they are gathered and passed on in Rules order.
		c.userViol = c.onViol
		c.onViol = func(r int, v Violation) { c.pending = append(c.pending, pendingViolation{r, v}) }
	}
	c.hist.reset(0)
	c.hist.setNeed(c.need())
	return c
}

// bound returns the power of two of sends a rule with this limit may look
// back at: max(2(limit+1), 65536) or track, never below limit+1, and at
// most 2^62, which no stream reaches.
func bound(limit int64, track int) int64 {
	limit = min(limit, unreachable/2)
	t := int64(track)
	if t == 0 {
		t = max(2*(limit+1), 1<<16)
	}
	t = min(max(t, limit+1), unreachable)
	b := int64(1)
	for b < t {
		b <<= 1
	}
	return b
}

// need returns how many recent sends the rules need kept: m+2 for each
// rule (m+1 sends for the window that grows the maximum, and the send
// before it), within its bound. Deciding violations needs no more, since a
// rule looks back min(m, Limit) sends: a limit the stream never reaches
// costs no memory.
func (c *Checker) need() int64 {
	var n int64
	for _, u := range c.runs {
		n = max(n, min(u.m, u.bound-2)+2)
	}
	return n
}

// Observe takes the next send. Sends must come in time order (equal times
// keep their order); an earlier send is refused with an *OrderError.
func (c *Checker) Observe(at, ref int64) error {
	if c.slowPath {
		return c.observeSlow(at, ref, nil)
	}
	if c.sends > 0 && at < c.last.At {
		return &OrderError{Prev: c.last, At: Send{At: at, Ref: ref}}
	}
	if c.sends == 0 {
		c.first = at
	}
	ats, refs := [1]int64{at}, [1]int64{ref}
	c.observeRun(ats[:], refs[:], c.sends)
	c.sends++
	c.last = Send{At: at, Ref: ref}
	return nil
}

// ObserveBatch takes a run of sends at once, ats[i] with refs[i]; it gives
// the verdicts of calling Observe on each in turn. An unsorted batch is
// refused whole.
func (c *Checker) ObserveBatch(ats, refs []int64) error {
	if len(ats) == 0 {
		return nil
	}
	refs = refs[:len(ats)]
	prev := ats[0]
	if c.sends > 0 && prev < c.last.At {
		return &OrderError{Prev: c.last, At: Send{At: prev, Ref: refs[0]}}
	}
	for i, at := range ats {
		if at < prev {
			return &OrderError{Prev: Send{At: prev, Ref: refs[i-1]}, At: Send{At: at, Ref: refs[i]}}
		}
		prev = at
	}
	if c.slowPath && !c.costs {
		return c.ObserveCostBatch(ats, refs, nil)
	}
	if c.slowPath {
		for i, at := range ats {
			if err := c.observeSlow(at, refs[i], nil); err != nil {
				return err
			}
		}
		return nil
	}
	if c.sends == 0 {
		c.first = ats[0]
	}
	c.observeRun(ats, refs, c.sends)
	c.sends += int64(len(ats))
	c.last = Send{At: ats[len(ats)-1], Ref: refs[len(ats)-1]}
	return nil
}

// observeRun takes sends ats (with refs), the first being send idx0, and
// decides each against every rule in one pass over the shared history.
// Send i breaks rule N/W when t[i] - t[i-N] < W, and a rule's largest
// occupancy m grows by one whenever t[i] - t[i-m] < W: a window cannot gain
// more than one send per send. While m < N no window can hold N+1 sends,
// so only the second test is made; once m >= N, the second can only pass
// when the first does. A rule thus costs a send one load and one comparison
// at t[i-min(m, N)], whose branch is almost always predicted; the rare
// paths (a violation, a maximum at the bound, growing the history) are out
// of line.
func (c *Checker) observeRun(ats, refs []int64, idx0 int64) {
	h := &c.hist
	runs := c.runs
	base, growAt := h.base, h.growAt
	times, refRing := h.at, h.ref
	refs = refs[:len(ats)]
	for i, at := range ats {
		idx := idx0 + int64(i)
		if idx >= growAt {
			h.grow(idx)
			times, refRing, growAt = h.at, h.ref, h.growAt
		}
		if len(times) == 0 {
			panic("checker: empty history") // grow allocates it before the first send
		}
		mask := len(times) - 1
		times[int(idx)&mask], refRing[int(idx)&mask] = at, refs[i]
		for r := range runs {
			u := &runs[r]
			if j := idx - u.look; j >= base {
				if k := int(j) & mask; uint64(at-times[k]) < u.w {
					if u.m >= u.limit {
						c.overfull(r, idx)
						growAt = h.growAt
						continue
					}
					// This window holds exactly m+1 sends, from send j on.
					u.m++
					u.look = u.m
					u.rep.MaxInWindow, u.rep.MaxWindowStart = u.m, Send{At: times[k], Ref: refRing[k]}
					if u.m+2 > h.need {
						h.setNeed(c.need())
						growAt = h.growAt
					}
				}
			}
		}
	}
}

// overfull takes send idx, which broke rule r: it counts and reports the
// violation, and looks for a new maximum, which only a violation can give
// once m >= N.
func (c *Checker) overfull(r int, idx int64) {
	u := &c.runs[r]
	h := &c.hist
	switch {
	case c.refusing:
		u.rep.Explained++
		c.broke = true
	case u.detail:
		u.viol++
		c.violation(r, idx)
	default:
		u.viol++
	}
	j := idx - u.m
	switch {
	case j < h.base:
	case u.m < u.bound:
		if h.in(j, idx, u.w) {
			u.m++
			u.rep.MaxInWindow, u.rep.MaxWindowStart = u.m, h.get(j)
			if u.m+2 > h.need {
				h.setNeed(c.need())
			}
		}
	case h.in(idx-u.bound+1, idx, u.w):
		c.saturate(r, idx)
	}
}

// saturate records that send idx's window holds at least as many sends as
// rule r may look back at: the maximum is known only as a lower bound, and
// larger ones are no longer looked for.
func (c *Checker) saturate(r int, idx int64) {
	u := &c.runs[r]
	rep := u.rep
	start, saturated := c.hist.windowStart(idx, u.w, u.bound)
	rep.MaxInWindow = idx - start + 1
	rep.MaxWindowStart = c.hist.get(start)
	rep.MaxSaturated = saturated
	u.m = unreachable
}

// violation records the details of send idx, which broke rule r.
func (c *Checker) violation(r int, idx int64) {
	u := &c.runs[r]
	h := &c.hist
	rep := u.rep
	start, saturated := h.windowStart(idx, u.w, u.bound)
	v := Violation{
		Send:           h.get(idx),
		Index:          idx,
		WindowStart:    h.get(start),
		Count:          idx - start + 1,
		CountSaturated: saturated,
	}
	if rep.First == nil {
		first := v
		rep.First = &first
	}
	if c.onViol != nil {
		c.onViol(c.fastIdx[r], v)
	}
	if len(rep.Listed) < c.list && v.Send.At >= c.listFrom {
		v.Window = h.last(start, idx, maxListed)
		rep.Listed = append(rep.Listed, v)
	}
	u.detail = c.onViol != nil || len(rep.Listed) < c.list
}

// Idle reports whether every window has moved past the last send at now,
// and if so frees the memory kept for the windows (for other checkers to
// grow into); Observe allocates it again. Use it to keep memory in line with the number of active streams
// when checking many keys.
func (c *Checker) Idle(now int64) bool {
	if !c.settledBy(now) {
		return false
	}
	if c.hist.at != nil {
		for _, i := range c.fastIdx {
			if c.boundary.Within(time.Duration(now-c.last.At), c.rules[i].window) {
				return false
			}
		}
	}
	for _, sr := range c.slow {
		if !sr.j.idle(now) {
			return false
		}
	}
	for _, sr := range c.slow {
		sr.j.free()
	}
	c.hist.reset(c.sends)
	return true
}

// Report returns the verdict so far; the checker may go on observing.
func (c *Checker) Report() Report {
	r := Report{Sends: c.sends, Refused: c.refused, Explained: c.explained, First: c.first, Last: c.last.At, Boundary: c.boundary}
	for i, u := range c.runs {
		c.rules[c.fastIdx[i]].report.Violations = u.viol
	}
	for _, st := range c.rules {
		r.Rules = append(r.Rules, st.report)
	}
	return r
}

// Tally returns rule r's violations and its fullest window so far, as
// Report would, without building a report: a server's scrape reads every
// live key and must not leave a report per key behind as garbage.
func (c *Checker) Tally(r int) (violations, maxInWindow int64) {
	rep := &c.rules[r].report
	if k := c.runOf[r]; k >= 0 {
		return c.runs[k].viol, rep.MaxInWindow
	}
	return rep.Violations, rep.MaxInWindow
}

// Last returns the instant of the latest send observed (0 before the first).
func (c *Checker) Last() int64 { return c.last.At }

// Check runs the checker over times already in memory, in time order; the
// Ref of each send is its index.
func Check(times []int64, cfg Config) (Report, error) {
	c := New(cfg)
	for i, t := range times {
		if err := c.Observe(t, int64(i)); err != nil {
			c.hist.free()
			return Report{}, err
		}
	}
	rep := c.Report()
	c.hist.free() // c is done with, and the report holds copies
	return rep, nil
}

// CheckCosts is Check for sends with costs: costs holds len(cfg.Units)
// costs a send, send i's from costs[i*len(cfg.Units)], in the units'
// order; with no units it is Check. The Ref of each send is its index.
func CheckCosts(times, costs []int64, cfg Config) (Report, error) {
	nu := len(cfg.Units)
	if nu == 0 {
		return Check(times, cfg)
	}
	if len(costs) != nu*len(times) {
		return Report{}, &CostError{Msg: fmt.Sprintf("%d costs for %d sends in %d units", len(costs), len(times), nu)}
	}
	c := New(cfg)
	for i, t := range times {
		if err := c.ObserveCost(t, int64(i), costs[i*nu:(i+1)*nu]); err != nil {
			c.hist.free()
			return Report{}, err
		}
	}
	rep := c.Report()
	c.hist.free()
	return rep, nil
}
