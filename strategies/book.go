package strategies

import (
	"fmt"
	"math/bits"
	"sync"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Book is the bookkeeping of one rule: how long a call must wait at now, and
// the recording of a call admitted at now. It is pure: the time is always an
// argument, never read from a clock. A Book is not safe for concurrent use.
type Book interface {
	// WaitTime returns how long a call arriving at now must wait before the
	// rule would admit it; zero means it may go now.
	WaitTime(now int64) time.Duration
	// Record counts a call at now. Instants passed to Record never decrease.
	Record(now int64)
}

// CostBook is a Book that meters costs: a call of cost c (a whole number
// from 0 to the rule's limit) waits until the costs in its window plus c
// fit the limit, and is recorded with its cost. WaitTime and Record are
// the same with cost 1.
type CostBook interface {
	Book
	WaitTimeCost(now, c int64) time.Duration
	RecordCost(now, c int64)
}

// SlidingLog is the exact bookkeeping of one rule: the times of the last
// Limit calls (for a cost rule, of the last Limit calls of nonzero cost,
// each with its cost). An entry expires when now-entry >= Window, which is the
// half-open contract the checker enforces. Keeping only the last Limit
// entries loses nothing, because the wait always depends on the Limit-th
// newest one. The ring grows with the entries actually in the window, never
// to Limit up front, so a rule of 2^63-1 per second costs what its calls
// cost. The zero value is not usable; call NewSlidingLog.
type SlidingLog struct {
	window int64
	limit  int
	at     []int64  // ring of at most limit entries, oldest at head
	buf    *[]int64 // at's memory when its size is a power of two, for logRings
	wt     []int64  // the entries' costs, beside at; nil for a call rule (each 1)
	costly bool     // a cost rule: wt is kept
	head   int
	n      int
	sum    int64 // the entries' costs summed (n for a call rule)
	seq    int64 // the sequence number of the entry at head: a settlement's mark
	zeros  int   // entries of cost 0, kept only for a settlement to find
}

// mustSliding panics on a rule of another kind given to bookkeeping that
// keeps sliding windows only: keeping it as a sliding rule would be
// silently wrong. NewBook keeps every kind.
func mustSliding(r rule.Rule) {
	if r.Kind != rule.Sliding {
		panic(fmt.Sprintf("strategies: rule %s: this bookkeeping keeps sliding rules only (NewBook keeps every kind)", r))
	}
}

// NewSlidingLog returns an empty log for r.
func NewSlidingLog(r rule.Rule) *SlidingLog {
	mustSliding(r)
	return &SlidingLog{window: int64(r.Window), limit: r.Limit, costly: r.Unit != ""}
}

// cost returns the cost of entry i of the ring.
func (l *SlidingLog) cost(i int) int64 {
	if l.wt == nil {
		return 1
	}
	return l.wt[i]
}

func (l *SlidingLog) trim(now int64) {
	for l.n > 0 && now-l.at[l.head] >= l.window {
		l.pop()
	}
}

// pop drops the oldest entry.
func (l *SlidingLog) pop() {
	c := l.cost(l.head)
	if c == 0 {
		l.zeros--
	}
	l.sum -= c
	l.head++
	if l.head == len(l.at) {
		l.head = 0
	}
	l.n--
	l.seq++
}

// WaitTime returns zero while fewer than Limit entries lie in the window, and
// otherwise the time until the oldest one leaves it.
func (l *SlidingLog) WaitTime(now int64) time.Duration { return l.WaitTimeCost(now, 1) }

// WaitTimeCost returns zero while the costs in the window plus c fit the
// limit, and otherwise the time until enough of the oldest entries leave
// it. It must not be asked for a c above the limit.
func (l *SlidingLog) WaitTimeCost(now, c int64) time.Duration {
	l.trim(now)
	room := int64(l.limit) - c
	if l.sum <= room {
		return 0
	}
	left, i := l.sum, l.head
	for range l.n {
		if left -= l.cost(i); left <= room {
			break
		}
		if i++; i == len(l.at) {
			i = 0
		}
	}
	return time.Duration(l.at[i] + l.window - now)
}

// Record appends now; when the log is full the oldest entry gives way.
func (l *SlidingLog) Record(now int64) { l.RecordCost(now, 1) }

// RecordCost appends now with cost c; an entry of cost 0 takes no room
// and is not kept. When the log holds Limit entries the oldest gives way:
// each costs at least 1, so the newest Limit entries decide every wait.
func (l *SlidingLog) RecordCost(now, c int64) {
	l.trim(now)
	if c == 0 {
		return
	}
	l.push(now, c)
}

// push appends now with cost c, kept even when 0 (a reserved estimate).
// While no entry costs 0 the oldest gives way at Limit entries; entries of
// cost 0 (settled to nothing) make the ring grow past Limit instead.
func (l *SlidingLog) push(now, c int64) {
	if l.n >= l.limit && l.zeros == 0 {
		l.pop()
	}
	if l.n == len(l.at) {
		l.grow()
	}
	i := l.head + l.n
	if i >= len(l.at) {
		i -= len(l.at)
	}
	l.at[i] = now
	if l.wt != nil {
		l.wt[i] = c
	}
	if c == 0 {
		l.zeros++
	}
	l.n++
	l.sum += c
}

// logRings keeps the rings that logs outgrew, for the next logs to grow
// into: pool k holds rings of 1<<k entries. A log of a large limit then
// leaves only its last ring as garbage, not every one it grew through.
var logRings [64]sync.Pool

// grow doubles the ring (up to limit), oldest entry first, and gives the
// old ring to logRings: only l refers to it, and from now on it does not.
func (l *SlidingLog) grow() {
	size := max(2*len(l.at), 8)
	if l.zeros == 0 {
		size = min(size, l.limit)
	}
	at, buf := takeLogRing(size)
	k := copy(at, l.at[l.head:])
	copy(at[k:], l.at[:l.head])
	if l.costly {
		wt := make([]int64, len(at))
		k := copy(wt, l.wt[l.head:])
		copy(wt[k:], l.wt[:l.head])
		l.wt = wt
	}
	if l.buf != nil {
		logRings[bits.TrailingZeros(uint(len(l.at)))].Put(l.buf)
	}
	l.at, l.buf, l.head = at, buf, 0
}

// takeLogRing returns a zeroed ring of size entries, as make would, and its
// entry in logRings when size is a power of two (nil otherwise: a ring of
// limit entries is a log's last).
func takeLogRing(size int) ([]int64, *[]int64) {
	if size <= 0 || size&(size-1) != 0 {
		return make([]int64, size), nil
	}
	if buf, ok := logRings[bits.TrailingZeros(uint(size))].Get().(*[]int64); ok {
		clear(*buf)
		return *buf, buf
	}
	at := make([]int64, size)
	return at, &at
}

// Len returns the number of entries still in the window at the last call.
func (l *SlidingLog) Len() int { return l.n }
