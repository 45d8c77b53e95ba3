package plots

import (
	"iter"
	"sort"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Step is one change of a rule's window occupancy: from At until the next
// step, the window ending at the current instant holds Count sends.
type Step struct {
	At    int64
	Count int64
	// Send is the index of the send that made this step, or -1 when the
	// step is sends leaving the window.
	Send int
}

// Occupancy yields the exact occupancy steps of a window of length w over
// times, which must be in time order: at instant t the window is (t-w, t],
// or [t-w, t] for a closed boundary, exactly as the checker counts.
//
// Each send yields its own step, so the step of send i holds the count the
// checker gives send i even among sends at equal instants. Sends leaving the
// window yield a step at the instant they leave, unless a send arrives at
// that very instant (its step then carries the net count). No step is
// yielded after the last send.
func Occupancy(times []int64, w time.Duration, b rule.Boundary) iter.Seq[Step] {
	return OccupancyFrom(times, w, b, 0)
}

// OccupancyFrom yields the steps of Occupancy from the step of send start
// on, without sweeping the sends before it: a zoomed-in chart of a long log
// needs the steps of a short range, exactly.
func OccupancyFrom(times []int64, w time.Duration, b rule.Boundary, start int) iter.Seq[Step] {
	return CostOccupancyFrom(times, nil, w, b, start)
}

// CostOccupancyFrom is OccupancyFrom for a cost rule: Count is the sum of
// the costs (costs[i] is send i's, aligned with times) in the window; nil
// costs count each send once.
func CostOccupancyFrom(times, costs []int64, w time.Duration, b rule.Boundary, start int) iter.Seq[Step] {
	leave := leaveAfter(w, b)
	cost := func(i int) int64 {
		if costs == nil {
			return 1
		}
		return costs[i]
	}
	return func(yield func(Step) bool) {
		if start >= len(times) {
			return
		}
		// The sends still in the window when send start arrives.
		oldest := sort.Search(start, func(k int) bool { return uint64(times[start]-times[k]) < leave })
		var count int64
		for k := oldest; k < start; k++ {
			count += cost(k)
		}
		for i := start; i < len(times); {
			t := times[i]
			for oldest < i && uint64(t-times[oldest]) >= leave {
				at := times[oldest] + int64(leave) // at most t: no overflow
				for oldest < i && times[oldest]+int64(leave) == at {
					count -= cost(oldest)
					oldest++
				}
				if at < t && !yield(Step{At: at, Count: count, Send: -1}) {
					return
				}
			}
			for ; i < len(times) && times[i] == t; i++ {
				count += cost(i)
				if !yield(Step{At: t, Count: count, Send: i}) {
					return
				}
			}
		}
	}
}

// leaveAfter is how long after a send it leaves the window: half-open
// windows drop it at exactly s+w, closed ones one nanosecond later. It is
// unsigned, as the checker's, and compared with differences of instants
// taken unsigned, so that no instant near the ends of the int64 range
// overflows (s+w would); a negative window holds nothing.
func leaveAfter(w time.Duration, b rule.Boundary) uint64 {
	if w < 0 {
		return 0
	}
	leave := uint64(w)
	if b == rule.Closed {
		leave++ // at most 2^63
	}
	return leave
}
