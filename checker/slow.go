package checker

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// The rules the fast path does not take, cost rules and the kinds other
// than sliding, are judged here one send at a time, each by a judge that
// keeps its rule's state exactly as docs/semantics.md states it: simple
// rather than fast, since these rules are rare and their logs short.

// CostError is a send the checker cannot take: its costs are missing or
// negative, or a window's sum would overflow int64.
type CostError struct {
	Send Send
	Msg  string
}

func (e *CostError) Error() string {
	return fmt.Sprintf("checker: send at %d ns: %s", e.Send.At, e.Msg)
}

// Span is a window [From, To) of a fixed or first-call rule, clamped to
// the int64 range.
type Span struct {
	From int64
	To   int64
}

// judge keeps the state of one slow rule.
type judge interface {
	// take decides send s of cost c: whether it broke the rule, given the
	// rule's limit. The sum of a window's costs must stay within int64.
	take(s Send, c int64) (broke bool, err error)
	// window describes, after take, the window the send was judged in:
	// its earliest send, how many sends and units it holds (ok false when
	// the rule has no window, as a bucket).
	window() (start Send, count, units int64, ok bool)
	// detail adds the kind's own facts to a violation by the last send
	// taken, and its window's sends when list is set.
	detail(v *Violation, list bool)
	// idle reports whether a send at now would find the rule as a new
	// judge does; free then drops what the judge keeps.
	idle(now int64) bool
	free()
	// load is the sum of costs a send at now would find in its window,
	// its own left out; it changes nothing.
	load(now int64) int64
	// next is the earliest instant from now at which a send of cost c
	// would not break the rule (Never when none would); it changes nothing.
	next(now, c int64) int64
	// mark locates the last send taken for a settle at u; false when
	// that settlement could change nothing (the send took nothing, lies in
	// no window, or will have left its window by u).
	mark(u int64) (mark, bool)
	// until is the instant from which a settlement of the last send taken
	// changes nothing (Never when none comes): where mark turns false.
	until() int64
	// settle adds d, its actual cost less its estimate, to the send at m
	// from instant at on (at or after the last send taken); a send that
	// has left every window costs nothing.
	settle(m mark, d, at int64) error
}

// mark locates a send in a judge: where it lies in the judge's state, and
// in the sends kept for listing.
type mark struct{ pos, list int64 }

// slowRule is one slow rule with its judge.
type slowRule struct {
	idx  int // in Config.Rules
	unit int // in the cost vector; -1 for a call rule (cost 1)
	rep  *RuleReport
	j    judge
}

// newJudge returns the judge for r, which passed rule.Validate; keep says
// whether violations are listed with their windows' sends.
func newJudge(r rule.Rule, b rule.Boundary, keep bool) (judge, error) {
	limit, w := int64(r.Limit), int64(r.Window)
	switch r.Kind {
	case rule.Sliding:
		uw := uint64(w)
		if b == rule.Closed {
			uw++
		}
		return &slidingJudge{limit: limit, w: uw}, nil
	case rule.Fixed:
		loc, err := r.Location()
		if err != nil {
			return nil, err
		}
		return &fixedJudge{limit: limit, w: w, o: int64(r.Offset), loc: loc, windowSums: windowSums{sends: recent{keep: keep}}}, nil
	case rule.Bucket:
		return &bucketJudge{w: uint64(w), rate: uint64(r.Limit), full: mul64(uint64(r.Burst), uint64(w)), since: recent{keep: keep}}, nil
	case rule.FirstCall:
		return &firstCallJudge{limit: limit, w: w, windowSums: windowSums{sends: recent{keep: keep}}}, nil
	}
	return nil, fmt.Errorf("unknown kind %v", r.Kind)
}

// exceeds reports whether a send of cost c breaks a window already holding
// sum, without overflow: c > limit-sum, with limit > 0 and sum, c >= 0.
func exceeds(c, sum, limit int64) bool { return c > limit-sum }

