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
	report    RuleReport
	window    time.Duration
	limit     int64
	log       ring
	saturated bool // the ring has dropped sends still in the window
}

// New returns a checker for cfg.
func New(cfg Config) *Checker {
	c := &Checker{boundary: cfg.Boundary, list: cfg.List, onViol: cfg.OnViolation}
	for _, r := range cfg.Rules {
		max := cfg.MaxTrack
		if max == 0 {
			max = 2 * (r.Limit + 1)
			if max < 1<<16 {
				max = 1 << 16
			}
		}
		if max < r.Limit+1 {
			max = r.Limit + 1
		}
		initial := r.Limit + 1
		if initial > 1024 {
			initial = 1024
		}
		c.rules = append(c.rules, ruleState{
			report: RuleReport{Rule: r},
			window: r.Window,
			limit:  int64(r.Limit),
			log:    newRing(initial, max),
		})
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
// rule r. The ring's state lives in locals for the loop; the rare paths
// (growing, a new maximum, a violation) write it back first.
func (c *Checker) observeRun(r int, ats, refs []int64, idx0 int64) {
	st := &c.rules[r]
	lg := &st.log
	// Entries at or before at-w have left the window (t-W, t], or
	// [t-W, t] for a closed boundary.
	w := int64(st.window)
	if c.boundary == rule.Closed {
		w++
	}
	limit, maxIn := st.limit, st.report.MaxInWindow
	head, n, times, lines := lg.head, lg.n, lg.at, lg.ref
	mask := len(times) - 1
	for i, at := range ats {
		cutoff := at - w
		for n > 0 && times[head] <= cutoff {
			head = (head + 1) & mask
			n--
			st.saturated = false
		}
		if n < len(times) {
			j := (head + n) & mask
			times[j], lines[j] = at, refs[i]
			n++
		} else {
			lg.head, lg.n = head, n
			if lg.push(at, refs[i]) {
				st.saturated = true
			}
			head, n, times, lines = lg.head, lg.n, lg.at, lg.ref
			mask = len(times) - 1
		}
		count := int64(n)
		if count > maxIn || (st.saturated && count == maxIn && !st.report.MaxSaturated) {
			lg.head, lg.n = head, n
			rep := &st.report
			rep.MaxInWindow, maxIn = count, count
			rep.MaxWindowStart = Send{At: times[head], Ref: lines[head]}
			rep.MaxSaturated = st.saturated
		}
		if count > limit {
			lg.head, lg.n = head, n
			c.violation(r, at, refs[i], idx0+int64(i), count)
		}
	}
	lg.head, lg.n = head, n
}

// violation records that send idx broke rule r with count sends in its
// window.
func (c *Checker) violation(r int, at, ref, idx, count int64) {
	st := &c.rules[r]
	rep := &st.report
	rep.Violations++
	if c.onViol == nil && rep.First != nil && len(rep.Listed) >= c.list {
		return
	}
	lg := &st.log
	v := Violation{
		Send:           Send{At: at, Ref: ref},
		Index:          idx,
		WindowStart:    Send{At: lg.oldest(), Ref: lg.ref[lg.head]},
		Count:          count,
		CountSaturated: st.saturated,
	}
	if rep.First == nil {
		first := v
		rep.First = &first
	}
	if c.onViol != nil {
		c.onViol(r, v)
	}
	if len(rep.Listed) < c.list {
		v.Window = lg.last(maxListed)
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
		if st.log.n > 0 && c.boundary.Within(time.Duration(now-c.last.At), st.window) {
			return false
		}
	}
	for i := range c.rules {
		st := &c.rules[i]
		st.log.n, st.saturated = 0, false
		st.log.release()
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
