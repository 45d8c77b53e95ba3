package strategies

import (
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// BucketWindow is the bounded-memory bookkeeping of one rule: counts of
// admissions in buckets of width g = ceil(W/k), aligned to the epoch
// (bucket b holds the instants [b*g, (b+1)*g)). The sends in the window
// (t-W, t] all lie in the buckets floor((t-W)/g) to floor(t/g), so the sum
// of those counts bounds the true count from above, and a call is admitted
// only while that bound is at most Limit-1. It never overfills a half-open
// window, nor a closed one [t-W, t], whose start lies in the same oldest
// bucket. It keeps about k+1 counts whatever the limit, and gives up at
// most what the oldest, partly expired bucket holds. See docs/windows.md.
//
// Like SlidingLog it is pure: time is always an argument. A call at an
// instant whose window reaches before the buckets already dropped (an
// instant earlier than one seen) is made to wait until its window starts
// in a kept bucket: the decision stays safe without keeping older counts.
// The zero value is not usable; call NewBucketWindow. A BucketWindow is
// not safe for concurrent use.
type BucketWindow struct {
	limit  int64
	window int64
	width  int64
	counts []int64 // ring over bucket numbers first..last, indexed by b mod len
	first  int64   // the oldest bucket in the bound of the latest instant
	last   int64   // the newest bucket recorded; last < first when none
	total  int64   // sum of counts of buckets first..last
	begun  bool
	shave  int64 // buckets left out of the bound: nonzero only in tests, to weaken it
}

// NewBucketWindow returns empty bookkeeping for r in k buckets (k >= 1;
// more buckets than the window has nanoseconds are cut to one per
// nanosecond).
func NewBucketWindow(r rule.Rule, k int) *BucketWindow {
	mustSliding(r)
	k = max(min(k, int(min(int64(r.Window), int64(rule.MaxBuckets)))), 1)
	g := int64(r.BucketWidth(k))
	span := (int64(r.Window)+g-1)/g + 1 // buckets one window can touch
	return &BucketWindow{limit: int64(r.Limit), window: int64(r.Window), width: g, counts: make([]int64, span)}
}

func (b *BucketWindow) slot(n int64) *int64 { return &b.counts[mod(n, int64(len(b.counts)))] }

// advance drops from the bound the buckets that left it by now and
// returns the oldest bucket now's window needs.
func (b *BucketWindow) advance(now int64) int64 {
	lo := rule.FloorDiv(now-b.window, b.width) + b.shave
	if !b.begun {
		b.first, b.last, b.begun = lo, lo-1, true
	}
	for ; b.first < lo; b.first++ {
		if b.first <= b.last {
			b.total -= *b.slot(b.first)
			*b.slot(b.first) = 0
		}
	}
	return lo
}

// WaitTime returns zero while the counts of the buckets that now's window
// touches add up to at most Limit-1, and otherwise the time until enough
// of the oldest of them leave the bound.
func (b *BucketWindow) WaitTime(now int64) time.Duration { return b.WaitTimeCost(now, 1) }

// WaitTimeCost is WaitTime for a call of cost c (at most the limit): the
// buckets hold costs, and they must add up to at most Limit-c.
func (b *BucketWindow) WaitTimeCost(now, c int64) time.Duration {
	lo := b.advance(now)
	if lo < b.first {
		return time.Duration(b.first*b.width + b.window - now)
	}
	if b.total <= b.limit-c {
		return 0
	}
	need, acc := b.total-(b.limit-c), int64(0)
	for n := b.first; n <= b.last; n++ {
		if acc += *b.slot(n); acc >= need {
			// Bucket n leaves the bound when floor((t-W)/g) > n.
			return time.Duration((n+1-b.shave)*b.width + b.window - now)
		}
	}
	return time.Duration((b.last+1-b.shave)*b.width + b.window - now) // unreachable: the counts add up to total
}

// Record counts a call at now in its bucket.
func (b *BucketWindow) Record(now int64) { b.RecordCost(now, 1) }

// RecordCost adds a call's cost c at now to its bucket.
func (b *BucketWindow) RecordCost(now, c int64) { b.record(now, c) }

// record is RecordCost that returns the bucket it counted the call in.
func (b *BucketWindow) record(now, c int64) int64 {
	b.advance(now)
	// An instant earlier than the kept buckets is counted in the oldest
	// kept one: only later windows, which the wait above guards, see it.
	n := max(rule.FloorDiv(now, b.width), b.first)
	*b.slot(n) += c
	b.total += c
	b.last = max(b.last, n)
	return n
}

// Total returns the bound at the latest instant seen: the admissions counted
// in the buckets that instant's window touches.
func (b *BucketWindow) Total() int64 { return b.total }

// NewBook returns the bookkeeping r asks for: for a sliding rule an exact
// sliding log or a bucketed window (see rule.Rule.Keeping), for the other
// kinds their exact book (FixedBook, TokenBucket, FirstCallBook), with the
// rule's Margin. A first-call rule with a margin is kept as the sliding
// rule N/(W+margin), which keeps every first-call window at the provider
// however the delays reorder the sends that open them.
func NewBook(r rule.Rule) Book {
	switch r.Kind {
	case rule.Fixed:
		return newFixedBook(r)
	case rule.Bucket:
		return newTokenBucket(r)
	case rule.FirstCall:
		if r.Margin > 0 {
			return NewSlidingLog(Widen(r.Margin, rule.Rule{Limit: r.Limit, Window: r.Window, Unit: r.Unit})[0])
		}
		return &FirstCallBook{limit: int64(r.Limit), w: int64(r.Window)}
	}
	if k := r.Keeping(); k > 0 {
		return NewBucketWindow(r, k)
	}
	return NewSlidingLog(r)
}