// addCost adds c to a window's sum, refusing to overflow. It is small
// enough for the compiler to inline into each judge's take.
func addCost(sum, c int64) (int64, error) {
	if sum > math.MaxInt64-c {
		return sum, errOverflow
	}
	return sum + c, nil
}

var errOverflow = fmt.Errorf("a window's costs pass %d", int64(math.MaxInt64))

// costed is a send with its cost, as a sliding judge keeps it.
type costed struct {
	s Send
	c int64
}

// slidingJudge keeps the sends in (t-W, t] with the sum of their costs,
// in a ring: the sends leave from its head and join at its end, so none
// is ever moved but when the ring doubles.
type slidingJudge struct {
	limit int64
	w     uint64   // send j is in the window of send i when t[i]-t[j] < w
	q     []costed // the ring, a power of two long
	head  int      // the oldest send in the window, at q[head&mask]
	n     int      // the sends in the window
	sum   int64
}

func (j *slidingJudge) at(k int) *costed { return &j.q[(j.head+k)&(len(j.q)-1)] }

func (j *slidingJudge) take(s Send, c int64) (bool, error) {
	j.expire(s.At)
	broke := exceeds(c, j.sum, j.limit)
	sum, err := addCost(j.sum, c)
	if err != nil {
		return false, err
	}
	if j.n == len(j.q) {
		j.grow()
	}
	j.sum = sum
	*j.at(j.n) = costed{s, c}
	j.n++
	return broke, nil
}

// expire drops the sends out of the window of a send at at.
func (j *slidingJudge) expire(at int64) {
	mask := len(j.q) - 1
	for j.n > 0 && uint64(at-j.q[j.head&mask].s.At) >= j.w {
		j.sum -= j.q[j.head&mask].c
		j.head++
		j.n--
	}
}

// grow doubles the ring; each send keeps its position head+k, which
// marks hold.
func (j *slidingJudge) grow() {
	q := make([]costed, max(2*len(j.q), 16))
	for k := range j.n {
		q[(j.head+k)&(len(q)-1)] = *j.at(k)
	}
	j.q = q
}

func (j *slidingJudge) mark(u int64) (mark, bool) {
	return mark{pos: int64(j.head + j.n - 1)}, uint64(u-j.at(j.n-1).s.At) < j.w
}

func (j *slidingJudge) until() int64 { return add(j.at(j.n-1).s.At, j.w) }

func (j *slidingJudge) settle(m mark, d, at int64) error {
	j.expire(at)
	if m.pos < int64(j.head) {
		return nil
	}
	sum, err := addCost(j.sum, d)
	if d < 0 {
		sum, err = j.sum+d, nil
	}
	if err != nil {
		return err
	}
	j.sum = sum
	j.q[int(m.pos)&(len(j.q)-1)].c += d
	return nil
}

func (j *slidingJudge) window() (Send, int64, int64, bool) {
	return j.at(0).s, int64(j.n), j.sum, true
}

func (j *slidingJudge) detail(v *Violation, list bool) {
	if list {
		for k := max(0, j.n-maxListed); k < j.n; k++ {
			e := j.at(k)
			v.Window = append(v.Window, e.s)
			v.WindowCosts = append(v.WindowCosts, e.c)
		}
	}
}

func (j *slidingJudge) idle(now int64) bool {
	return j.n == 0 || uint64(now-j.at(j.n-1).s.At) >= j.w
}

func (j *slidingJudge) free() { *j = slidingJudge{limit: j.limit, w: j.w} }

func (j *slidingJudge) load(now int64) int64 {
	sum := j.sum
	for k := 0; k < j.n && uint64(now-j.at(k).s.At) >= j.w; k++ {
		sum -= j.at(k).c
	}
	return sum
}

// recent keeps at least the newest maxListed sends of a window, with
// their costs, when keep is set: when violations are listed.
type recent struct {
	s    []costed
	keep bool
	// gone counts the sends dropped from the front of s since the last
	// reset: send k of the window is at s[k-gone].
	gone int64
}

