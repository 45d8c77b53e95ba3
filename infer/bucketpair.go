package infer

import (
	"math"
	"slices"
)

// pairBuckets adds, per reading, beside each bucket the sampled search
// picks (those that explain the most of what the others leave), the
// bucket of each unit that explains every refusal it leaves, where the
// exact region finds one: the sampled search can miss the second of two
// buckets, whose rates and bursts it samples. It spends at most about
// budget steps, and returns those it spent.
func (res *Result) pairBuckets(d *sends, budget int64) (spent int64) {
	n := len(d.refIdx)
	picks := allPicks(n, res.Buckets)
	spent = res.pairWith(d, picks, budget)
	if !res.needsThird(d, RefusedCount) && !res.needsThird(d, RefusedFree) {
		return spent
	}
	// The sampled search can pick a bucket near a hidden one under one
	// reading only: its point, taken under the other, is tried there too,
	// within what the budget has left.
	twins := make([]Candidate, 0, len(picks))
	for _, p := range picks {
		twins = append(twins, d.bucketPoint(slices.Index(d.units, p.Unit), uint64(p.PerDay), p.AtLeast, otherReading(p.Reading)))
	}
	return spent + res.pairWith(d, twins, budget-spent)
}

// pairBudget is the steps an exact or pairing search of regions may spend
// on d: 40 passes over a long log, maxRegionSteps over a short one.
func pairBudget(d *sends) int64 { return max(maxRegionSteps, 40*int64(d.n())) }

// otherReading is the reading that is not rd.
func otherReading(rd Reading) Reading {
	if rd == RefusedFree {
		return RefusedCount
	}
	return RefusedFree
}

// pairWith adds beside each bucket of picks, under its reading, the
// bucket of each unit that explains every refusal it leaves, where the
// exact region finds one; a bucket paired before is not paired again.
// Beside a bucket the exact search found next to a window, this is the
// second bucket that fits in the window's place: another shape, listed
// with the window (Rule.AlsoFits).
func (res *Result) pairWith(d *sends, picks []Candidate, budget int64) (spent int64) {
	n := len(d.refIdx)
	if res.paired == nil {
		res.paired = map[pairKey]bool{}
	}
	for _, p := range picks {
		target := complement(n, p.set)
		k := pairKey{p.Unit, p.PerDay, p.AtLeast, p.Reading}
		if target.count() == 0 || res.paired[k] {
			continue
		}
		res.paired[k] = true
		found := false
		for u := -1; u < len(d.units) && spent <= budget; u++ {
			g := newRegionFit(d, u, p.Reading, target)
			if q, b, ok := g.point(); ok {
				res.Buckets = append(res.Buckets, d.bucketPoint(u, q, b, p.Reading))
				found = true
			}
			spent += g.steps
		}
		if !found && spent <= budget {
			spent += res.pairNear(d, p)
		}
	}
	res.BucketSteps += spent
	return spent
}

// The rates pairNear takes p's refusals at: nearRates of them, up to
// nearSpan above p's own.
const (
	nearRates = 10
	nearSpan  = 0.001
)

// pairNear is pairWith's second try beside p, where no bucket explains
// every refusal p leaves, and returns its steps. p is a point the sampled
// search picked, its rate the least its burst allows, a little off the
// hidden bucket's: under "refused calls count" such a bucket can leave
// a refusal the hidden one explains (a refusal it had no room for takes
// nothing, and leaves room for a later one). The refusals p explains at
// rates up to nearSpan above its own, and at one burst more, are taken as
// explained (the second bucket need not explain them); beside each
// second bucket found, p's own unit's bucket is sought again, and both
// are added.
func (res *Result) pairNear(d *sends, p Candidate) (steps int64) {
	n := len(d.refIdx)
	pu := slices.Index(d.units, p.Unit)
	near, steps := d.nearSet(p)
	target := complement(n, near)
	for u := -1; u < len(d.units) && target.count() > 0; u++ {
		g := newRegionFit(d, u, p.Reading, target)
		q, b, ok := g.point()
		steps += g.steps
		if !ok {
			continue
		}
		h := newRegionFit(d, pu, p.Reading, complement(n, d.explainedAt(u, q, int64(b), p.Reading)))
		qa, ba, ok := h.point()
		steps += h.steps + int64(d.n())
		if ok {
			res.Buckets = append(res.Buckets, d.bucketPoint(u, q, b, p.Reading), d.bucketPoint(pu, qa, ba, p.Reading))
		}
	}
	return steps
}

