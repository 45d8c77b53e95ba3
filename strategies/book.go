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
// newest one. The zero value is not usable; call NewSlidingLog.
type SlidingLog struct {
	window int64
	at     []int64 // ring of at most Limit entries, oldest at head
	head   int
	n      int
}

// NewSlidingLog returns an empty log for r.
func NewSlidingLog(r rule.Rule) *SlidingLog {
	return &SlidingLog{window: int64(r.Window), at: make([]int64, r.Limit)}
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
	if l.n < len(l.at) {
		return 0
	}
	return time.Duration(l.at[l.head] + l.window - now)
}

// Record appends now; when the log is full the oldest entry gives way.
func (l *SlidingLog) Record(now int64) {
	l.trim(now)
	i := l.head + l.n
	if i >= len(l.at) {
		i -= len(l.at)
	}
	if l.n == len(l.at) {
		l.at[l.head] = now
		l.head++
		if l.head == len(l.at) {
			l.head = 0
		}
		return
	}
	l.at[i] = now
	l.n++
}

// Len returns the number of entries still in the window at the last call.
func (l *SlidingLog) Len() int { return l.n }