// reset empties the list for a new window.
func (r *recent) reset() { r.s, r.gone = r.s[:0], 0 }

// last returns the position of the newest send, -1 when none is kept.
func (r *recent) last() int64 {
	if !r.keep {
		return -1
	}
	return r.gone + int64(len(r.s)) - 1
}

// fix adds d to the cost of the send at position k, if still kept.
func (r *recent) fix(k, d int64) {
	if k >= r.gone && k-r.gone < int64(len(r.s)) {
		r.s[k-r.gone].c += d
	}
}

func (r *recent) add(s Send, c int64) {
	if r.keep {
		r.push(s, c)
	}
}

func (r *recent) push(s Send, c int64) {
	if len(r.s) >= 2*maxListed {
		drop := len(r.s) - maxListed + 1
		r.s = r.s[:copy(r.s, r.s[drop:])]
		r.gone += int64(drop)
	}
	r.s = append(r.s, costed{s, c})
}

// list fills v's Window and WindowCosts with the newest maxListed sends.
func (r *recent) list(v *Violation) {
	for _, e := range r.s[max(0, len(r.s)-maxListed):] {
		v.Window = append(v.Window, e.s)
		v.WindowCosts = append(v.WindowCosts, e.c)
	}
}

// span returns [at-d, at-d+w) clamped to the int64 range, for 0 <= d < w.
func span(at, d, w int64) Span {
	sp := Span{From: math.MinInt64, To: math.MaxInt64}
	if at >= math.MinInt64+d {
		sp.From = at - d
	}
	if rest := w - d; at <= math.MaxInt64-rest {
		sp.To = at + rest
	}
	return sp
}

// windowSums is what fixed and first-call rules keep of their current
// window.
type windowSums struct {
	span  Span
	start Send
	count int64
	sum   int64
	sends recent
	gen   int64 // counts the windows opened, which marks name
}

func (ws *windowSums) open(sp Span, s Send) {
	sends := ws.sends
	sends.reset()
	*ws = windowSums{span: sp, start: s, sends: sends, gen: ws.gen + 1}
}

func (ws *windowSums) mark() mark { return mark{pos: ws.gen, list: ws.sends.last()} }

// settle corrects a send of the current window; one of an earlier window
// costs nothing.
func (ws *windowSums) settle(m mark, d, _ int64) error {
	if m.pos != ws.gen {
		return nil
	}
	if d > 0 && ws.sum > math.MaxInt64-d {
		return errOverflow
	}
	ws.sum += d
	ws.sends.fix(m.list, d)
	return nil
}

func (ws *windowSums) take(s Send, c, limit int64) (bool, error) {
	if ws.sum > math.MaxInt64-c {
		return false, errOverflow
	}
	broke := exceeds(c, ws.sum, limit)
	ws.sum += c
	ws.count++
	ws.sends.add(s, c)
	return broke, nil
}

func (ws *windowSums) window() (Send, int64, int64, bool) {
	return ws.start, ws.count, ws.sum, true
}

func (ws *windowSums) detail(v *Violation, list bool) {
	sp := ws.span
	v.Span = &sp
	if list {
		ws.sends.list(v)
	}
}

// fixedJudge keeps the sum of the current fixed window, laid out by
// rule.FixedSpan.
type fixedJudge struct {
	limit, w, o int64
	loc         *time.Location // windows are this zone's days when set
	has         bool
	windowSums
}

// spanOf returns the window that holds at.
func (j *fixedJudge) spanOf(at int64) Span {
	from, to := rule.FixedSpan(at, j.w, j.o, j.loc)
	return Span{From: from, To: to}
}

// in reports whether at lies in the current window. A span clamped at the
// int64 range's end holds the instants past it too, which compare by the
// window's start.
func (j *fixedJudge) in(at int64) bool {
	return j.has && (at >= j.span.From && at < j.span.To || j.spanOf(at).From == j.span.From)
}

