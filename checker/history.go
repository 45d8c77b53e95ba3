package checker

// history keeps the times (and refs) of one rule's most recent sends,
// addressed by the send's index in the stream: send j sits in slot
// j & (len-1). Its power-of-two capacity grows, before anything would be
// overwritten, up to what the rule needs: Limit+1 sends to decide
// violations, one more than the largest window occupancy seen so far to
// measure it, and never beyond max.
type history struct {
	at, ref []int64
	base    int64 // the first send index ever stored since the last reset
	max     int   // capacity bound (a power of two)
}

// held returns how many of the sends before and including idx are stored.
func (h *history) held(idx int64) int64 {
	return min(idx+1-h.base, int64(len(h.at)))
}

// reserve makes room for send idx, growing when it would overwrite a send
// and the capacity is below need.
func (h *history) reserve(idx int64, need int) {
	if idx-h.base < int64(len(h.at)) || len(h.at) >= min(need, h.max) {
		return
	}
	c := max(len(h.at)*2, 8)
	for c < min(need, h.max) {
		c *= 2
	}
	at, ref := make([]int64, c), make([]int64, c)
	for j := max(h.base, idx-int64(len(h.at))); j < idx; j++ {
		at[j&int64(c-1)], ref[j&int64(c-1)] = h.at[j&int64(len(h.at)-1)], h.ref[j&int64(len(h.ref)-1)]
	}
	h.at, h.ref = at, ref
}

// reset forgets every stored send and frees the memory; idx is the next
// send's index.
func (h *history) reset(idx int64) {
	h.at, h.ref, h.base = nil, nil, idx
}

// get returns stored send j.
func (h *history) get(j int64) Send {
	m := int64(len(h.at) - 1)
	return Send{At: h.at[j&m], Ref: h.ref[j&m]}
}

// windowStart returns the index of the oldest stored send still in the
// window of send idx (times after cutoff), and whether older stored sends
// may have been in it too (the history had dropped them).
func (h *history) windowStart(idx, cutoff int64) (int64, bool) {
	held := h.held(idx)
	lo, hi := idx-held+1, idx
	saturated := h.at[lo&int64(len(h.at)-1)] > cutoff && lo > h.base
	for lo < hi {
		mid := lo + (hi-lo)/2
		if h.at[mid&int64(len(h.at)-1)] > cutoff {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, saturated
}

// last returns stored sends from..idx, oldest first, at most k of them (the
// newest).
func (h *history) last(from, idx int64, k int) []Send {
	from = max(from, idx-int64(k)+1)
	out := make([]Send, 0, idx-from+1)
	for j := from; j <= idx; j++ {
		out = append(out, h.get(j))
	}
	return out
}
