package strategies

// Settlement of reserved costs in each book (docs/semantics.md, "Reserved
// costs"): a call recorded at its estimate e by ReserveCost is corrected
// to its actual cost a by SettleCost, from the settlement's instant on.
// Each book keeps what a settlement needs while the call lies in a window
// it could change, and no longer: a settlement after that changes nothing,
// as the provider's does not.

// SettleBook is a CostBook whose recorded costs can be settled.
type SettleBook interface {
	CostBook
	// ReserveCost records a call of estimate e at now, as RecordCost does,
	// and returns a mark naming the record for SettleCost.
	ReserveCost(now, e int64) int64
	// SettleCost replaces, from now on, the estimate e of the call named by
	// mark with its actual cost a (any a >= 0, above the limit too). Now
	// never decreases across the book's calls.
	SettleCost(now, mark, e, a int64)
}

var (
	_ SettleBook = (*SlidingLog)(nil)
	_ SettleBook = (*BucketWindow)(nil)
	_ SettleBook = (*FixedBook)(nil)
	_ SettleBook = (*TokenBucket)(nil)
	_ SettleBook = (*FirstCallBook)(nil)
	_ SettleBook = (*FixedWindow)(nil)
	_ SettleBook = (*WindowCounter)(nil)
)

// ReserveCost records the call and returns its sequence number; an
// estimate of 0 is kept too (as an entry of no cost), so that its
// settlement finds it.
func (l *SlidingLog) ReserveCost(now, e int64) int64 {
	l.trim(now)
	if !l.costly {
		l.RecordCost(now, 1)
		return -1
	}
	l.push(now, e)
	return l.seq + int64(l.n) - 1
}

// SettleCost corrects the entry named by mark while it is in the log.
func (l *SlidingLog) SettleCost(now, mark, e, a int64) {
	l.trim(now)
	k := mark - l.seq
	if !l.costly || k < 0 || k >= int64(l.n) {
		return
	}
	i := (l.head + int(k)) % len(l.at)
	old := l.wt[i]
	l.wt[i], l.sum = a, l.sum+a-old
	switch {
	case old == 0 && a != 0:
		l.zeros--
	case old != 0 && a == 0:
		l.zeros++
	}
}

// ReserveCost records the call in its bucket and returns the bucket.
func (b *BucketWindow) ReserveCost(now, e int64) int64 {
	return b.record(now, e)
}

// SettleCost corrects the call's bucket while it is in the bound.
func (b *BucketWindow) SettleCost(now, mark, e, a int64) {
	b.advance(now)
	if mark < b.first || mark > b.last {
		return
	}
	*b.slot(mark) += a - e
	b.total += a - e
}

// ReserveCost records the call and returns its window's start.
func (f *FixedBook) ReserveCost(now, e int64) int64 {
	f.RecordCost(now, e)
	return f.start
}

// SettleCost corrects the window that holds the call, while it is the
// current one.
func (f *FixedBook) SettleCost(now, mark, e, a int64) {
	f.roll(now)
	if f.start == mark {
		f.sum += a - e
	}
}

// ReserveCost takes e units and returns 0: a bucket needs no mark.
func (b *TokenBucket) ReserveCost(now, e int64) int64 {
	b.RecordCost(now, e)
	return 0
}

// SettleCost gives e-a units back, never above the capacity, or takes a-e
// more, which may leave the bucket below empty: later calls then wait for
// the refill to pay the debt.
func (b *TokenBucket) SettleCost(now, _, e, a int64) {
	l, d := b.at(now)
	if a < e {
		back := mul128(uint64(e-a), b.w)
		if back.less(d) {
			d = d.sub(back)
		} else {
			l, d = l.add(back.sub(d)), u128{}
			if b.full.less(l) {
				l = b.full
			}
		}
	} else {
		take := mul128(uint64(a-e), b.w)
		if take.less(l) {
			l = l.sub(take)
		} else {
			l, d = u128{}, d.add(take.sub(l))
		}
	}
	if !b.has || now > b.prev {
		b.prev = now
	}
	b.has, b.level, b.debt = true, l, d
}

// ReserveCost records the call and returns its window's start.
func (f *FirstCallBook) ReserveCost(now, e int64) int64 {
	f.RecordCost(now, e)
	return f.start
}

// SettleCost corrects the window the call opened or joined, while it is
// open.
func (f *FirstCallBook) SettleCost(now, mark, e, a int64) {
	if !f.open(now) && f.start == mark {
		f.sum += a - e
	}
}

// ReserveCost records the call and returns its window's start.
func (f *FixedWindow) ReserveCost(now, e int64) int64 {
	f.RecordCost(now, e)
	return f.start
}

// SettleCost corrects the current window when it holds the call.
func (f *FixedWindow) SettleCost(now, mark, e, a int64) {
	f.roll(now)
	if f.start == mark {
		f.count += a - e
	}
}

// ReserveCost records the call and returns its fixed window's start.
func (c *WindowCounter) ReserveCost(now, e int64) int64 {
	c.RecordCost(now, e)
	return c.start
}

// SettleCost corrects the counter of the call's fixed window, the
// current or the previous one.
func (c *WindowCounter) SettleCost(now, mark, e, a int64) {
	c.roll(now)
	switch mark {
	case c.start:
		c.cur += a - e
	case c.start - c.window:
		c.prev += a - e
	}
}
