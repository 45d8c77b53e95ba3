package infer

import (
	"math"
	"math/bits"

	"github.com/rlcheck/rlcheck/rule"
)

// bucketNeeds visits every call i with the least burst bucket r (at its
// declared rate, full at the first call) needs to admit it: the bucket's
// deficit below full plus the call's cost in unit u (1 a call, u < 0).
// The deficit is kept times r's window, in ns, so that a refill of Limit
// units a window is exact. An accepted call drains the bucket; under
// RefusedCount so does a refused call that a burst of b admits.
func (d *sends) bucketNeeds(u int, r rule.Rule, rd Reading, b int64, visit func(i int, need int64)) {
	w := uint64(r.Window)
	room := mul64(uint64(max(b, 0)), w)
	var def u128
	prev := int64(0)
	for i, t := range d.at {
		if i > 0 && t > prev {
			def = refill(def, uint64(r.Limit), t-prev)
		}
		prev = t
		need := def.add(mul64(uint64(d.costOf(u, i)), w))
		visit(i, need.ceilDiv(w))
		if !d.refused[i] || rd == RefusedCount && !room.less(need) {
			def = need
		}
	}
}

// ceilDiv is a/w rounded up, at most MaxInt64.
func (a u128) ceilDiv(w uint64) int64 {
	if a.hi >= w {
		return math.MaxInt64
	}
	q, rem := bits.Div64(a.hi, a.lo, w)
	if q >= math.MaxInt64 {
		return math.MaxInt64
	}
	if rem != 0 {
		q++
	}
	return int64(q)
}
