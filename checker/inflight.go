package checker

import (
	"container/heap"
	"fmt"
)

// InFlightReport is the verdict on a cap of calls in flight at once.
type InFlightReport struct {
	Max int
	// Violations counts the calls that started while Max calls were already
	// in flight. A call occupies [start, end): one that ends exactly when
	// another starts does not overlap it.
	Violations int64
	// Peak is the most calls in flight at once, first reached at PeakAt.
	Peak   int64
	PeakAt Send
	First  *Send
}

// InFlight checks calls, given in start order, against a cap. The zero value
// is not usable; call NewInFlight. It is not safe for concurrent use.
type InFlight struct {
	rep  InFlightReport
	ends endHeap
	last int64
	seen bool
}

// NewInFlight returns a checker for at most max calls in flight.
func NewInFlight(max int) *InFlight {
	return &InFlight{rep: InFlightReport{Max: max}}
}

// Observe takes the next call, which ran over [start, end). Calls must come
// in start order; end before start is an error.
func (f *InFlight) Observe(start, end, ref int64) error {
	if end < start {
		return fmt.Errorf("checker: call ends at %d ns, before it starts at %d ns", end, start)
	}
	if f.seen && start < f.last {
		return &OrderError{Prev: Send{At: f.last}, At: Send{At: start, Ref: ref}}
	}
	f.seen, f.last = true, start
	for len(f.ends) > 0 && f.ends[0] <= start {
		heap.Pop(&f.ends)
	}
	if len(f.ends) >= f.rep.Max {
		f.rep.Violations++
		if f.rep.First == nil {
			f.rep.First = &Send{At: start, Ref: ref}
		}
	}
	if end > start {
		heap.Push(&f.ends, end)
	}
	if n := int64(len(f.ends)); n > f.rep.Peak {
		f.rep.Peak, f.rep.PeakAt = n, Send{At: start, Ref: ref}
	}
	return nil
}

// Idle reports whether no call is in flight at now, and if so frees the
// memory kept for calls in flight.
func (f *InFlight) Idle(now int64) bool {
	for len(f.ends) > 0 && f.ends[0] <= now {
		heap.Pop(&f.ends)
	}
	if len(f.ends) > 0 {
		return false
	}
	f.ends = nil
	return true
}

// Restart forgets the verdict so far but not the calls in flight: the
// report of a time shard starts at its first judged call, with the calls
// of its context still running.
func (f *InFlight) Restart() {
	f.rep = InFlightReport{Max: f.rep.Max}
}

// Report returns the verdict so far.
func (f *InFlight) Report() InFlightReport { return f.rep }

type endHeap []int64

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
