package strategies

import (
	"math"
	"math/bits"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// The books of the kinds other than sliding keep their rule exactly as
// docs/semantics.md states the provider counts it, so that a limiter can
// use the whole allowance (N per fixed window, a full bucket) rather than
// the stricter sliding reading. Each honours rule.Rule.Margin, the
// allowance for the way to the provider that Widen sets.

// FixedBook is the exact bookkeeping of a fixed rule: the cost admitted in
// the current window [k*W+Offset, (k+1)*W+Offset), or the current local
// day of the rule's zone. With a margin m it admits nothing in the last m
// of a window: a send that takes up to m to reach the provider still
// arrives in the window it was counted in. The zero value is not usable;
// call NewBook. A FixedBook is not safe for concurrent use.
type FixedBook struct {
	limit, w, o, margin int64
	loc                 *time.Location // windows are this zone's days when set
	has                 bool
	start, end          int64 // the current window [start, end)
	sum                 int64 // the costs admitted in it
}

func newFixedBook(r rule.Rule) *FixedBook {
	loc, err := r.Location()
	if err != nil {
		panic("strategies: rule " + r.String() + ": " + err.Error())
	}
	return &FixedBook{limit: int64(r.Limit), w: int64(r.Window), o: int64(r.Offset), margin: int64(r.Margin), loc: loc}
}

// span returns the window that holds at, laid out as the checker lays it
// (rule.FixedSpan).
func (f *FixedBook) span(at int64) (start, end int64) {
	return rule.FixedSpan(at, f.w, f.o, f.loc)
}

// roll moves to the window of now; an instant before the current window
// (a clock that went back) stays in it, which only makes the book stricter.
func (f *FixedBook) roll(now int64) {
	if !f.has || now >= f.end {
		f.start, f.end = f.span(now)
		f.has, f.sum = true, 0
	}
}

// WaitTime returns zero while the current window holds fewer than Limit
// calls, and otherwise the time until the next one starts.
func (f *FixedBook) WaitTime(now int64) time.Duration { return f.WaitTimeCost(now, 1) }

// WaitTimeCost returns zero while the window's costs plus c fit the limit
// and now lies before the window's last margin, and otherwise the time
// until the next window starts (or, after a clock went back, until the
// current one does).
func (f *FixedBook) WaitTimeCost(now, c int64) time.Duration {
	f.roll(now)
	if c == 0 && f.sum <= f.limit { // a settlement above the estimate may overfill it
		return 0
	}
	switch {
	case now < f.start:
		return time.Duration(f.start - now)
	case now >= f.end-f.margin || c > f.limit-f.sum:
		return time.Duration(f.end - now)
	}
	return 0
}

// Record counts a call at now.
func (f *FixedBook) Record(now int64) { f.RecordCost(now, 1) }

// RecordCost adds a call's cost c at now to its window.
func (f *FixedBook) RecordCost(now, c int64) {
	f.roll(now)
	f.sum += c
}

// TokenBucket is the exact bookkeeping of a bucket rule N/W burst B: its
// level times W, in 128-bit integers, so that refilling N units per W
// adds exactly N per nanosecond and no rounding ever admits a call the
// provider would refuse. (GCRA keeps the same rule as a theoretical
// arrival time, exact in integer nanoseconds only when N divides W: the
// level is W/N times how far that time lies ahead of now.) The bucket is
// full at the first call. With a margin m its capacity is B - N*m/W: any
// span of admissions m longer than a span of arrivals then fits the
// provider's bucket of B. The zero value is not usable; call NewBook. A
// TokenBucket is not safe for concurrent use.
type TokenBucket struct {
	w, rate uint64
	full    u128 // the capacity times W: B*W - N*m, or 0 when that is negative
	has     bool
	prev    int64
	level   u128 // the level times W at prev
	debt    u128 // how far below empty a settlement took it, times W (level is then 0)
}

func newTokenBucket(r rule.Rule) *TokenBucket {
	b := &TokenBucket{w: uint64(r.Window), rate: uint64(r.Limit), full: mul128(uint64(r.Burst), uint64(r.Window))}
	if m := mul128(uint64(r.Limit), uint64(max(r.Margin, 0))); m.less(b.full) {
		b.full = b.full.sub(m)
	} else {
		b.full = u128{}
	}
	return b
}

// capacity returns the largest cost the bucket can ever admit.
func (b *TokenBucket) capacity() int64 {
	q, _ := bits.Div64(b.full.hi, b.full.lo, b.w) // full <= Burst*W: hi < W
	return int64(q)
}

// at returns the level times W at now (no refill before prev), and the
// debt the refill has yet to pay when a settlement took the bucket below
// empty (the level is then 0).
func (b *TokenBucket) at(now int64) (level, debt u128) {
	if !b.has {
		return b.full, u128{}
	}
	if now <= b.prev {
		return b.level, b.debt
	}
	l := mul128(b.rate, uint64(now-b.prev))
	if l.less(b.debt) {
		return u128{}, b.debt.sub(l)
	}
	l = b.level.add(l.sub(b.debt))
	if b.full.less(l) {
		return b.full, u128{}
	}
	return l, u128{}
}

// WaitTime returns zero while the bucket holds a unit, and otherwise the
// time until it does.
func (b *TokenBucket) WaitTime(now int64) time.Duration { return b.WaitTimeCost(now, 1) }

// WaitTimeCost returns zero while the bucket holds c units, and otherwise
// the time until the refill brings it there, rounded up to the
// nanosecond.
func (b *TokenBucket) WaitTimeCost(now, c int64) time.Duration {
	need := mul128(uint64(c), b.w)
	l, debt := b.at(now)
	if debt == (u128{}) && !l.less(need) {
		return 0
	}
	if b.full.less(need) {
		return math.MaxInt64 // never: a limiter refuses such a call first
	}
	short := need.add(debt).sub(l)
	if short.hi >= b.rate {
		return math.MaxInt64
	}
	q, r := bits.Div64(short.hi, short.lo, b.rate)
	if r != 0 {
		q++
	}
	wait := uint64(max(b.prev-now, 0)) + q
	if wait > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(wait)
}

// Record takes a unit at now.
func (b *TokenBucket) Record(now int64) { b.RecordCost(now, 1) }

// RecordCost takes c units at now; a call the bucket did not hold (the
// book was not asked) empties it, the strictest reading.
func (b *TokenBucket) RecordCost(now, c int64) {
	l, debt := b.at(now)
	if need := mul128(uint64(c), b.w); l.less(need) {
		l = u128{}
	} else {
		l = l.sub(need)
	}
	if !b.has || now > b.prev {
		b.prev = now
	}
	b.has, b.level, b.debt = true, l, debt
}

// FirstCallBook is the exact bookkeeping of a first-call rule: the window
// [s, s+W) opened by the first call at or after the previous window's end,
// and the cost admitted in it. A call of cost 0 opens a window too, as the
// provider sees it. The zero value is not usable; call NewBook. A
// FirstCallBook is not safe for concurrent use.
type FirstCallBook struct {
	limit, w int64
	has      bool
	start    int64
	sum      int64
}

func (f *FirstCallBook) open(now int64) bool {
	return !f.has || uint64(now-f.start) >= uint64(f.w) && now >= f.start
}

// WaitTime returns zero while the open window holds fewer than Limit
// calls or has closed, and otherwise the time until it closes.
func (f *FirstCallBook) WaitTime(now int64) time.Duration { return f.WaitTimeCost(now, 1) }

// WaitTimeCost is WaitTime for a call of cost c.
func (f *FirstCallBook) WaitTimeCost(now, c int64) time.Duration {
	if f.open(now) || c <= f.limit-f.sum {
		return 0
	}
	return time.Duration(f.start + f.w - now)
}

// Record counts a call at now.
func (f *FirstCallBook) Record(now int64) { f.RecordCost(now, 1) }

// RecordCost adds a call's cost c at now, opening a window when none is.
func (f *FirstCallBook) RecordCost(now, c int64) {
	if f.open(now) {
		f.has, f.start, f.sum = true, now, 0
	}
	f.sum += c
}

// capacity returns the largest cost a call may carry under r as a limiter
// keeps it (Margin included): a larger one could never be admitted.
func capacity(r rule.Rule) int64 {
	switch r.Kind {
	case rule.Bucket:
		return newTokenBucket(r).capacity()
	case rule.Fixed:
		shortest := r.Window
		if r.Zone != "" {
			shortest = 23 * time.Hour // a local day lasts 23 hours or more
		}
		if r.Margin >= shortest {
			return 0
		}
	}
	return int64(r.Limit)
}

// u128 is an unsigned 128-bit integer: a bucket's level times its window
// (at most Burst*Window < 2^126) stays exact in it. The checker keeps the
// same few lines (checker/u128.go) rather than share them: it imports only
// the core types, and a limiter must not lean on the checker it is judged by.
type u128 struct{ hi, lo uint64 }

func mul128(a, b uint64) u128 {
	hi, lo := bits.Mul64(a, b)
	return u128{hi, lo}
}

func (a u128) add(b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}
}

func (a u128) sub(b u128) u128 {
	lo, c := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, c)
	return u128{hi, lo}
}

func (a u128) less(b u128) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }
