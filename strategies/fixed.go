package strategies

import (
	"time"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
)

// FixedWindow is the fixed-window counter of one rule: one count per
// window aligned to the epoch ([b*W, (b+1)*W)), reset when the next
// window starts. It takes constant memory and can admit up to 2*Limit
// calls in a sliding window that straddles a boundary: the simulator
// measures by how much. The zero value is not usable; call
// NewFixedWindow.
type FixedWindow struct {
	limit, window int64
	start, count  int64
}

// NewFixedWindow returns an empty counter for r.
func NewFixedWindow(r rule.Rule) *FixedWindow {
	mustSliding(r)
	return &FixedWindow{limit: int64(r.Limit), window: int64(r.Window), start: -1 << 63}
}

func (f *FixedWindow) roll(now int64) {
	if s := now - mod(now, f.window); s != f.start {
		f.start, f.count = s, 0
	}
}

// WaitTime returns zero while the current fixed window holds fewer than
// Limit calls, and otherwise the time until the next one starts.
func (f *FixedWindow) WaitTime(now int64) time.Duration { return f.WaitTimeCost(now, 1) }

// WaitTimeCost is WaitTime for a call of cost c.
func (f *FixedWindow) WaitTimeCost(now, c int64) time.Duration {
	f.roll(now)
	if f.count <= f.limit-c {
		return 0
	}
	return time.Duration(f.start + f.window - now)
}

// Record counts a call at now.
func (f *FixedWindow) Record(now int64) { f.RecordCost(now, 1) }

// RecordCost counts a call's cost at now.
func (f *FixedWindow) RecordCost(now, c int64) {
	f.roll(now)
	f.count += c
}

// NewCombinedBooks returns a combined limiter over bookkeeping the caller
// built, one Book per rule, for comparisons such as fixed windows or
// explicit bucket counts.
func NewCombinedBooks(rt clock.Runtime, books ...Book) *Combined {
	return newCombined(rt, books, nil)
}
