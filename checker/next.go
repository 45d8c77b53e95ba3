package checker

import (
	"math"
	"math/bits"
)

// Never is what Next returns for a send no wait admits: its cost exceeds
// the rule's capacity (its limit, a bucket's burst).
const Never = int64(math.MaxInt64)

// Next returns the earliest instant, at or after now, at which a send of
// cost cost (1 for a call rule) would not break rule r, with the sends
// taken so far in place and no other arriving in between; Never when no
// instant would. now must not be before the last send. A server uses it
// for the exact wait it announces: a refused send counts in later
// windows, so asked right after taking it, Next waits for it too. Asked
// with the rule's capacity it is the instant the rule holds nothing of
// the sends so far (a bucket: full again).
func (c *Checker) Next(r int, now, cost int64) int64 {
	if c.runOf[r] >= 0 {
		u := &c.runs[c.runOf[r]]
		if cost > u.limit {
			return Never
		}
		// cost sends fit once the cost-th newest of the last limit has left.
		n, _ := c.InWindow(r, now)
		if n+cost <= u.limit {
			return now
		}
		return add(c.hist.get(c.sends-1-(u.limit-cost)).At, u.w)
	}
	for k := range c.slow {
		if c.slow[k].idx == r {
			return c.slow[k].j.next(now, cost)
		}
	}
	return now
}

// Load returns the units (sends, for a call rule) rule r holds at now of
// the sends taken so far: the sum in its window ending at now, or what a
// bucket lacks of its burst, rounded up to a whole unit.
func (c *Checker) Load(r int, now int64) int64 {
	if c.runOf[r] >= 0 {
		n, _ := c.InWindow(r, now)
		return n
	}
	for k := range c.slow {
		if c.slow[k].idx != r {
			continue
		}
		if b, ok := c.slow[k].j.(*bucketJudge); ok {
			return b.lack(now)
		}
		return c.slow[k].j.load(now)
	}
	return 0
}

// add returns at+w, at most Never.
func add(at int64, w uint64) int64 {
	if w > uint64(Never) || at > Never-int64(w) {
		return Never
	}
	return at + int64(w)
}

// next walks the window's sends from the oldest until the load left, with
// cost added, fits the limit: that send's leaving is the earliest instant.
func (j *slidingJudge) next(now, cost int64) int64 {
	if cost > j.limit {
		return Never
	}
	sum, k := j.sum, 0
	for ; k < j.n && uint64(now-j.at(k).s.At) >= j.w; k++ {
		sum -= j.at(k).c
	}
	if !exceeds(cost, sum, j.limit) {
		return now
	}
	if cost == j.limit { // the window must empty: the newest send of a cost leaves last
		for e := j.n - 1; ; e-- {
			if j.at(e).c > 0 {
				return add(j.at(e).s.At, j.w)
			}
		}
	}
	for ; k < j.n; k++ {
		sum -= j.at(k).c
		if !exceeds(cost, sum, j.limit) {
			return add(j.at(k).s.At, j.w)
		}
	}
	return now // not reached: an empty window holds cost <= limit
}

// next is now when the send fits the current window, else its end.
func (j *fixedJudge) next(now, cost int64) int64 {
	if cost > j.limit {
		return Never
	}
	if !j.in(now) || !exceeds(cost, j.sum, j.limit) {
		return now
	}
	return j.span.To
}

// next is now when no window is open or the send fits it, else its end.
func (j *firstCallJudge) next(now, cost int64) int64 {
	if cost > j.limit {
		return Never
	}
	if j.idle(now) || !exceeds(cost, j.sum, j.limit) {
		return now
	}
	return j.span.To
}

// next is when the level, refilling Limit units per Window from what the
// last send left, first holds cost.
func (j *bucketJudge) next(now, cost int64) int64 {
	need := mul64(uint64(cost), j.w)
	if j.full.less(need) {
		return Never
	}
	if !j.has {
		return now
	}
	l := j.refill(now)
	if !l.less(need) {
		return now
	}
	d := need.sub(l) // level*W units, regained at rate per ns
	if d.hi >= j.rate {
		return Never // past the int64 range
	}
	q, rem := bits.Div64(d.hi, d.lo, j.rate)
	if rem > 0 {
		q++
	}
	return add(now, q)
}

// lack is what the bucket lacks of its burst at now, in whole units
// rounded up.
func (j *bucketJudge) lack(now int64) int64 {
	if !j.has {
		return 0
	}
	d := j.full.sub(j.refill(now))
	q, rem := bits.Div64(d.hi, d.lo, j.w) // d < Burst*W, so d.hi < W
	if rem > 0 {
		q++
	}
	return int64(q)
}
