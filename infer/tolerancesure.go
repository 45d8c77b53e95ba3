package infer

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
	nd := newNeed(q, sp, from)
	var acc u128
	prev := int64(0)
	for i, t := range d.at {
		if d.refused[i] && sure[d.rankOf(i)] >= nd.least {
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
