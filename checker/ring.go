package checker

// ring is a FIFO of sends with a power-of-two capacity that grows on demand
// up to max; when full at max, pushing drops the oldest entry.
type ring struct {
	at   []int64
	ref  []int64
	head int // index of the oldest entry
	n    int
	max  int
}

func newRing(initial, max int) ring {
	c := 1
	for c < initial {
		c <<= 1
	}
	return ring{at: make([]int64, c), ref: make([]int64, c), max: max}
}

func (r *ring) mask() int { return len(r.at) - 1 }

// release frees the ring's memory when it is empty; push grows it again.
func (r *ring) release() {
	if r.n == 0 {
		r.at, r.ref, r.head = nil, nil, 0
	}
}

// oldest returns the oldest entry's time; the ring must not be empty.
func (r *ring) oldest() int64 { return r.at[r.head] }

func (r *ring) pop() {
	r.head = (r.head + 1) & r.mask()
	r.n--
}

// push appends a send and reports whether the oldest entry had to be dropped
// to make room.
func (r *ring) push(at, ref int64) (dropped bool) {
	if r.n == len(r.at) {
		if len(r.at) < r.max {
			r.grow()
		} else {
			r.pop()
			dropped = true
		}
	}
	i := (r.head + r.n) & r.mask()
	r.at[i], r.ref[i] = at, ref
	r.n++
	return dropped
}

func (r *ring) grow() {
	c := max(len(r.at)*2, 8)
	at, ref := make([]int64, c), make([]int64, c)
	for k := range r.n {
		j := (r.head + k) & r.mask()
		at[k], ref[k] = r.at[j], r.ref[j]
	}
	r.at, r.ref, r.head = at, ref, 0
}

// last returns the newest k entries, oldest first.
func (r *ring) last(k int) []Send {
	if k > r.n {
		k = r.n
	}
	out := make([]Send, k)
	for j := range k {
		i := (r.head + r.n - k + j) & r.mask()
		out[j] = Send{At: r.at[i], Ref: r.ref[i]}
	}
	return out
}
