package infer

import (
	"math"
	"math/bits"
)

// The least rate of a burst within a spread. A bucket of q units a day
// and burst b keeps the accepted calls within spread sp (spreadLeast at
// q is at most b) exactly when every call costs at most b and, for every
// accepted call j and each i ≤ j before it, the work W of the calls i..j
// less b is given out in their time plus the spread:
//
//	(W − b)·day ≤ q·(s_j − s_i + sp)
//
// (spreadLeastPast's deficit at j is the most, over i, of W·day less
// q·(s_j − s_i)). The least such q is the most, over the pairs, of their
// ratio rounded up. Any pair's ratio bounds it from below, so the pairs
// met before (at other bursts too) start the search there; then
// Dinkelbach's iteration: at a rate that does not fit, the pair that
// misses by the most (the call of the largest deficit, from where its
// deficit last started) needs a rate of at least its ratio, more than
// the rate tried and at most the least one. A walk at a rate that fits
// ends it.

// spreadPair is the work of a run of accepted calls and its time plus
// the spread: a bucket's burst and rate must give out that work then.
type spreadPair struct{ work, span int64 }

// need is the least rate the pair allows burst b, rounded up.
func (p spreadPair) need(b int64) uint64 {
	if p.work <= b {
		return 0
	}
	return ratioUp(mul64(uint64(p.work-b), day), uint64(p.span))
}

// maxSpreadPairs bounds the pairs a search starts from.
const maxSpreadPairs = 8

// spreadRate is what bisectRate(lo, hi, …) returns for the predicate
// "spreadLeast(u, q, sp) ≤ b": the least rate in (lo, hi) that keeps the
// accepted calls within burst b, or hi where none does; with the least
// burst at it when walked; for lo ≤ hi (the bisection wraps round
// otherwise). It adds the pairs it meets to pairs.
func (d *sends) spreadRate(u int, lo, hi uint64, sp, b int64, pairs *[]spreadPair) (q uint64, least int64, walked bool) {
	if hi <= lo+1 {
		return hi, 0, false
	}
	q = lo + 1
	for _, p := range *pairs {
		q = max(q, p.need(b))
	}
	for q < hi {
		least, p, fits := d.spreadExcess(u, q, sp, b)
		if fits {
			return q, least, true
		}
		if p.span < 0 {
			break // a call costs more than b: no rate keeps them
		}
		if len(*pairs) == maxSpreadPairs {
			*pairs = (*pairs)[1:]
		}
		*pairs = append(*pairs, p)
		q = max(p.need(b), q+1) // it does not fit: the least rate is past it
	}
	return hi, 0, false
}

// spreadExcess walks the accepted calls at q: it returns whether burst b
// keeps them within spread sp, with spreadLeast(u, q, sp) if so and
// otherwise the pair that misses by the most (span −1 where a call costs
// more than b).
func (d *sends) spreadExcess(u int, q uint64, sp, b int64) (least int64, miss spreadPair, fits bool) {
	var acc, top u128 // the deficit, and its most
	var w int64       // the work since the deficit last started
	var start, prev int64
	maxC := int64(1)
	at, cost := d.accepted(u)
	for j, t := range at {
		if j == 0 || t > prev {
			if fill := mul64(q, uint64(t-prev)); j == 0 || !fill.less(acc) {
				acc, w, start = u128{}, 0, t
			} else {
				acc = acc.sub(fill)
			}
		}
		prev = t
		c := int64(1)
		if cost != nil {
			c = cost[j]
		}
		maxC = max(maxC, c)
		acc, w = acc.add(mul64(uint64(c), day)), w+c
		if top.less(acc) {
			top, miss = acc, spreadPair{work: w, span: t - start + sp}
		}
	}
	if maxC > b {
		return 0, spreadPair{span: -1}, false
	}
	grace := mul64(q, uint64(sp))
	if !grace.add(mul64(uint64(b), day)).less(top) {
		least = maxC
		if grace.less(top) {
			least = max(least, top.sub(grace).ceilDay())
		}
		return least, spreadPair{}, true
	}
	return 0, miss, false
}

// ratioUp is n/den rounded up, math.MaxUint64 where that does not fit.
func ratioUp(n u128, den uint64) uint64 {
	if den == 0 || n.hi >= den {
		return math.MaxUint64
	}
	r, rem := bits.Div64(n.hi, n.lo, den)
	if rem != 0 {
		if r == math.MaxUint64 {
			return r
		}
		r++
	}
	return r
}