// nearSet is the refusals bucket p explains at nearRates rates from its
// own up to nearSpan above it, at its burst and one more, and the steps
// it took: where p's rate is a little below a hidden bucket's, what the
// hidden one explains.
func (d *sends) nearSet(p Candidate) (bitset, int64) {
	pu := slices.Index(d.units, p.Unit)
	sets := []bitset{p.set}
	for i := range nearRates + 1 {
		q := uint64(p.PerDay) + uint64(float64(p.PerDay)*nearSpan*float64(i)/nearRates)
		for _, b := range []int64{int64(p.AtLeast), int64(p.AtLeast) + 1} {
			sets = append(sets, d.explainedAt(pu, q, b, p.Reading))
		}
	}
	return unionSets(len(d.refIdx), sets), int64(len(sets)-1) * int64(d.n())
}

// pairKey names a bucket pairWith paired: its unit, rate, burst and
// reading.
type pairKey struct {
	unit    string
	perDay  int64
	burst   int
	reading Reading
}

// point is a bucket that fits g, where its region's extent has one at
// a corner (each judged exactly): the least rate at the most burst, or
// the most rate at the least.
func (g *regionFit) point() (q uint64, b int, ok bool) {
	rg := g.region()
	switch {
	case rg.Empty || rg.BurstMax == math.MaxInt:
		return 0, 0, false
	case rg.Exact || g.fits(uint64(rg.RateMin), int64(rg.BurstMax)):
		return uint64(rg.RateMin), rg.BurstMax, true
	case g.fits(uint64(rg.RateMax), int64(rg.BurstMin)):
		return uint64(rg.RateMax), rg.BurstMin, true
	case !g.drain:
		return 0, 0, false
	}
	if q, b, ok := g.settled(uint64(rg.RateMin), int64(rg.BurstMax)); ok {
		return q, b, true
	}
	if q, b, ok := g.settled(uint64(rg.RateMax), int64(rg.BurstMin)); ok {
		return q, b, true
	}
	if q, b, ok := g.climbBursts(rg); ok {
		return q, b, true
	}
	return g.seekPoint(rg, maxClimbSteps)
}

// maxClimbs bounds the rounds of a climb, and maxClimbSteps the steps
// climbBursts spends on an extent (passes of a call each).
const (
	maxClimbs     = 16
	maxClimbSteps = maxRegionSteps / 8
)

// climbBursts looks for a bucket that fits g in an extent bounded from
// outside, a burst at a time, each climbing from the extent's least rate,
// within maxClimbSteps: the corners and the points settled from them can
// miss a region that is a sliver, a rate or two wide at one burst. The
// bursts are taken spread over the extent (spreadBursts), so that a
// budget spent before the last leaves no end of it untried.
func (g *regionFit) climbBursts(rg region) (uint64, int, bool) {
	from := g.steps
	found := false
	var q uint64
	var b int64
	spreadBursts(int64(rg.BurstMin), int64(rg.BurstMax), func(burst int64) bool {
		if g.steps-from > maxClimbSteps {
			return false
		}
		q, found = g.climb(uint64(rg.RateMin), burst)
		b = burst
		return !found
	})
	if !found {
		return 0, 0, false
	}
	return q, int(b), true
}

