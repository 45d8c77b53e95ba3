package strategies

import (
	"math/bits"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// WindowCounter is the sliding-window counter approximation of one rule: two
// counters over fixed windows aligned on multiples of Window, the previous
// one weighted by how much of it the sliding window still covers. It takes
// constant memory whatever the limit, and it can admit more than Limit calls
// in some window: the simulator measures by how much. The zero value is not
// usable; call NewWindowCounter.
type WindowCounter struct {
	limit  int64
	window int64
	start  int64 // start of the current fixed window
	cur    int64 // calls in the current fixed window
	prev   int64 // calls in the previous fixed window
}

// NewWindowCounter returns an empty counter for r.
func NewWindowCounter(r rule.Rule) *WindowCounter {
	mustSliding(r)
	return &WindowCounter{limit: int64(r.Limit), window: int64(r.Window)}
}

func (c *WindowCounter) roll(now int64) {
	start := now - mod(now, c.window)
	switch {
	case start == c.start:
	case start == c.start+c.window:
		c.prev, c.cur = c.cur, 0
	default:
		c.prev, c.cur = 0, 0
	}
	c.start = start
}

func mod(a, m int64) int64 {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}

// WaitTime returns zero when prev*(W-elapsed)/W + cur + 1 <= Limit, and
// otherwise the shortest wait after which the estimate leaves room, computed
// in exact integer arithmetic.
func (c *WindowCounter) WaitTime(now int64) time.Duration { return c.WaitTimeCost(now, 1) }

// WaitTimeCost is WaitTime for a call of cost c: the counters hold costs,
// and the estimate plus c must fit the limit.
func (c *WindowCounter) WaitTimeCost(now, cost int64) time.Duration {
	c.roll(now)
	room := c.limit - cost - c.cur // the weighted previous count must not exceed room
	if room < 0 {
		return time.Duration(c.start + c.window - now)
	}
	if c.prev == 0 {
		return 0
	}
	// Need prev*(W-e) <= room*W, that is W-e <= floor(room*W/prev).
	hi, lo := bits.Mul64(uint64(room), uint64(c.window))
	var keep int64
	if hi >= uint64(c.prev) {
		keep = c.window
	} else {
		q, _ := bits.Div64(hi, lo, uint64(c.prev))
		keep = min(int64(q), c.window)
	}
	needElapsed := c.window - keep
	elapsed := now - c.start
	if elapsed >= needElapsed {
		return 0
	}
	return time.Duration(needElapsed - elapsed)
}

// Record counts a call at now.
func (c *WindowCounter) Record(now int64) { c.RecordCost(now, 1) }

// RecordCost counts a call's cost at now.
func (c *WindowCounter) RecordCost(now, cost int64) {
	c.roll(now)
	c.cur += cost
}
