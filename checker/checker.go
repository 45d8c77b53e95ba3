package checker

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Send is one send as the checker saw it. Ref is the caller's locator for it
// (a line number, say); the checker only carries it through to reports.
type Send struct {
	At  int64 `json:"at_ns"`
	Ref int64 `json:"ref"`
}

// Violation is one send that broke a rule.
type Violation struct {
	// Send is the offending send; Index is its 0-based position in the stream.
	Send  Send  `json:"send"`
	Index int64 `json:"index"`
	// WindowStart is the earliest send still in the window that the offending
	// send overfilled, and Count the sends in that window, the offending one
	// included. Count is a lower bound when CountSaturated is set.
	WindowStart    Send  `json:"window_start"`
	Count          int64 `json:"count"`
	CountSaturated bool  `json:"count_saturated,omitempty"`
	// Window lists the sends in the overfilled window, oldest first and the
	// offending send last (at most the newest maxListed); it is filled only
	// for listed violations.
	Window []Send `json:"window,omitempty"`
}

// RuleReport is the verdict on one rule.
type RuleReport struct {
	Rule       rule.Rule `json:"-"`
	Violations int64     `json:"violations"`
	// MaxInWindow is the largest number of sends found in any window, and
	// MaxWindowStart the earliest send of the first such window.
	// MaxSaturated marks MaxInWindow as a lower bound: more sends shared a
	// window than the checker keeps (see Config.MaxTrack).
	MaxInWindow    int64      `json:"max_in_window"`
	MaxWindowStart Send       `json:"max_window_start"`
	MaxSaturated   bool       `json:"max_in_window_saturated,omitempty"`
	First          *Violation `json:"first_violation"`
	// Listed holds the first Config.List violations, windows included.
	Listed []Violation `json:"listed,omitempty"`
}

// Report is the checker's verdict over the whole stream.
type Report struct {
	Sends    int64         `json:"sends"`
	First    int64         `json:"first_ns"`
	Last     int64         `json:"last_ns"`
	Boundary rule.Boundary `json:"-"`
	Rules    []RuleReport  `json:"rules"`
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
	// MaxTrack bounds, per rule, how many in-window sends are kept to count
	// MaxInWindow exactly. Zero means max(2*(Limit+1), 65536). It never
	// drops below Limit+1, which deciding violations needs.
	MaxTrack int
	// OnViolation, when set, is called for every violation, in stream order
	// for each rule (ObserveBatch takes a batch rule by rule),
	// with the index of the broken rule in Rules. Window is not filled.
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
	boundary rule.Boundary
	list     int
	onViol   func(int, Violation)
	rules    []ruleState
	sends    int64
	first    int64
	last     Send
}

type ruleState struct {
	report RuleReport
	window time.Duration
	limit  int64
	hist   history
}

// New returns a checker for cfg.
func New(cfg Config) *Checker {
	c := &Checker{boundary: cfg.Boundary, list: cfg.List, onViol: cfg.OnViolation}
	for _, r := range cfg.Rules {
		track := cfg.MaxTrack
		if track == 0 {
			track = max(2*(r.Limit+1), 1<<16)
		}
		track = max(track, r.Limit+1)
		c.rules = append(c.rules, ruleState{
			report: RuleReport{Rule: r},
			window: r.Window,
			limit:  int64(r.Limit),
			hist:   history{max: pow2(track)},
		})
	}
	return c
}

// pow2 returns the least power of two >= n.
func pow2(n int) int {
	c := 1
	for c < n {
		c <<= 1
	}
	return c
}

// Observe takes the next send. Sends must come in time order (equal times
// keep their order); an earlier send is refused with an *OrderError.
func (c *Checker) Observe(at, ref int64) error {
	if c.sends > 0 && at < c.last.At {
		return &OrderError{Prev: c.last, At: Send{At: at, Ref: ref}}
	}
	if c.sends == 0 {
		c.first = at
	}
	ats, refs := [1]int64{at}, [1]int64{ref}
	for i := range c.rules {
		c.observeRun(i, ats[:], refs[:], c.sends)
	}
	c.sends++
	c.last = Send{At: at, Ref: ref}
	return nil
}

// parallelBatch is the batch size from which ObserveBatch checks rules on
// separate goroutines; below it the hand-off costs more than it saves.
const parallelBatch = 4096

// ObserveBatch takes a run of sends at once, ats[i] with refs[i]; it gives
// the verdicts of calling Observe on each in turn, rule by rule, which keeps
// each rule's window hot in cache. An unsorted batch is refused whole.
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
	if c.sends == 0 {
		c.first = ats[0]
	}
	// Rules are independent: on a large batch, check them side by side.
	// Not with OnViolation, whose callers expect one goroutine.
	if len(c.rules) > 1 && len(ats) >= parallelBatch && c.onViol == nil && runtime.GOMAXPROCS(0) > 1 {
		var wg sync.WaitGroup
		for r := 1; r < len(c.rules); r++ {
			wg.Go(func() { c.observeRun(r, ats, refs, c.sends) })
		}
		c.observeRun(0, ats, refs, c.sends)
		wg.Wait()
	} else {
		for r := range c.rules {
			c.observeRun(r, ats, refs, c.sends)
		}
	}
	c.sends += int64(len(ats))
	c.last = Send{At: ats[len(ats)-1], Ref: refs[len(ats)-1]}
	return nil
}