func (j *fixedJudge) take(s Send, c int64) (bool, error) {
	if !j.has || s.At < j.span.From || s.At >= j.span.To {
		j.move(s)
	}
	return j.windowSums.take(s, c, j.limit)
}

// move opens the window of s unless s lies in the current one.
func (j *fixedJudge) move(s Send) {
	if !j.in(s.At) {
		j.has = true
		j.open(j.spanOf(s.At), s)
	}
}

func (j *fixedJudge) mark(u int64) (mark, bool) { return j.windowSums.mark(), j.in(u) }

func (j *fixedJudge) until() int64 { return j.span.To }

func (j *fixedJudge) idle(now int64) bool { return !j.in(now) }

func (j *fixedJudge) load(now int64) int64 {
	if j.in(now) {
		return j.sum
	}
	return 0
}

func (j *fixedJudge) free() {
	*j = fixedJudge{limit: j.limit, w: j.w, o: j.o, loc: j.loc, windowSums: windowSums{sends: recent{keep: j.sends.keep}}}
}

// firstCallJudge keeps the window opened by the first send after the
// previous one closed. A send that finds no window open and breaks the
// rule on its own (its cost alone exceeds the limit) opens none: the
// provider refused it, so the next send opens the window instead. lone
// marks such a send as the last taken, so that its violation names no
// window.
type firstCallJudge struct {
	limit, w  int64
	has, lone bool
	loneSend  Send
	loneCost  int64
	windowSums
}

func (j *firstCallJudge) take(s Send, c int64) (bool, error) {
	j.lone = false
	if !j.has || uint64(s.At-j.span.From) >= uint64(j.w) {
		if exceeds(c, 0, j.limit) {
			j.has, j.lone, j.loneSend, j.loneCost = false, true, s, c
			return true, nil
		}
		j.has = true
		j.open(span(s.At, 0, j.w), s)
	}
	return j.windowSums.take(s, c, j.limit)
}

// window describes a lone violator as a window of its own, so that the
// fullest window a report gives is never below what broke the rule.
func (j *firstCallJudge) window() (Send, int64, int64, bool) {
	if j.lone {
		return j.loneSend, 1, j.loneCost, true
	}
	return j.windowSums.window()
}

// detail gives a lone violator no span: it opened no window.
func (j *firstCallJudge) detail(v *Violation, list bool) {
	if !j.lone {
		j.windowSums.detail(v, list)
		return
	}
	if list {
		v.Window, v.WindowCosts = append(v.Window, j.loneSend), append(v.WindowCosts, j.loneCost)
	}
}

func (j *firstCallJudge) mark(u int64) (mark, bool) {
	return j.windowSums.mark(), !j.lone && uint64(u-j.span.From) < uint64(j.w)
}

func (j *firstCallJudge) until() int64 { return add(j.span.From, uint64(j.w)) }

func (j *firstCallJudge) idle(now int64) bool {
	return !j.has || uint64(now-j.span.From) >= uint64(j.w)
}

func (j *firstCallJudge) load(now int64) int64 {
	if j.idle(now) {
		return 0
	}
	return j.sum
}

func (j *firstCallJudge) free() {
	*j = firstCallJudge{limit: j.limit, w: j.w, windowSums: windowSums{sends: recent{keep: j.sends.keep}}}
}

// bucketJudge keeps a token bucket's level multiplied by its window, so
// that refilling Limit units per Window stays in integers: level*W grows
// by Limit per nanosecond. A settlement that takes more than the level
// holds leaves it below zero: debt*W, with level 0, until refills pay it.
type bucketJudge struct {
	w, rate uint64
	full    u128 // Burst*W
	has     bool
	prev    int64
	level   u128 // level*W after the last send or settlement
	debt    u128
	before  u128 // level*W before the last send, or its debt when inDebt
	inDebt  bool
	drained bool // the last send took its cost
	// The sends since the bucket was last full, the last one included.
	since recent
	gen   int64 // counts the times since was reset, which marks name
	first Send
	count int64
}

