package logcheck

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/sendlog"
)

// DefaultMaxBuffered is Config.MaxBuffered when none is given: at most
// 40 bytes an entry, it keeps the reorder buffer within about 40 MB.
const DefaultMaxBuffered = 1_000_000

// item is one send on its way to the checkers.
type item struct {
	at, end int64
	ref     report.Ref
	key     int32
}

// held is a run of sends kept in time order, as parallel slices so that a
// released run can go to the checker without copying.
//
// An entry may stand for a run of sends at one instant from one input (one
// end time, one key) whose refs step evenly, ref, ref+step, …: n and step
// say so, and stay nil while every entry is a single send.
type held struct {
	at, end, ref []int64
	key          []int32
	n, step      []int64
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
	if h.n != nil {
		h.n, h.step = append(h.n, 1), append(h.step, 0)
	}
}

func (h *held) item(i int) item {
	it := item{at: h.at[i], ref: report.Ref(h.ref[i])}
	if h.end != nil {
		it.end = h.end[i]
	}
	if h.key != nil {
		it.key = h.key[i]
	}
	return it
}

func (h *held) reset() {
	h.at, h.ref = h.at[:0], h.ref[:0]
	if h.end != nil {
		h.end = h.end[:0]
	}
	if h.key != nil {
		h.key = h.key[:0]
	}
	h.n, h.step = nil, nil
}