// observeRun takes sends ats (with refs), the first being send idx0, for
// rule r. Send i breaks the rule when t[i] - t[i-N] < W, and the largest
// occupancy m grows by one whenever t[i] - t[i-m] < W: a window cannot
// gain more than one send per send. Both tests are single comparisons with
// branches that are almost always predicted, so the common send costs a
// few loads and a store; the rare paths (a violation worth reporting, a
// new maximum, growing the history) are out of line.
func (c *Checker) observeRun(r int, ats, refs []int64, idx0 int64) {
	st := &c.rules[r]
	h := &st.hist
	// Send j is in the window of send i when t[i] - t[j] < w.
	w := int64(st.window)
	if c.boundary == rule.Closed {
		w++
	}
	limit := st.limit
	m := st.report.MaxInWindow
	need := int(max(limit, m) + 2)
	for i, at := range ats {
		idx := idx0 + int64(i)
		if idx-h.base >= int64(len(h.at)) {
			h.reserve(idx, need)
		}
		mask := int64(len(h.at) - 1)
		h.at[idx&mask], h.ref[idx&mask] = at, refs[i]
		if j := idx - limit; j >= h.base && at-h.at[j&mask] < w {
			st.report.Violations++
			if c.onViol != nil || st.report.First == nil || len(st.report.Listed) < c.list {
				c.violation(r, idx, at-w)
			}
		}
		if j := idx - m; j >= h.base {
			// Send j must still be stored; when the history is at its
			// bound and its oldest send is in the window, the maximum
			// can only be known as a lower bound.
			stored := idx-j <= mask
			if stored && at-h.at[j&mask] < w {
				// A window gains at most one send per send: this one
				// holds exactly m+1, from send j on.
				m++
				st.report.MaxInWindow, st.report.MaxWindowStart = m, h.get(j)
				need = int(max(limit, m) + 2)
			} else if !stored && at-h.at[(idx-mask)&mask] < w {
				m = c.newMax(r, idx, at-w)
				need = int(max(limit, m) + 2)
			}
		}
	}
}

// newMax records that send idx's window holds more sends than the history
// can show; cutoff is the latest time outside that window.
func (c *Checker) newMax(r int, idx, cutoff int64) int64 {
	st := &c.rules[r]
	h := &st.hist
	rep := &st.report
	start, saturated := h.windowStart(idx, cutoff)
	rep.MaxInWindow = idx - start + 1
	rep.MaxWindowStart = h.get(start)
	rep.MaxSaturated = saturated
	if saturated {
		// The history is at its bound: the next window that is as full
		// cannot be seen, so stop looking for larger ones.
		return 1 << 62
	}
	return rep.MaxInWindow
}

// violation records the details of send idx, which broke rule r; cutoff is
// the latest time outside its window.
func (c *Checker) violation(r int, idx, cutoff int64) {
	st := &c.rules[r]
	h := &st.hist
	rep := &st.report
	start, saturated := h.windowStart(idx, cutoff)
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
		c.onViol(r, v)
	}
	if len(rep.Listed) < c.list {
		v.Window = h.last(start, idx, maxListed)
		rep.Listed = append(rep.Listed, v)
	}
}

// Idle reports whether every window has moved past the last send at now,
// and if so frees the memory the rules keep for their windows; Observe
// allocates it again. Use it to keep memory in line with the number of
// active streams when checking many keys.
func (c *Checker) Idle(now int64) bool {
	for i := range c.rules {
		st := &c.rules[i]
		if st.hist.at != nil && c.boundary.Within(time.Duration(now-c.last.At), st.window) {
			return false
		}
	}
	for i := range c.rules {
		c.rules[i].hist.reset(c.sends)
	}
	return true
}

// Report returns the verdict so far; the checker may go on observing.
func (c *Checker) Report() Report {
	r := Report{Sends: c.sends, First: c.first, Last: c.last.At, Boundary: c.boundary}
	for _, st := range c.rules {
		r.Rules = append(r.Rules, st.report)
	}
	return r
}

// Check runs the checker over times already in memory, in time order; the
// Ref of each send is its index.
func Check(times []int64, cfg Config) (Report, error) {
	c := New(cfg)
	for i, t := range times {
		if err := c.Observe(t, int64(i)); err != nil {
			return Report{}, err
		}
	}
	return c.Report(), nil
}
