package audit

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

// reorder repairs bounded disorder in one input: it holds sends for the
// horizon and releases them in time order (equal times in input order). A
// send earlier than the horizon allows is an input error.
//
// Sends are kept in a slice sorted by time; in-order sends append at the
// end, so the common case costs O(1).
type reorder struct {
	name     string
	horizon  int64
	buf      []item
	head     int
	maxSeen  int64
	maxLine  int64
	seen     bool
	disorder Disorder
}

// push adds a send; it fails when the send is later than the horizon.
func (r *reorder) push(it item) error {
	if !r.seen || it.at >= r.maxSeen {
		r.seen, r.maxSeen, r.maxLine = true, it.at, it.ref.Line()
		r.buf = append(r.buf, it)
		return nil
	}
	late := r.maxSeen - it.at
	if late > r.horizon {
		return &sendlog.InputError{File: r.name, Line: it.ref.Line(), Msg: fmt.Sprintf(
			"%v earlier than line %d, beyond the reorder horizon --max-disorder %v (raise it, or --sort the whole input)",
			time.Duration(late), r.maxLine, time.Duration(r.horizon))}
	}
	r.disorder.Lines++
	r.disorder.Max = max(r.disorder.Max, time.Duration(late))
	// Insert after every held send with a time <= it.at.
	i := len(r.buf)
	for i > r.head && r.buf[i-1].at > it.at {
		i--
	}
	r.buf = append(r.buf, item{})
	copy(r.buf[i+1:], r.buf[i:])
	r.buf[i] = it
	return nil
}

// ready returns the next send that no later input can precede, if any;
// with flush, every held send is ready.
func (r *reorder) ready(flush bool) (item, bool) {
	if r.head == len(r.buf) {
		return item{}, false
	}
	it := r.buf[r.head]
	if !flush && it.at >= r.maxSeen-r.horizon {
		return item{}, false
	}
	r.head++
	if r.head == len(r.buf) {
		r.buf, r.head = r.buf[:0], 0
	} else if r.head > 4096 && r.head*2 > len(r.buf) {
		n := copy(r.buf, r.buf[r.head:])
		r.buf, r.head = r.buf[:n], 0
	}
	return it, true
}
