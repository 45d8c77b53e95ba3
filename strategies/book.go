package strategies

import (
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

// SlidingLog is the exact bookkeeping of one rule: the times of the last
// Limit calls. An entry expires when now-entry >= Window, which is the
// half-open contract the checker enforces. Keeping only the last Limit
// entries loses nothing, because the wait always depends on the Limit-th
// newest one. The ring grows with the entries actually in the window, never
// to Limit up front, so a rule of 2^63-1 per second costs what its calls
// cost. The zero value is not usable; call NewSlidingLog.
type SlidingLog struct {
	window int64
	limit  int
	at     []int64 // ring of at most limit entries, oldest at head
	head   int
	n      int
}

// NewSlidingLog returns an empty log for r.
func NewSlidingLog(r rule.Rule) *SlidingLog {
	return &SlidingLog{window: int64(r.Window), limit: r.Limit}
}

func (l *SlidingLog) trim(now int64) {
	for l.n > 0 && now-l.at[l.head] >= l.window {
		l.head++
		if l.head == len(l.at) {
			l.head = 0
		}
		l.n--
	}
}

// WaitTime returns zero while fewer than Limit entries lie in the window, and
// otherwise the time until the oldest one leaves it.
func (l *SlidingLog) WaitTime(now int64) time.Duration {
	l.trim(now)
	if l.n < l.limit {
		return 0
	}
	return time.Duration(l.at[l.head] + l.window - now)
}

// Record appends now; when the log is full the oldest entry gives way.
func (l *SlidingLog) Record(now int64) {
	l.trim(now)
	if l.n == l.limit {
		l.at[l.head] = now
		l.head++
		if l.head == len(l.at) {
			l.head = 0
		}
		return
	}
	if l.n == len(l.at) {
		l.grow()
	}
	i := l.head + l.n
	if i >= len(l.at) {
		i -= len(l.at)
	}
	l.at[i] = now
	l.n++
}

// grow doubles the ring (up to limit), oldest entry first.
func (l *SlidingLog) grow() {
	size := min(max(2*len(l.at), 8), l.limit)
	at := make([]int64, size)
	k := copy(at, l.at[l.head:])
	copy(at[k:], l.at[:l.head])
	l.at, l.head = at, 0
}

// Len returns the number of entries still in the window at the last call.
func (l *SlidingLog) Len() int { return l.n }