// spreadBursts visits each burst from lo to hi once, the most first, then
// halving strides: hi, hi-s, hi-2s, ... for the largest power of two s
// below the extent's width, then the bursts midway between those, and so
// on down to every burst. It stops where visit returns false.
func spreadBursts(lo, hi int64, visit func(b int64) bool) {
	if hi < lo {
		return
	}
	s := int64(1)
	for s*2 <= hi-lo {
		s *= 2
	}
	for b := hi; b >= lo; b -= s {
		if !visit(b) {
			return
		}
	}
	for ; s > 1; s /= 2 {
		for b := hi - s/2; b >= lo; b -= s {
			if !visit(b) {
				return
			}
		}
	}
}

// climb looks for a rate from q up at which burst b fits g: the
// refusals outside the targets that drain a bucket at q fix the log's
// admissions, and the least rate from q at which every accepted call has
// room with those drains (leastRoom) is the next q. Where every accepted
// call has room but a target has too, more drains before it may take
// that room: the next q is the least at which a refusal before it that
// does not drain may (drainRate). It stops at a rate that fits, one past
// which nothing is found, or after maxClimbs rounds.
func (g *regionFit) climb(q uint64, b int64) (uint64, bool) {
	for range maxClimbs {
		drains := g.drainsAt(q, b)
		next, steps := g.d.leastRoom(g.u, b, q, drains)
		g.steps += steps
		if next == q {
			if g.fits(q, b) {
				return q, true
			}
			next = g.drainRate(q, b)
		}
		if next <= q {
			return 0, false
		}
		q = next
	}
	return 0, false
}

// drainRate is, for a bucket of q units a day and burst b that has room
// for the first target it meets, the least rate above q at which a
// refusal before that target, outside the targets, that has no room at q
// may have room: where the units taken since the bucket was last full
// come within b. It is 0 where there is none.
func (g *regionFit) drainRate(q uint64, b int64) uint64 {
	d := g.d
	room := mul64(uint64(b), day)
	var def u128
	var taken uint64
	start, prev, r := 0, int64(0), 0
	least := uint64(0)
	for i, t := range d.at {
		if i > 0 && t > prev {
			def = refill(def, q, t-prev)
		}
		prev = t
		if def == (u128{}) {
			start, taken = i, 0
		}
		c := uint64(d.costOf(g.u, i))
		need := def.add(mul64(c, day))
		switch {
		case !d.refused[i]:
			def, taken = need, taken+c
			continue
		case g.target.has(r):
			if !room.less(need) {
				g.steps += int64(i + 1)
				return least
			}
		case !room.less(need):
			def, taken = need, taken+c
		default:
			if taken+c <= uint64(b) {
				break
			}
			if next, ok := lineRate(taken+c-uint64(b), uint64(t-d.at[start])); ok && next > q && (least == 0 || next < least) {
				least = next
			}
		}
		r++
	}
	g.steps += int64(len(d.at))
	return 0
}

// maxSettles bounds the rounds of settled.
const maxSettles = 4

// settled looks inside an extent bounded from outside (under "refused
// calls count" beside other rules) for a bucket that fits, from the
// point (q, b): the refusals that drain a bucket there fix the log's
// admissions, under which the region is found exactly; its corners are
// judged, and from one that does not fit the drains are taken again.
func (g *regionFit) settled(q uint64, b int64) (uint64, int, bool) {
	for range maxSettles {
		drains := g.drainsAt(q, b)
		h := &regionFit{d: g.d, u: g.u, rd: g.rd, target: g.target, drain: true, certain: drains, possible: slices.Clone(drains)}
		rg := h.extent()
		g.steps += h.steps
		if rg.Empty || rg.BurstMax == math.MaxInt {
			return 0, 0, false
		}
		for _, c := range [][2]int64{{rg.RateMin, int64(rg.BurstMax)}, {rg.RateMax, int64(rg.BurstMin)}} {
			if g.fits(uint64(c[0]), c[1]) {
				return uint64(c[0]), int(c[1]), true
			}
		}
		q, b = uint64(rg.RateMin), int64(rg.BurstMax)
	}
	return 0, 0, false
}