// refill returns the level at now, 0 while in debt.
func (j *bucketJudge) refill(now int64) u128 {
	l, _ := j.levelAt(now)
	return l
}

// levelAt returns the level and the debt at now.
func (j *bucketJudge) levelAt(now int64) (level, debt u128) {
	r := mul64(j.rate, uint64(now-j.prev))
	if j.debt != (u128{}) {
		if r.less(j.debt) {
			return u128{}, j.debt.sub(r)
		}
		r = r.sub(j.debt)
	}
	l := j.level.add(r)
	if j.full.less(l) {
		return j.full, u128{}
	}
	return l, u128{}
}

func (j *bucketJudge) take(s Send, c int64) (bool, error) {
	l, debt := j.full, u128{}
	if j.has {
		l, debt = j.levelAt(s.At)
	}
	j.has, j.prev, j.before, j.inDebt = true, s.At, l, debt != u128{}
	if j.inDebt {
		j.before = debt
	}
	if l == j.full {
		j.first, j.count = s, 0
		j.since.reset()
		j.gen++
	}
	j.count++
	j.since.add(s, c)
	need := mul64(uint64(c), j.w)
	j.level, j.debt, j.drained = l, debt, false
	if j.inDebt || l.less(need) {
		return true, nil // the provider refused the send: it takes nothing
	}
	j.level, j.drained = l.sub(need), true
	return false, nil
}

func (j *bucketJudge) mark(int64) (mark, bool) {
	return mark{pos: j.gen, list: j.since.last()}, j.drained
}

func (j *bucketJudge) until() int64 { return Never }

// maxDebt bounds a debt to 2^63 units, so that it stays well inside u128.
func (j *bucketJudge) maxDebt() u128 { return mul64(math.MaxInt64, j.w) }

// settle gives back the estimate less the actual, never above the
// burst, or takes the difference, into debt when the level runs out.
func (j *bucketJudge) settle(m mark, d, at int64) error {
	j.level, j.debt = j.levelAt(at)
	j.prev = at
	if d < 0 {
		j.level, j.debt = j.lift(mul64(uint64(-d), j.w))
	} else {
		take := mul64(uint64(d), j.w)
		if j.level.less(take) {
			debt := j.debt.add(take.sub(j.level))
			if j.maxDebt().less(debt) {
				return errOverflow
			}
			j.level, j.debt = u128{}, debt
		} else {
			j.level = j.level.sub(take)
		}
	}
	if m.pos == j.gen {
		j.since.fix(m.list, d)
	}
	return nil
}

// lift adds r to the level, paying the debt first, never above the burst.
func (j *bucketJudge) lift(r u128) (level, debt u128) {
	if r.less(j.debt) {
		return u128{}, j.debt.sub(r)
	}
	l := j.level.add(r.sub(j.debt))
	if j.full.less(l) {
		l = j.full
	}
	return l, u128{}
}

func (j *bucketJudge) window() (Send, int64, int64, bool) { return Send{}, 0, 0, false }

func (j *bucketJudge) detail(v *Violation, list bool) {
	v.WindowStart, v.Count = j.first, j.count
	v.Level = j.before.decimal(j.w)
	if j.inDebt {
		v.Level = "-" + v.Level
	}
	if list {
		j.since.list(v)
	}
}

func (j *bucketJudge) idle(now int64) bool {
	if !j.has {
		return true
	}
	l, debt := j.levelAt(now)
	return l == j.full && debt == u128{}
}

// load is 0: a bucket keeps a level, never a sum that could overflow.
func (j *bucketJudge) load(int64) int64 { return 0 }

func (j *bucketJudge) free() {
	*j = bucketJudge{w: j.w, rate: j.rate, full: j.full, since: recent{keep: j.since.keep}}
}