// drop removes the first n entries: by moving the rest to the front when
// that is the smaller copy (the common case, a short tail within the
// horizon), else by reslicing, so that either way the cost is amortized
// O(1) an entry and the slices are reused.
func (h *held) drop(n int) {
	if n == len(h.at) {
		h.reset()
		return
	}
	if rest := len(h.at) - n; rest <= n {
		h.at, h.ref = h.at[:copy(h.at, h.at[n:])], h.ref[:copy(h.ref, h.ref[n:])]
		if h.end != nil {
			h.end = h.end[:copy(h.end, h.end[n:])]
		}
		if h.key != nil {
			h.key = h.key[:copy(h.key, h.key[n:])]
		}
		if h.n != nil {
			h.n, h.step = h.n[:copy(h.n, h.n[n:])], h.step[:copy(h.step, h.step[n:])]
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
	if h.n != nil {
		h.n, h.step = h.n[n:], h.step[n:]
	}
}

// compact folds neighbouring entries at one instant, with one end and key
// and evenly stepping refs, into runs. Neighbours in the in-order tail are
// neighbours in time order too: a late send never falls between two
// in-order sends at one instant.
func (h *held) compact() {
	if h.n == nil {
		h.n, h.step = make([]int64, len(h.at)), make([]int64, len(h.at))
		for i := range h.n {
			h.n[i] = 1
		}
	}
	w, runs := 0, false
	for i := range h.at {
		if w > 0 && h.join(w-1, i) {
			runs = true
			continue
		}
		h.at[w], h.ref[w], h.n[w], h.step[w] = h.at[i], h.ref[i], h.n[i], h.step[i]
		if h.end != nil {
			h.end[w] = h.end[i]
		}
		if h.key != nil {
			h.key[w] = h.key[i]
		}
		runs = runs || h.n[w] > 1
		w++
	}
	h.at, h.ref, h.n, h.step = h.at[:w], h.ref[:w], h.n[:w], h.step[:w]
	if h.end != nil {
		h.end = h.end[:w]
	}
	if h.key != nil {
		h.key = h.key[:w]
	}
	if !runs {
		h.n, h.step = nil, nil
	}
}

// join appends entry i to the run at entry a when it continues it.
func (h *held) join(a, i int) bool {
	if h.at[a] != h.at[i] || (h.end != nil && h.end[a] != h.end[i]) || (h.key != nil && h.key[a] != h.key[i]) {
		return false
	}
	s := h.step[a]
	switch {
	case h.n[a] > 1:
	case h.n[i] > 1:
		s = h.step[i]
	default:
		s = h.ref[i] - h.ref[a]
	}
	if h.ref[i] != h.ref[a]+h.n[a]*s || (h.n[i] > 1 && h.step[i] != s) {
		return false
	}
	h.n[a] += h.n[i]
	h.step[a] = s
	return true
}

// entry is a late send, or a run of late sends at one instant, in the heap.
type entry struct {
	at, end, ref int64
	n, step      uint32
	key          int32
}

// lateHeap orders late entries by time, then input order (a
// container/heap).
type lateHeap []entry

func before(at, ref, at2, ref2 int64) bool { return at < at2 || (at == at2 && ref < ref2) }

func (h lateHeap) Len() int           { return len(h) }
func (h lateHeap) Less(i, j int) bool { return before(h[i].at, h[i].ref, h[j].at, h[j].ref) }
func (h lateHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lateHeap) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *lateHeap) Pop() any {
	s := *h
	e := s[len(s)-1]
	*h = s[:len(s)-1]
	return e
}

// budget bounds the entries held over every input of one Run.
type budget struct {
	max, held, peak int
	sort            bool // the inputs are held whole, for --sort
}

// reorder repairs bounded disorder in one input: it releases sends in time
// order (equal times in input order) as soon as no later input can precede
// them, that is once they are at least the horizon older than the newest.
// A send earlier than the horizon allows is an input error. In-order sends,
// the common case, are kept in a sorted tail, appended in bulk; late ones go
// to a heap, so each costs O(log n). Sends at one instant from consecutive
// lines fold into one entry, so a log of one repeated line holds almost
// nothing.
type reorder struct {
	name      string
	file      int
	horizon   int64
	tail      held     // in-order sends
	late      lateHeap // sends that arrived after a later one
	cur       entry    // the newest late run, not yet in late; none when n is 0
	out       held     // released sends, when they must be copied
	viewed    int      // tail entries the last release handed out
	maxSeen   int64
	maxLine   int64
	lastLine  int64 // the last line read
	seen      bool
	disorder  report.Disorder
	budget    *budget
	counted   int // entries counted in budget
	compactAt int // the tail length that calls for compacting
	compacted int // the tail length after compacting
}

// minCompact is the tail length below which compacting is not worth a pass.
const minCompact = 1 << 16

// outMax is how many sends a release copies at most.
const outMax = 4096

// entries returns how many entries the input holds.
func (r *reorder) entries() int {
	n := r.tail.len() + len(r.late)
	if r.cur.n > 0 {
		n++
	}
	return n
}

// account brings the shared budget up to date.
func (r *reorder) account() {
	n := r.entries()
	r.budget.held += n - r.counted
	r.counted = n
	r.budget.peak = max(r.budget.peak, r.budget.held)
}

// settle drops the tail entries the last release handed out.
func (r *reorder) settle() {
	if r.viewed > 0 {
		r.tail.drop(r.viewed)
		r.viewed = 0
	}
}

// push adds a batch of sends read from the input; keys, with a key column,
// holds each send's group id.
func (r *reorder) push(b *sendlog.Batch, keys []int32) error {
	r.settle()
	withEnd, withKey := b.End != nil, keys != nil
	if r.tail.at == nil {
		r.tail = held{at: []int64{}, ref: []int64{}}
		if withEnd {
			r.tail.end = []int64{}
		}
		if withKey {
			r.tail.key = []int32{}
		}
		r.compactAt = minCompact
	}
	if !r.pushSorted(b, keys, withEnd) {
		for i := range b.At {
			it := item{at: b.At[i], ref: report.MakeRef(r.file, b.Line[i])}
			if withEnd {
				it.end = b.End[i]
			}
			if withKey {
				it.key = keys[i]
			}
			if !r.seen || it.at >= r.maxSeen {
				r.seen, r.maxSeen, r.maxLine = true, it.at, b.Line[i]
				r.tail.appendItem(it, withEnd, withKey)
				continue
			}
			if err := r.placeLate(it); err != nil {
				return err
			}
		}
	}
	if n := len(b.Line); n > 0 {
		r.lastLine = b.Line[n-1]
	}
	r.account()
	if r.tail.len() > r.compactAt {
		r.compact()
	}
	return nil
}

func (r *reorder) compact() {
	r.tail.compact()
	r.compacted = r.tail.len()
	r.compactAt = max(minCompact, 2*r.compacted)
	r.account()
}

// bound fails when the sends held over every input pass the budget. report.Call
// it before reading on, once release has nothing more to give: what is
// held then, the verdicts still need.
func (r *reorder) bound() error {
	if r.budget.held <= r.budget.max {
		return nil
	}
	// Compact first, if the tail grew by a quarter since it last was, so
	// that compacting stays amortized O(1) a send.
	r.settle()
	if r.tail.len() > r.compacted+r.compacted/4 {
		r.compact()
		if r.budget.held <= r.budget.max {
			return nil
		}
	}
	max := r.budget.max
	msg := fmt.Sprintf("more than %d sends lie within logcheck.Config.MaxDisorder %v of the newest, and each must be held until no later line can precede it (logcheck.Config.MaxBuffered %d): raise logcheck.Config.MaxBuffered, or lower logcheck.Config.MaxDisorder",
		max, time.Duration(r.horizon), max)
	if r.budget.sort {
		msg = fmt.Sprintf("logcheck.Config.Sort holds the whole input, and it has more than %d sends to hold (logcheck.Config.MaxBuffered %d): raise logcheck.Config.MaxBuffered, or drop logcheck.Config.Sort and set logcheck.Config.MaxDisorder",
			max, max)
	}
	return &sendlog.InputError{File: r.name, Line: r.lastLine, Msg: msg}
}

// pushSorted appends a batch in bulk when it is in time order and starts
// no earlier than every held send, the common case; it reports whether it
// did.
func (r *reorder) pushSorted(b *sendlog.Batch, keys []int32, withEnd bool) bool {
	if len(b.At) == 0 || (r.seen && b.At[0] < r.maxSeen) {
		return false
	}
	prev := b.At[0]
	for _, at := range b.At {
		if at < prev {
			return false
		}
		prev = at
	}
	r.tail.at = append(r.tail.at, b.At...)
	if withEnd {
		r.tail.end = append(r.tail.end, b.End...)
	}
	if keys != nil {
		r.tail.key = append(r.tail.key, keys...)
	}
	start := len(r.tail.ref)
	r.tail.ref = append(r.tail.ref, b.Line...)
	if r.file != 0 {
		for i := start; i < len(r.tail.ref); i++ {
			r.tail.ref[i] = int64(report.MakeRef(r.file, r.tail.ref[i]))
		}
	}
	if r.tail.n != nil {
		for range b.At {
			r.tail.n, r.tail.step = append(r.tail.n, 1), append(r.tail.step, 0)
		}
	}
	n := len(b.At)
	r.seen, r.maxSeen, r.maxLine = true, b.At[n-1], b.Line[n-1]
	return true
}

// placeLate holds a send that arrived after a later one. It extends the
// newest late run when it continues it: no held send can fall between
// them, since every send read in between is later.
func (r *reorder) placeLate(it item) error {
	lateBy := r.maxSeen - it.at
	if lateBy > r.horizon {
		return &sendlog.InputError{File: r.name, Line: it.ref.Line(), Msg: fmt.Sprintf(
			"%v earlier than line %d, beyond the reorder horizon logcheck.Config.MaxDisorder %v (raise it, or logcheck.Config.Sort the whole input)",
			time.Duration(lateBy), r.maxLine, time.Duration(r.horizon))}
	}
	r.disorder.Lines++
	r.disorder.Max = max(r.disorder.Max, time.Duration(lateBy))
	c := &r.cur
	if c.n > 0 && c.at == it.at && c.end == it.end && c.key == it.key && c.n < math.MaxUint32 {
		d := int64(it.ref) - c.ref
		if c.n == 1 && d <= math.MaxUint32 {
			c.n, c.step = 2, uint32(d)
			return nil
		}
		if c.n > 1 && d == int64(c.n)*int64(c.step) {
			c.n++
			return nil
		}
	}
	if c.n > 0 {
		heap.Push(&r.late, *c)
	}
	*c = entry{at: it.at, end: it.end, ref: int64(it.ref), n: 1, key: it.key}
	return nil
}

// release returns the next sends that no later input can precede (with
// flush, all of them), in time order, ties in input order; none when no
// send is ready. The result is valid until the next call to release or
// push.
func (r *reorder) release(flush bool) held {
	r.settle()
	if r.cur.n > 0 {
		heap.Push(&r.late, r.cur)
		r.cur = entry{}
	}
	defer r.account()
	limit := r.maxSeen - r.horizon
	if flush {
		limit = math.MaxInt64
	}
	// Held sends are sorted: binary-search the first one still too recent.
	lo, hi := 0, r.tail.len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.tail.at[m] <= limit {
			lo = m + 1
		} else {
			hi = m
		}
	}
	k := lo
	lateReady := func() bool { return len(r.late) > 0 && r.late[0].at <= limit }
	if !lateReady() && (k == 0 || r.tail.n == nil) {
		r.viewed = k
		return r.tail.sub(0, k)
	}
	// Merge the tail and the late sends, unfolding runs, a bounded number
	// at a time.
	r.out.reset()
	if r.tail.end != nil && r.out.end == nil {
		r.out.end = []int64{}
	}
	if r.tail.key != nil && r.out.key == nil {
		r.out.key = []int32{}
	}
	i := 0
	for r.out.len() < outMax {
		tailOK, heapOK := i < k, lateReady()
		if !tailOK && !heapOK {
			break
		}
		if heapOK && (!tailOK || before(r.late[0].at, r.late[0].ref, r.tail.at[i], r.tail.ref[i])) {
			e := &r.late[0]
			took := r.emit(e.at, e.end, e.ref, int64(e.step), e.key, int64(e.n))
			if took == int64(e.n) {
				heap.Pop(&r.late)
			} else {
				e.ref += took * int64(e.step)
				e.n -= uint32(took)
			}
			continue
		}
		var end int64
		var key int32
		if r.tail.end != nil {
			end = r.tail.end[i]
		}
		if r.tail.key != nil {
			key = r.tail.key[i]
		}
		n, step := int64(1), int64(0)
		if r.tail.n != nil {
			n, step = r.tail.n[i], r.tail.step[i]
		}
		took := r.emit(r.tail.at[i], end, r.tail.ref[i], step, key, n)
		if took == n {
			i++
		} else {
			r.tail.ref[i] += took * step
			r.tail.n[i] -= took
		}
	}
	r.viewed = i
	return r.out
}

// emit copies up to n sends of a run into out and returns how many it took.
func (r *reorder) emit(at, end, ref, step int64, key int32, n int64) int64 {
	n = min(n, int64(outMax-r.out.len()))
	for j := range n {
		r.out.at = append(r.out.at, at)
		r.out.ref = append(r.out.ref, ref+j*step)
		if r.out.end != nil {
			r.out.end = append(r.out.end, end)
		}
		if r.out.key != nil {
			r.out.key = append(r.out.key, key)
		}
	}
	return n
}

// sub returns entries [i, j) as a held view sharing memory.
func (h *held) sub(i, j int) held {
	v := held{at: h.at[i:j], ref: h.ref[i:j]}
	if h.end != nil {
		v.end = h.end[i:j]
	}
	if h.key != nil {
		v.key = h.key[i:j]
	}
	return v
}
