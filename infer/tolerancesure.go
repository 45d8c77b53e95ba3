package infer

import "math"

// The refusals that certainly took. Under "refused calls count" a refusal
// r that another rule explains (a drain) took from the bucket when the
// bucket had room for it when it arrived. Within spread sp the room at
// a_r is not known, but the most the bucket can have given out by then
// is: what the calls that may take (the accepted ones and the drains)
// logged before s_r−sp leave on the logged instants, refilled to s_r−sp,
// plus every such call logged in [s_r−sp, s_r+sp] but r (spreadUpper's
// bound). At q units a day and burst b, r therefore certainly had room,
// and took its cost c_r, under every arrival within the spread when
//
//	found_r(q) + (other_r + c_r)·day ≤ b·day,
//
// that is when b is past spreadWide's bound for r at q (taking the drains
// as spreadUpper does). found_r falls as q rises, so the bound at the
// least rate a bucket can fit at holds at every rate it fits at.
//
// A refusal certain to take is an accepted call for the certain need: a
// run of calls that certainly took, logged from s_i to s_j, arrived
// within [s_i, s_j+sp]. The calls counted depend on b, and more are
// counted as b grows, so the least burst that keeps them is the least b
// with need(b) ≤ b: from the accepted calls' least, each walk counts the
// drains past the least so far, until a walk raises it no more. Every
// burst below the result misses its own need, so the bound is sound; with
// the sets fixed the need falls as q rises, and so does the least burst.

// spreadLeastSure is spreadLeastPast, counting besides the accepted
// calls the refusals certain to take (by rank, those whose sure bound is
// below the burst; math.MaxInt64: never) at the least burst that keeps
// them: past limit it stops, returning a value past limit.
func (d *sends) spreadLeastSure(u int, q uint64, sp, limit int64, sure []int64) int64 {
	least := d.spreadLeastPast(u, q, sp, limit)
	for least <= limit {
		next := d.sureWalk(u, q, sp, limit, sure, least)
		if next == least {
			break
		}
		least = next
	}
	return least
}

// sureWalk is one walk of spreadLeastSure from the least burst from: the
// calls taken are the accepted ones and the refusals whose sure bound is
// below the least so far.
func (d *sends) sureWalk(u int, q uint64, sp, limit int64, sure []int64, from int64) int64 {
	return d.needWalk(u, q, sp, from, limit, func(r int, least int64) bool { return sure[r] < least })
}

// needWalk is the least burst, from from up, that the calls certain to
// take need from a bucket of unit u at q units a day within spread sp:
// the accepted ones, and the refusals (by rank) takes says take at the
// least burst so far. Past limit it stops, returning a value past it.
func (d *sends) needWalk(u int, q uint64, sp, from, limit int64, takes func(r int, least int64) bool) int64 {
	nd := newNeed(q, sp, from)
	var acc u128
	prev := int64(0)
	for i, t := range d.at {
		if d.refused[i] && !takes(d.rankOf(i), nd.least) {
			continue
		}
		if t > prev {
			acc = refill(acc, q, t-prev)
		}
		prev = t
		c := d.costOf(u, i)
		acc = acc.add(mul64(uint64(c), day))
		if nd.past(acc, c) && nd.raise(acc, c) > limit {
			return nd.least
		}
	}
	return nd.least
}

// sureAt makes g's sure bounds at q, the least rate a bucket fits at:
// each drain's spreadWide bound, and math.MaxInt64 for the targets.
func (g *spreadFit) sureAt(q uint64) {
	d := g.d
	sure := make([]int64, len(d.refIdx))
	d.spreadWide(g.u, q, g.sp, g.drain, sure)
	for r := range sure {
		if g.target.has(r) {
			sure[r] = 1<<63 - 1
		}
	}
	g.sure, g.haveLeast = sure, false
}

// maxSureRounds bounds the times narrowed finds the region again, from
// the least rate of the last: each round's bounds are those at it.
const maxSureRounds = 4

