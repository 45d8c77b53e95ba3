package plots

import (
	"iter"
	"math"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

// Every kind of rule is drawn as the provider counts it, in the rule's
// units against its capacity (Capacity):
//   - a fixed window as the units in the window of the current instant,
//     falling to 0 where the window ends;
//   - a first-call window likewise, from the send that opened it to its end;
//   - a bucket as what it lacks of its burst, rounded up to a whole unit:
//     its level refills continuously between sends, drawn at each send
//     (before it takes its cost) and where it is full again.
//
// A send's own step is what it finds plus its cost: over the capacity
// exactly when the checker says the send breaks the rule (for a bucket,
// a cost above a level l is a need above the burst, and for whole units
// c > l holds exactly when ceil(burst - l) + c > burst), so violations are
// marked where the line crosses the capacity, as for sliding windows.

// Capacity is what a rule's line is drawn against: a bucket's burst, any
// other rule's limit.
func Capacity(r rule.Rule) int64 {
	if r.Kind == rule.Bucket {
		return max(int64(r.Burst), 0)
	}
	return max(int64(r.Limit), 0)
}

// RuleOccupancyFrom is CostOccupancyFrom for a rule of any kind: the steps
// of rule r over times (costs nil for a call rule), from the step of send
// start on. Kinds other than sliding are judged by the checker from the
// first send, since their state depends on every send before.
func RuleOccupancyFrom(times, costs []int64, r rule.Rule, b rule.Boundary, start int) iter.Seq[Step] {
	if r.Kind == rule.Sliding {
		return CostOccupancyFrom(times, costs, r.Window, b, start)
	}
	return func(yield func(Step) bool) {
		cfg := checker.Config{Rules: []rule.Rule{r}, Boundary: b}
		one := []int64{1}
		if r.Unit != "" {
			cfg.Units = []string{r.Unit}
		} else {
			one = nil
		}
		chk := checker.New(cfg)
		capacity := Capacity(r)
		for i, t := range times {
			c := int64(1)
			if costs != nil {
				c = costs[i]
			}
			if r.Kind == rule.Bucket && i > start && t > times[i-1] && !yield(Step{At: t, Count: chk.Load(0, t), Send: -1}) {
				return
			}
			found := chk.Load(0, t)
			if one != nil {
				one[0] = c
			}
			if err := chk.ObserveCost(t, int64(i), one); err != nil {
				return // a sum past int64: the checker reports it, the chart ends
			}
			if i >= start && !yield(Step{At: t, Count: satAdd(found, c), Send: i}) {
				return
			}
			if i+1 < len(times) && times[i+1] > t && i >= start {
				if end := chk.Next(0, t, capacity); end > t && end < times[i+1] && !yield(Step{At: end, Count: 0, Send: -1}) {
					return
				}
			}
		}
	}
}

// satAdd is a + b, at most MaxInt64, for loads near the int64 limit.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// sweepKind is sweepRule for a rule of a kind other than sliding.
func sweepKind(times, costs []int64, r rule.Rule, b rule.Boundary, cols pixelColumns) RuleSeries {
	rs := RuleSeries{Rule: r}
	capacity := Capacity(r)
	red := newReducer(cols)
	marks := markers{cols: cols}
	for st := range RuleOccupancyFrom(times, costs, r, b, 0) {
		red.add(st.At, st.Count)
		rs.Peak = max(rs.Peak, st.Count)
		if st.Send >= 0 && st.Count > capacity {
			m := Marker{At: st.At, Count: st.Count, Send: int64(st.Send), Merged: 1}
			if rs.Violations == 0 {
				rs.First = m
			}
			rs.Violations++
			marks.add(m)
		}
	}
	rs.Steps = red.points()
	rs.Markers = marks.list()
	return rs
}

// ruleWords are a timeline panel's words for its rule's kind: the title's
// description, the y axis, and the legends of the line and the capacity.
type ruleWords struct {
	title, axis, line, capacity string
	violation                   string // what a violating send did
	bucket                      bool
}

// found says what the first violating send found, by its step's count.
func (w ruleWords) found(count int64) string {
	if w.bucket {
		return "needing " + thousands(count) + " of the burst"
	}
	return thousands(count) + " in its window"
}

func wordsFor(r rule.Rule) ruleWords {
	what, w := Measure(r), rule.FormatWindow(r.Window)
	n := thousands(Capacity(r))
	switch r.Kind {
	case rule.Fixed:
		return ruleWords{"at most " + n + " " + what + " in each fixed " + w + " window", what + " in window",
			what + " in the current fixed " + w + " window", "limit: " + n + " per fixed " + w, "a send that found the window full", false}
	case rule.FirstCall:
		return ruleWords{"at most " + n + " " + what + " in each " + w + " window a first call opens", what + " in window",
			what + " in the open " + w + " window", "limit: " + n + " per " + w + " window", "a send that found the window full", false}
	case rule.Bucket:
		return ruleWords{"a bucket of " + n + " " + what + " refilled at " + thousands(int64(r.Limit)) + " per " + w, what + " short of full",
			what + " the bucket lacks (at a send: with its cost)", "burst: " + n, "a send that found the bucket short of its cost", true}
	}
	return ruleWords{"at most " + n + " " + what + " in any " + w, what + " in window",
		what + " in the last " + w, "limit: " + n + " per " + w, "a send that found the window full", false}
}
