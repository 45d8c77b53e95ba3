package logcheck

import (
	"container/heap"
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

// maxHeld is the most sends a key holds without a checker: a key with one
// send holds 16 bytes (and 8 a unit) instead of a checker's 800 bytes and
// more a rule, and a key past a few sends is worth a checker.
const maxHeld = 8

// holdLimits say how long a key's sends may be held without a checker.
// Replaying held sends through a checker gives the verdict judging them as
// they came would; the limits keep held only sends that cannot have broken
// a rule (at most sends of them, their costs in unit u adding up to at most
// units[u], so no window of any kind holds more than its limit), so that
// nothing a checker reports as it goes, a violation or a cost it refuses,
// waits for the replay.
type holdLimits struct {
	sends int     // 0: every key gets a checker at once
	units []int64 // per unit of Read.Costs
}

// newHoldLimits returns the limits for rules metering units: a call rule
// caps the sends and a cost rule its unit's sum at its limit, a bucket at
// the lesser of its limit and burst (a full bucket of B admits any sends
// costing B in all).
func newHoldLimits(rules []rule.Rule, units []string) holdLimits {
	h := holdLimits{sends: maxHeld, units: make([]int64, len(units))}
	for u := range h.units {
		h.units[u] = math.MaxInt64
	}
	for _, r := range rules {
		c := int64(r.Limit)
		if r.Kind == rule.Bucket && r.Burst > 0 {
			c = min(c, int64(r.Burst))
		}
		c = max(c, 0)
		if r.Unit == "" {
			h.sends = min(h.sends, int(min(c, maxHeld)))
			continue
		}
		for u, name := range units {
			if name == r.Unit {
				h.units[u] = min(h.units[u], c)
			}
		}
	}
	return h
}

// held adds a run of g's sends to the ones it holds, when with them none
// can have broken a rule, and reports whether it did; g's checker, once it
// has one, takes every later send.
func (t *groupTable) held(g *groupState, run held, cols [][]int64) bool {
	if g.chk != nil || t.hold.sends == 0 {
		return false
	}
	stride := 2 + len(cols)
	if len(g.pend)/stride+len(run.at) > t.hold.sends {
		return false
	}
	for u, col := range cols {
		sum := int64(0)
		for i := 2 + u; i < len(g.pend); i += stride {
			sum += g.pend[i]
		}
		for _, c := range col {
			if c > t.hold.units[u]-sum {
				return false
			}
			sum += c
		}
	}
	for i, at := range run.at {
		g.pend = append(g.pend, at, run.ref[i])
		for _, col := range cols {
			g.pend = append(g.pend, col[i])
		}
	}
	return true
}

// replay hands held sends to chk, which cannot refuse them (see
// holdLimits).
func (t *groupTable) replay(chk *checker.Checker, pend []int64) {
	units := len(t.cfg.Read.Costs)
	stride := 2 + units
	n := len(pend) / stride
	ats, refs := make([]int64, n), make([]int64, n)
	cols := make([][]int64, units)
	for u := range cols {
		cols[u] = make([]int64, n)
	}
	for i := range n {
		ats[i], refs[i] = pend[i*stride], pend[i*stride+1]
		for u := range cols {
			cols[u][i] = pend[i*stride+2+u]
		}
	}
	if units > 0 {
		_ = chk.ObserveCostBatch(ats, refs, cols)
	} else {
		_ = chk.ObserveBatch(ats, refs)
	}
}

// joinReports returns the verdict of a key's sends in past followed, after
// every window of past passed, by those in next, judged by a checker of
// their own: counts add, the fullest window is the first of the largest,
// and the violations of next are numbered after past's sends.
func joinReports(past *checker.Report, next checker.Report, list int) *checker.Report {
	if past == nil || past.Sends == 0 {
		return &next
	}
	if next.Sends == 0 {
		return past
	}
	out := *past
	out.Rules = append([]checker.RuleReport(nil), past.Rules...)
	out.Sends += next.Sends
	out.Refused += next.Refused
	out.Explained += next.Explained
	out.Last = next.Last
	shift := func(v checker.Violation) checker.Violation {
		v.Index += past.Sends
		return v
	}
	for i := range out.Rules {
		r, n := &out.Rules[i], next.Rules[i]
		r.Violations += n.Violations
		r.Explained += n.Explained
		if n.MaxInWindow > r.MaxInWindow {
			r.MaxInWindow, r.MaxWindowStart, r.MaxSaturated = n.MaxInWindow, n.MaxWindowStart, n.MaxSaturated
		}
		if r.First == nil && n.First != nil {
			first := shift(*n.First)
			r.First = &first
		}
		r.Listed = append([]checker.Violation(nil), r.Listed...)
		for _, v := range n.Listed {
			if len(r.Listed) >= list {
				break
			}
			r.Listed = append(r.Listed, shift(v))
		}
	}
	return &out
}

// worstGroups keeps the max worst groups seen (every group when max is 0):
// in report.Before's order, as report.New orders them.
type worstGroups struct {
	max    int
	groups []report.Group
}

// add keeps g when it is among the worst so far, and returns the group it
// leaves out (g or the least bad kept), or nil.
func (w *worstGroups) add(g report.Group) *report.Group {
	if w.max <= 0 || len(w.groups) < w.max {
		w.groups = append(w.groups, g)
		if w.max > 0 {
			heap.Push((*leastBad)(w), nil)
		}
		return nil
	}
	if !report.Before(&g, &w.groups[0]) {
		return &g
	}
	out := w.groups[0]
	w.groups[0] = g
	heap.Fix((*leastBad)(w), 0)
	return &out
}

// leastBad is a heap of the kept groups with the least bad on top; Push
// takes the group already appended.
type leastBad worstGroups

func (h *leastBad) Len() int           { return len(h.groups) }
func (h *leastBad) Less(i, j int) bool { return report.Before(&h.groups[j], &h.groups[i]) }
func (h *leastBad) Swap(i, j int)      { h.groups[i], h.groups[j] = h.groups[j], h.groups[i] }
func (h *leastBad) Push(any)           {}
func (h *leastBad) Pop() any           { panic("logcheck: leastBad is never popped") }

// MemoryError ends a check whose live heap passed three quarters of its
// memory ceiling: past that the collector runs almost without pause, and
// past the ceiling the process would die without a report.
type MemoryError struct {
	Keys        int   // the keys judged so far
	Sends       int64 // the sends judged so far
	Live, Limit int64 // the live heap and the ceiling, in bytes
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("logcheck: %d keys after %d sends hold %d MB, near the memory ceiling of %d MB "+
		"(logcheck.Config.MaxMemory or GOMEMLIMIT): keep fewer keys in full (logcheck.Config.ListKeys), "+
		"keep no send times (logcheck.Config.KeepTimes), check the keys in parts (a log per part of the keys), "+
		"or raise the ceiling",
		e.Keys, e.Sends, e.Live>>20, e.Limit>>20)
}

// memoryCeiling returns the ceiling a check keeps to: max when set, else
// the runtime's memory limit (GOMEMLIMIT), else none (0).
func memoryCeiling(max int64) int64 {
	if max > 0 {
		return max
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		return l
	}
	return 0
}

// liveHeap reads the heap the last collection found live.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// checkMemory returns a *MemoryError once the live heap passes three
// quarters of the ceiling.
func (t *groupTable) checkMemory() error {
	if t.ceiling == 0 {
		return nil
	}
	if live := liveHeap(); live > t.ceiling/4*3 {
		return &MemoryError{Keys: len(t.groups), Sends: t.res.Sends, Live: live, Limit: t.ceiling}
	}
	return nil
}
