package logcheck

import (
	"fmt"
	"time"

	"github.com/rlcheck/rlcheck/sendlog"
)

// item is one send on its way to the checkers.
type item struct {
	at, end int64
	ref     Ref
	key     int32
}

// held is a run of sends kept in time order, as parallel slices so that a
// released run can go to the checker without copying.
type held struct {
	at, end, ref []int64
	key          []int32
}

func (h *held) len() int { return len(h.at) }

func (h *held) appendItem(it item, withEnd, withKey bool) {
	h.at = append(h.at, it.at)
	h.ref = append(h.ref, int64(it.ref))
	if withEnd {
		h.end = append(h.end, it.end)
	}
	if withKey {
		h.key = append(h.key, it.key)
	}
}

func (h *held) item(i int) item {
	it := item{at: h.at[i], ref: Ref(h.ref[i])}
	if h.end != nil {
		it.end = h.end[i]
	}
	if h.key != nil {
		it.key = h.key[i]
	}
	return it
}

// insert puts it at index i, moving later sends up.
func (h *held) insert(i int, it item) {
	h.appendItem(it, h.end != nil, h.key != nil)
	copy(h.at[i+1:], h.at[i:])
	copy(h.ref[i+1:], h.ref[i:])
	h.at[i], h.ref[i] = it.at, int64(it.ref)
	if h.end != nil {
		copy(h.end[i+1:], h.end[i:])
		h.end[i] = it.end
	}
	if h.key != nil {
		copy(h.key[i+1:], h.key[i:])
		h.key[i] = it.key
	}
}

// drop removes the first n sends: by moving the rest to the front when
// that is the smaller copy (the common case, a short tail within the
// horizon), else by reslicing, so that either way the cost is amortized
// O(1) a send and the slices are reused.
func (h *held) drop(n int) {
	if rest := len(h.at) - n; rest <= n {
		h.at, h.ref = h.at[:copy(h.at, h.at[n:])], h.ref[:copy(h.ref, h.ref[n:])]
		if h.end != nil {
			h.end = h.end[:copy(h.end, h.end[n:])]
		}
		if h.key != nil {
			h.key = h.key[:copy(h.key, h.key[n:])]
		}
		return
	}
	h.at, h.ref = h.at[n:], h.ref[n:]
	if h.end != nil {
		h.end = h.end[n:]
	}
	if h.key != nil {
		h.key = h.key[n:]
	}
}

// slice returns sends [0, n) as a held view sharing memory.
func (h *held) slice(n int) held {
	v := held{at: h.at[:n], ref: h.ref[:n]}
	if h.end != nil {
		v.end = h.end[:n]
	}
	if h.key != nil {
		v.key = h.key[:n]
	}
	return v
}

// reorder repairs bounded disorder in one input: it holds sends for the
// horizon and releases them in time order (equal times in input order). A
// send earlier than the horizon allows is an input error. In-order sends,
// the common case, are appended in bulk.
type reorder struct {
	name     string
	file     int
	horizon  int64
	buf      held
	maxSeen  int64
	maxLine  int64
	seen     bool
	disorder Disorder
}

// push adds a batch of sends read from the input.
func (r *reorder) push(b *sendlog.Batch, keyOf func(b *sendlog.Batch, i int) int32) error {
	withEnd, withKey := b.End != nil, keyOf != nil
	if r.buf.at == nil {
		r.buf = held{at: []int64{}, ref: []int64{}}
		if withEnd {
			r.buf.end = []int64{}
		}
		if withKey {
			r.buf.key = []int32{}
		}
	}
	if r.pushSorted(b, withEnd, withKey) {
		return nil
	}
	for i := range b.At {
		it := item{at: b.At[i], ref: MakeRef(r.file, b.Line[i])}
		if withEnd {
			it.end = b.End[i]
		}
		if withKey {
			it.key = keyOf(b, i)
		}
		if !r.seen || it.at >= r.maxSeen {
			r.seen, r.maxSeen, r.maxLine = true, it.at, b.Line[i]
			r.buf.appendItem(it, withEnd, withKey)
			continue
		}
		if err := r.late(it); err != nil {
			return err
		}
	}
	return nil
}

// pushSorted appends a batch in bulk when it is in time order and starts
// no earlier than every held send, the common case; it reports whether it
// did.
func (r *reorder) pushSorted(b *sendlog.Batch, withEnd, withKey bool) bool {
	if withKey || len(b.At) == 0 || (r.seen && b.At[0] < r.maxSeen) {
		return false
	}
	prev := b.At[0]
	for _, at := range b.At {
		if at < prev {
			return false
		}
		prev = at
	}
	r.buf.at = append(r.buf.at, b.At...)
	if withEnd {
		r.buf.end = append(r.buf.end, b.End...)
	}
	start := len(r.buf.ref)
	r.buf.ref = append(r.buf.ref, b.Line...)
	if r.file != 0 {
		for i := start; i < len(r.buf.ref); i++ {
			r.buf.ref[i] = int64(MakeRef(r.file, r.buf.ref[i]))
		}
	}
	n := len(b.At)
	r.seen, r.maxSeen, r.maxLine = true, b.At[n-1], b.Line[n-1]
	return true
}

// late places a send that arrived after a later one.
func (r *reorder) late(it item) error {
	lateBy := r.maxSeen - it.at
	if lateBy > r.horizon {
		return &sendlog.InputError{File: r.name, Line: it.ref.Line(), Msg: fmt.Sprintf(
			"%v earlier than line %d, beyond the reorder horizon --max-disorder %v (raise it, or --sort the whole input)",
			time.Duration(lateBy), r.maxLine, time.Duration(r.horizon))}
	}
	r.disorder.Lines++
	r.disorder.Max = max(r.disorder.Max, time.Duration(lateBy))
	// After every held send with a time <= it.at.
	i := r.buf.len()
	for i > 0 && r.buf.at[i-1] > it.at {
		i--
	}
	r.buf.insert(i, it)
	return nil
}

// ready returns how many held sends, from the front, no later input can
// precede; with flush, all of them.
func (r *reorder) ready(flush bool) int {
	n := r.buf.len()
	if flush || n == 0 {
		return n
	}
	// Held sends are sorted: binary-search the first one still within the
	// horizon of the latest send.
	limit := r.maxSeen - r.horizon
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.buf.at[m] < limit {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