// pendingViolation is a violation held back until the send's violations
// of every rule are known.
type pendingViolation struct {
	rule int
	v    Violation
}

// addSlow adds rule i, r, to the slow rules, or records why it cannot be
// judged.
func (c *Checker) addSlow(i int, r rule.Rule) {
	if c.err != nil {
		return
	}
	if err := r.Validate(); err != nil {
		c.err = fmt.Errorf("checker: rule %s: %v", r, err)
		return
	}
	unit := -1
	if r.Unit != "" {
		if unit = slices.Index(c.units, r.Unit); unit < 0 {
			c.err = fmt.Errorf("checker: rule %s meters %s, which the units %q do not name", r, r.Unit, c.units)
			return
		}
		c.costs = true
	}
	j, err := newJudge(r, c.boundary, c.list > 0)
	if err != nil {
		c.err = fmt.Errorf("checker: rule %s: %v", r, err)
		return
	}
	c.slow = append(c.slow, slowRule{idx: i, unit: unit, j: j})
}

// ObserveCost takes the next send with its costs, costs[k] in the unit
// Config.Units[k] (a non-negative whole number); call rules count the send
// once whatever its costs. Sends must come in time order, as for Observe.
// After an error other than an *OrderError the checker's verdict is
// undefined, and every later send returns the same error.
func (c *Checker) ObserveCost(at, ref int64, costs []int64) error {
	if costs == nil {
		costs = []int64{}
	}
	if !c.slowPath {
		if len(costs) != len(c.units) {
			return &CostError{Send: Send{At: at, Ref: ref}, Msg: fmt.Sprintf("%d costs for the %d units %q", len(costs), len(c.units), c.units)}
		}
		return c.Observe(at, ref)
	}
	return c.observeSlow(at, ref, costs)
}

// ObserveRefused takes the next send as ObserveCost does, for a send the
// provider refused (a 429) under the reading that refused calls count
// toward later windows: it fills every window as any send does (a bucket
// drains only where it had room, as for a violating send), but it is not
// judged. Where a rule would have refused it too, the rule's
// RuleReport.Explained counts it instead of a violation.
func (c *Checker) ObserveRefused(at, ref int64, costs []int64) error {
	c.refusing, c.broke = true, false
	err := c.ObserveCost(at, ref, costs)
	c.refusing = false
	if err == nil {
		c.refused++
		if c.broke {
			c.explained++
		}
	}
	return err
}

// Fits returns nil when a send at at with costs (as ObserveCost takes
// them, at or after the last send) keeps every window's sum of costs
// within int64, and otherwise the *CostError ObserveCost would return,
// naming the rule. ObserveCost's error leaves the checker unable to take
// more sends; a server asks Fits first, so that it can refuse that one
// request unjudged and go on judging the others.
func (c *Checker) Fits(at int64, costs []int64) error {
	for k := range c.slow {
		sr := &c.slow[k]
		if sr.unit < 0 || sr.unit >= len(costs) || costs[sr.unit] < 0 {
			continue // ObserveCost refuses what is missing or negative
		}
		if sr.j.load(at) > math.MaxInt64-costs[sr.unit] {
			return &CostError{Send: Send{At: at}, Msg: fmt.Sprintf("rule %s: %v", sr.rep.Rule, errOverflow)}
		}
	}
	return nil
}