// narrowed is rg, g's region, its burst then bounded from below by the
// drains certain to take from the bucket (see above) and its extent found
// again within the last, the sure bounds made at its least rate, until
// that rate stays. It returns the rate whose sure bounds g keeps, that
// the region was found with (0: none, the region is rg: without drains,
// or without a bucket that fits).
func (g *spreadFit) narrowed(rg region) (region, uint64) {
	if rg.Empty || g.drain == nil || g.drain.count() == 0 {
		return rg, 0
	}
	exact := rg.Exact
	base := uint64(rg.RateMin)
	for round := 1; ; round++ {
		g.sureAt(base)
		next := g.regionIn(base, uint64(rg.RateMax))
		if next.Empty {
			return next, base
		}
		if rg = next; uint64(rg.RateMin) == base || round == maxSureRounds {
			break
		}
		base = uint64(rg.RateMin)
	}
	rg.Exact = rg.Exact && exact
	return rg, base
}

// sureSlices is how many slices of its rates sliced finds a region again
// in, each slice's bounds made at its own least rate and its least rate
// found again as narrowed does. In one run of the ground truth, 8 slices
// made 1 seed more narrow from the client's log (calls, 84%), and 16
// slices 1 more (tokens, 82%).
const sureSlices = 16

// slicedWithin is the part of its least rate and burst within which a
// region's rates and bursts are kept unsliced: on the million delayed
// calls of BenchmarkInfer1MDelayedBucket, whose bucket's region spans
// 0.1% of its rate and one burst, slicing took 145 passes over the log
// beside the 229 of the whole bucket search, and narrowed nothing.
const slicedWithin = 0.01

// withinPart reports whether rg's rates and bursts each span at most
// part of their least.
func withinPart(rg region, part float64) bool {
	return float64(rg.RateMax-rg.RateMin) <= part*float64(rg.RateMin) &&
		float64(rg.BurstMax-rg.BurstMin) <= part*float64(rg.BurstMin)
}

// sliced is rg, a region narrowed (see narrowed), found again slice by
// slice of its rates: a drain's sure bound falls as the rate rises, so
// the bounds made at a slice's least rate hold at each of its rates and
// count more drains certain to take than those at the region's least.
// Every bucket that fits lies in the slice of its rate, so in the union
// of the slices' regions. It returns that union and the rate g's sure
// bounds are left at (its least); rg and base where no slice holds one.
func (g *spreadFit) sliced(rg region, base uint64) (region, uint64) {
	if rg.Empty || base == 0 || rg.RateOpen || rg.RateMax <= rg.RateMin || withinPart(rg, slicedWithin) {
		return rg, base
	}
	if next, ok := g.slicedOnce(rg); ok {
		next.Exact = next.Exact && rg.Exact
		rg, base = next, uint64(next.RateMin)
	}
	g.sureAt(base)
	return rg, base
}

// slicedOnce is sliced's union of the regions of rg's rate slices, and
// false where none holds one.
func (g *spreadFit) slicedOnce(rg region) (region, bool) {
	var out region
	out.Empty = true
	for _, s := range rateSlices(uint64(rg.RateMin), uint64(rg.RateMax), sureSlices) {
		next := g.sliceRegion(s[0], s[1])
		if next.Empty {
			continue
		}
		if out.Empty {
			out = next
			continue
		}
		out = region{RateMin: min(out.RateMin, next.RateMin), RateMax: max(out.RateMax, next.RateMax),
			BurstMin: min(out.BurstMin, next.BurstMin), BurstMax: max(out.BurstMax, next.BurstMax), Exact: out.Exact && next.Exact}
	}
	return out, !out.Empty
}

// rateSlices splits the rates from lo to hi in n slices a like ratio
// apart, each from its least rate to its most, together every rate.
func rateSlices(lo, hi uint64, n int) [][2]uint64 {
	var out [][2]uint64
	ratio := math.Pow(float64(hi)/float64(lo), 1/float64(n))
	from := lo
	for k := 1; k <= n && from <= hi; k++ {
		to := uint64(float64(lo) * math.Pow(ratio, float64(k)))
		if k == n || to > hi {
			to = hi
		}
		if to < from {
			continue
		}
		out = append(out, [2]uint64{from, to})
		from = to + 1
	}
	return out
}

// sliceRegion is the region of the rates from lo to hi, found with the
// sure bounds made at lo, then again from its least rate with those made
// there (as narrowed does) until that rate stays.
func (g *spreadFit) sliceRegion(lo, hi uint64) region {
	base := lo
	var rg region
	for round := 1; ; round++ {
		g.sureAt(base)
		if rg = g.regionIn(base, hi); rg.Empty || uint64(rg.RateMin) == base || round == maxSureRounds {
			return rg
		}
		base = uint64(rg.RateMin)
	}
}
