package checker

// InWindow returns how many sends lie in rule r's window ending at now,
// (now-W, now] ([now-W, now] for a closed boundary), and the send that
// frees a slot in it: with n >= Limit, a send is next allowed once the
// Limit-th newest of them has left the window, at free.At+W (one ns later
// for a closed boundary). now must not be before the last send. The count
// is exact: the history keeps the fullest window seen, and no window
// ending at now holds more (a lower bound only past Config.MaxTrack). It
// answers for sliding call rules only: 0 for the others.
func (c *Checker) InWindow(r int, now int64) (n int64, free Send) {
	h := &c.hist
	if c.runOf[r] < 0 || h.at == nil || c.sends == 0 {
		return 0, Send{}
	}
	u := &c.runs[c.runOf[r]]
	last := c.sends - 1
	lo := max(h.oldest(last), last-u.bound+1)
	hi := last + 1 // the first stored send in the window, by binary search
	for lo < hi {
		mid := lo + (hi-lo)/2
		if uint64(now-h.at[mid&h.mask]) < u.w {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	n = last - lo + 1
	if n >= u.limit && u.limit > 0 {
		free = h.get(last - u.limit + 1)
	}
	return n, free
}

// CurrentWindow returns, for a fixed or first-call rule r, the window the
// last send fell in and the units (sends, for a call rule) it holds, every
// send in it counted, violators too; ok is false for the other rules and
// before the first send. A server uses it to say what remains of the
// window and when it resets.
func (c *Checker) CurrentWindow(r int) (span Span, units int64, ok bool) {
	for k := range c.slow {
		if c.slow[k].idx != r {
			continue
		}
		switch j := c.slow[k].j.(type) {
		case *fixedJudge:
			return j.span, j.sum, j.has
		case *firstCallJudge:
			return j.span, j.sum, j.has
		}
	}
	return Span{}, 0, false
}