// observeSlow takes one send through the fast rules and then the slow ones;
// costs is nil when the send came without costs.
func (c *Checker) observeSlow(at, ref int64, costs []int64) error {
	if c.err != nil {
		return c.err
	}
	s := Send{At: at, Ref: ref}
	if err := c.checkCosts(s, costs); err != nil {
		return err
	}
	if c.sends > 0 && at < c.last.At {
		return &OrderError{Prev: c.last, At: s}
	}
	if len(c.settles) > 0 {
		if err := c.settleDue(at); err != nil {
			return err
		}
	}
	if c.sends == 0 {
		c.first = at
	}
	idx := c.sends
	if len(c.runs) > 0 {
		ats, refs := [1]int64{at}, [1]int64{ref}
		c.observeRun(ats[:], refs[:], idx)
	}
	for k := range c.slow {
		sr := &c.slow[k]
		cost := int64(1)
		if sr.unit >= 0 {
			cost = costs[sr.unit]
		}
		if err := c.judgeSend(sr, s, idx, cost); err != nil {
			c.err = &CostError{Send: s, Msg: fmt.Sprintf("rule %s: %v", c.slow[k].rep.Rule, err)}
			return c.err
		}
	}
	c.sends++
	c.last = s
	if len(c.pending) > 0 {
		c.flushViolations()
	}
	return nil
}

func (c *Checker) checkCosts(s Send, costs []int64) error {
	if costs == nil {
		if c.costs {
			return &CostError{Send: s, Msg: fmt.Sprintf("the rules meter %q: each send needs its costs (ObserveCost)", c.units)}
		}
		return nil
	}
	if len(costs) != len(c.units) {
		return &CostError{Send: s, Msg: fmt.Sprintf("%d costs for the %d units %q", len(costs), len(c.units), c.units)}
	}
	for k, v := range costs {
		if v < 0 {
			return &CostError{Send: s, Msg: fmt.Sprintf("negative cost %d in %s", v, c.units[k])}
		}
	}
	return nil
}

// judgeSend decides send idx, s, of cost c in the rule's unit (1 for a
// call rule), against one slow rule.
func (c *Checker) judgeSend(sr *slowRule, s Send, idx, cost int64) error {
	broke, err := sr.j.take(s, cost)
	if err != nil {
		return err
	}
	rep := sr.rep
	start, count, units, ok := sr.j.window()
	if ok && units > rep.MaxInWindow {
		rep.MaxInWindow, rep.MaxWindowStart = units, start
	}
	if broke && c.refusing {
		rep.Explained++
		c.broke = true
	} else if broke {
		if wanted, list := c.counted(sr, s.At); wanted {
			c.reportViolation(sr, Violation{Send: s, Index: idx, WindowStart: start, Count: count}, cost, units, list)
		}
	}
	return nil
}

// counted counts a violation of a slow rule by a send at at, and reports
// whether it is wanted beyond its count: to list (list), as the rule's
// first, or to pass on. Only then does the caller build the Violation for
// reportViolation, so that a long run of violations costs a count each.
func (c *Checker) counted(sr *slowRule, at int64) (wanted, list bool) {
	rep := sr.rep
	rep.Violations++
	list = len(rep.Listed) < c.list && at >= c.listFrom
	return list || rep.First == nil || c.userViol != nil, list
}

// reportViolation completes v, a violation counted, with its cost (the
// send's, finding units in its window) and the kind's own facts, and
// keeps it as the first, passes it on, or lists it.
func (c *Checker) reportViolation(sr *slowRule, v Violation, cost, units int64, list bool) {
	rep := sr.rep
	if sr.unit >= 0 {
		v.Cost, v.Units = cost, units
	}
	sr.j.detail(&v, list)
	if rep.First == nil {
		first := v
		first.Window, first.WindowCosts = nil, nil
		rep.First = &first
	}
	if c.userViol != nil {
		w := v
		w.Window, w.WindowCosts = nil, nil
		c.pending = append(c.pending, pendingViolation{sr.idx, w})
	}
	if list {
		rep.Listed = append(rep.Listed, v)
	}
}

// flushViolations passes one send's violations on in Rules order.
func (c *Checker) flushViolations() {
	p := c.pending
	for i := 1; i < len(p); i++ { // a few entries: insertion sort keeps it stable
		for j := i; j > 0 && p[j].rule < p[j-1].rule; j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
	for _, e := range p {
		c.userViol(e.rule, e.v)
	}
	c.pending = p[:0]
}
