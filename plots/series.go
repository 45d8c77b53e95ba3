package plots

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

// TimelineInput is what a window-usage timeline draws.
type TimelineInput struct {
	// Title heads the chart, for example "sequential, seed 1".
	Title string
	// Times are the send instants in nanoseconds, in time order.
	Times []int64
	// Costs are the sends' costs by unit, aligned with Times: a cost rule's
	// panel draws the units in its window. Call rules count sends.
	Costs map[string][]int64
	// Rules get one panel each, in this order.
	Rules    []rule.Rule
	Boundary rule.Boundary
	// Strategy, when set, gives the occupancy line that strategy's colour.
	Strategy string
	// WallClock labels the time axis with the time of day, for Times that
	// are Unix nanoseconds (logs); otherwise it shows seconds from the first
	// send. Location defaults to UTC.
	WallClock bool
	Location  *time.Location
}

// Marker is a drawn violation. Up to MaxMarkers violations per rule are drawn
// one by one; beyond that, violations in the same pixel column share one
// marker: the one whose window held the most sends.
type Marker struct {
	At    int64 // instant of the send, ns
	Count int64 // sends in its window, the violating send included
	Send  int64 // index of the send in Times
	// Merged counts the violations this marker stands for, itself included.
	Merged int64
}

// RuleSeries is what one timeline panel draws.
type RuleSeries struct {
	Rule rule.Rule
	// Steps is the occupancy step line, reduced per pixel column.
	Steps []Point
	// Markers holds every violation when there are at most MaxMarkers,
	// otherwise one per pixel column; either way every column with a
	// violation has a marker.
	Markers []Marker
	// Violations counts every violating send, drawn or merged, and First
	// is the earliest (valid when Violations > 0).
	Violations int64
	First      Marker
	// Peak is the largest occupancy anywhere.
	Peak int64
}

// Series is the data behind a timeline, computed before any drawing.
type Series struct {
	From, To int64 // first and last send, ns
	Columns  int
	Rules    []RuleSeries
}

// Measure names what a rule's window holds: "sends", or its unit.
func Measure(r rule.Rule) string {
	if r.Unit == "" {
		return "sends"
	}
	return r.Unit
}

// MaxMarkers is how many violations of one rule a timeline draws one by one
// before it merges them per pixel column.
const MaxMarkers = 1000

// ErrNoSends is returned for a timeline of an empty log.
var ErrNoSends = errors.New("plots: no sends to draw")

// TimelineSeries computes the timeline of in, reduced to the given number of
// pixel columns. One sweep per rule gives both the occupancy and the
// violations: a send is a violation exactly when its step holds more sends
// than the limit, the checker's own test (TestOccupancyAgreesWithChecker),
// so the markers are the checker's verdicts without a second check.
func TimelineSeries(in TimelineInput, columns int) (Series, error) {
	if len(in.Times) == 0 {
		return Series{}, ErrNoSends
	}
	if len(in.Rules) == 0 {
		return Series{}, errors.New("plots: timeline needs at least one rule")
	}
	for i := 1; i < len(in.Times); i++ {
		if in.Times[i] < in.Times[i-1] {
			return Series{}, fmt.Errorf("plots: %w", &checker.OrderError{
				Prev: checker.Send{At: in.Times[i-1], Ref: int64(i - 1)}, At: checker.Send{At: in.Times[i], Ref: int64(i)}})
		}
	}
	s := Series{From: in.Times[0], To: in.Times[len(in.Times)-1]}
	cols := newPixelColumns(s.From, s.To, columns)
	s.Columns = cols.n
	s.Rules = make([]RuleSeries, len(in.Rules))
	var wg sync.WaitGroup
	for _, r := range in.Rules {
		if c, ok := in.Costs[r.Unit]; r.Unit != "" && (!ok || len(c) != len(in.Times)) {
			return Series{}, fmt.Errorf("plots: rule %s: no %s cost for each send", r, r.Unit)
		}
	}
	for i, r := range in.Rules {
		var costs []int64
		if r.Unit != "" {
			costs = in.Costs[r.Unit]
		}
		if r.Kind != rule.Sliding {
			wg.Go(func() { s.Rules[i] = sweepKind(in.Times, costs, r, in.Boundary, cols) })
			continue
		}
		wg.Go(func() { s.Rules[i] = sweepRule(in.Times, costs, r, in.Boundary, cols) })
	}
	wg.Wait()
	return s, nil
}

// sweepRule reduces the occupancy of one rule per pixel column and marks
// the sends over its limit; with costs (nil for a call rule, each send 1)
// the occupancy is the units in the window. It is Occupancy's sweep with
// the reduction inlined: on a long log it runs over tens of millions of
// steps.
func sweepRule(times, costs []int64, r rule.Rule, b rule.Boundary, cols pixelColumns) RuleSeries {
	cost := func(i int) int64 {
		if costs == nil {
			return 1
		}
		return costs[i]
	}
	rs := RuleSeries{Rule: r}
	limit := max(int64(r.Limit), 0) // a negative limit is broken by every send, as 0 is
	leave := leaveAfter(r.Window, b)
	red := newReducer(cols)
	marks := markers{cols: cols}
	oldest, count := 0, int64(0)
	for i := 0; i < len(times); {
		t := times[i]
		// Sends leaving at t itself are netted into t's first step, which
		// may then fall.
		netted := false
		for oldest < i && uint64(t-times[oldest]) >= leave {
			at := times[oldest] + int64(leave) // at most t: no overflow
			for oldest < i && times[oldest]+int64(leave) == at {
				count -= cost(oldest)
				oldest++
			}
			if at < t {
				if !red.fall(at, count) {
					red.add(at, count)
				}
			} else {
				netted = true
			}
		}
		for ; i < len(times) && times[i] == t; i++ {
			count += cost(i)
			if netted || !red.rise(t, count) {
				red.add(t, count)
			}
			netted = false
			if count > limit {
				m := Marker{At: t, Count: count, Send: int64(i), Merged: 1}
				if rs.Violations == 0 {
					rs.First = m
				}
				rs.Violations++
				marks.add(m)
			}
		}
		rs.Peak = max(rs.Peak, count)
	}
	rs.Steps = red.points()
	rs.Markers = marks.list()
	return rs
}

// markers keeps a rule's violations one by one up to MaxMarkers, then one
// per pixel column: the one whose window held the most sends.
type markers struct {
	cols  pixelColumns
	exact []Marker
	// slots has one marker per column once there are too many to draw;
	// Merged == 0 marks an empty slot.
	slots []Marker
}

func (ms *markers) add(m Marker) {
	if len(ms.exact) < MaxMarkers {
		ms.exact = append(ms.exact, m)
		return
	}
	if ms.slots == nil {
		ms.slots = make([]Marker, ms.cols.n)
		for _, e := range ms.exact {
			ms.slots[ms.cols.of(e.At)].merge(e)
		}
	}
	ms.slots[ms.cols.of(m.At)].merge(m)
}

func (ms *markers) list() []Marker {
	if ms.slots == nil {
		return ms.exact
	}
	var out []Marker
	for _, m := range ms.slots {
		if m.Merged > 0 {
			out = append(out, m)
		}
	}
	return out
}

// merge adds violation v to the slot of its column, which keeps the
// violation whose window held the most sends (the first of equals).
func (m *Marker) merge(v Marker) {
	if m.Merged == 0 || v.Count > m.Count {
		*m = Marker{At: v.At, Count: v.Count, Send: v.Send, Merged: m.Merged}
	}
	m.Merged++
}
