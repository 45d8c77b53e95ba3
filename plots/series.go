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
	// OnViolation, when set, is also called for every violation the
	// checker finds, in stream order (checker.Config.OnViolation).
	OnViolation func(rule int, v checker.Violation)
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

// MaxMarkers is how many violations of one rule a timeline draws one by one
// before it merges them per pixel column.
const MaxMarkers = 1000

// ErrNoSends is returned for a timeline of an empty log.
var ErrNoSends = errors.New("plots: no sends to draw")

// TimelineSeries computes the timeline of in, reduced to the given number of
// pixel columns. Violations come from the checker, so the markers are the
// checker's verdicts; the occupancy is computed independently.
func TimelineSeries(in TimelineInput, columns int) (Series, error) {
	if len(in.Times) == 0 {
		return Series{}, ErrNoSends
	}
	if len(in.Rules) == 0 {
		return Series{}, errors.New("plots: timeline needs at least one rule")
	}
	s := Series{From: in.Times[0], To: in.Times[len(in.Times)-1]}
	cols := newPixelColumns(s.From, s.To, columns)
	s.Columns = cols.n

	// One marker slot per rule and column; Merged == 0 marks an empty slot.
	slots := make([][]Marker, len(in.Rules))
	exact := make([][]Marker, len(in.Rules))
	first := make([]Marker, len(in.Rules))
	for i := range slots {
		slots[i] = make([]Marker, cols.n)
	}
	cfg := checker.Config{
		Rules:    in.Rules,
		Boundary: in.Boundary,
		OnViolation: func(r int, v checker.Violation) {
			if first[r].Merged == 0 {
				first[r] = Marker{At: v.Send.At, Count: v.Count, Send: v.Index, Merged: 1}
			}
			if len(exact[r]) <= MaxMarkers {
				exact[r] = append(exact[r], Marker{At: v.Send.At, Count: v.Count, Send: v.Index, Merged: 1})
			}
			m := &slots[r][cols.of(v.Send.At)]
			if m.Merged == 0 || v.Count > m.Count {
				*m = Marker{At: v.Send.At, Count: v.Count, Send: v.Index, Merged: m.Merged}
			}
			m.Merged++
			if in.OnViolation != nil {
				in.OnViolation(r, v)
			}
		},
	}
	// The occupancy of each rule is independent of the checker's verdicts,
	// so they run side by side.
	s.Rules = make([]RuleSeries, len(in.Rules))
	var wg sync.WaitGroup
	for i, r := range in.Rules {
		wg.Go(func() {
			rs := RuleSeries{Rule: r}
			red := newReducer(cols)
			for st := range Occupancy(in.Times, r.Window, in.Boundary) {
				red.add(st.At, st.Count)
				rs.Peak = max(rs.Peak, st.Count)
			}
			rs.Steps = red.points()
			s.Rules[i] = rs
		})
	}
	rep, err := checker.Check(in.Times, cfg)
	wg.Wait()
	if err != nil {
		return Series{}, fmt.Errorf("plots: %w", err)
	}
	for i := range s.Rules {
		rs := &s.Rules[i]
		rs.Violations = rep.Rules[i].Violations
		rs.First = first[i]
		if len(exact[i]) <= MaxMarkers {
			rs.Markers = exact[i]
			continue
		}
		for _, m := range slots[i] {
			if m.Merged > 0 {
				rs.Markers = append(rs.Markers, m)
			}
		}
	}
	return s, nil
}
