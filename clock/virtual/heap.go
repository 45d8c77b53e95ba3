package virtual

// evHeap is a 4-ary min-heap of caller events ordered by (at, seq), written
// out rather than through container/heap because it is the simulator's hot
// path. Four children per node halve a binary heap's depth, which makes a
// pop (the common operation) cheaper. Every caller has at most one event in
// the heap and knows where (proc.hidx), so a caller woken early (a lock
// handed over before its timeout) moves its event instead of leaving a
// stale one behind.
type evHeap []event

func (e event) before(o event) bool {
	return e.at < o.at || (e.at == o.at && e.seq < o.seq)
}

// set schedules ev for its caller: it inserts the event, or moves the
// caller's pending one to ev's place in the order.
func (h *evHeap) set(ev event) {
	i := ev.p.hidx
	if i < 0 {
		*h = append(*h, ev)
		i = len(*h) - 1
	} else if (*h)[i].before(ev) {
		h.down(i, ev)
		return
	}
	h.up(i, ev)
}

// pop removes and returns the first event; its caller then has none.
func (h *evHeap) pop() event {
	a := *h
	top := a[0]
	top.p.hidx = -1
	n := len(a) - 1
	last := a[n]
	a[n] = event{}
	*h = a[:n]
	if n > 0 {
		h.down(0, last)
	}
	return top
}

// up places ev at hole i or above it.
func (h evHeap) up(i int, ev event) {
	for i > 0 {
		parent := (i - 1) / 4
		if !ev.before(h[parent]) {
			break
		}
		h[i] = h[parent]
		h[i].p.hidx = i
		i = parent
	}
	h[i] = ev
	ev.p.hidx = i
}

// down places ev at hole i or below it.
func (h evHeap) down(i int, ev event) {
	n := len(h)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < min(c+4, n); j++ {
			if h[j].before(h[m]) {
				m = j
			}
		}
		if !h[m].before(ev) {
			break
		}
		h[i] = h[m]
		h[i].p.hidx = i
		i = m
	}
	h[i] = ev
	ev.p.hidx = i
}
