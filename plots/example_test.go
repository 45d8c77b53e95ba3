package plots_test

import (
	"fmt"
	"time"

	"github.com/rlcheck/rlcheck/plots"
	"github.com/rlcheck/rlcheck/rule"
)

// Sends at 0 ms, 400 ms, 400 ms and 1000 ms under a one-second window: the
// first send leaves at exactly 1000 ms, just as the last one arrives.
func ExampleOccupancy() {
	ms := int64(time.Millisecond)
	times := []int64{0, 400 * ms, 400 * ms, 1000 * ms}
	for st := range plots.Occupancy(times, time.Second, rule.HalfOpen) {
		fmt.Printf("from %4d ms: %d in window (send %d)\n", st.At/ms, st.Count, st.Send)
	}
	// Output:
	// from    0 ms: 1 in window (send 0)
	// from  400 ms: 2 in window (send 1)
	// from  400 ms: 3 in window (send 2)
	// from 1000 ms: 3 in window (send 3)
}

func ExampleTimelineSeries() {
	ms := int64(time.Millisecond)
	in := plots.TimelineInput{
		Times: []int64{0, 100 * ms, 200 * ms, 900 * ms, 1100 * ms},
		Rules: []rule.Rule{{Limit: 3, Window: time.Second}},
	}
	s, err := plots.TimelineSeries(in, 800)
	if err != nil {
		fmt.Println(err)
		return
	}
	rs := s.Rules[0]
	fmt.Printf("%s: %d violation, peak %d\n", rs.Rule, rs.Violations, rs.Peak)
	for _, m := range rs.Markers {
		fmt.Printf("violation at %d ms: send %d found %d in its window\n", m.At/ms, m.Send, m.Count)
	}
	// Output:
	// 3/1s: 1 violation, peak 4
	// violation at 900 ms: send 3 found 4 in its window
}
