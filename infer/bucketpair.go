package infer

import (
	"math"
	"slices"
)

// pairBuckets adds, per reading, beside each bucket the sampled search
// picks (those that explain the most of what the others leave), the
// bucket of each unit that explains every refusal it leaves, where the
// exact region finds one: the sampled search can miss the second of two
// buckets, whose rates and bursts it samples.
func (res *Result) pairBuckets(d *sends) {
	n := len(d.refIdx)
	var none [2]bitset
	for rd := range none {
		none[rd] = newBitset(n)
	}
	picks, _ := greedyPicks(n, res.Buckets, none)
	res.pairWith(d, picks)
}

// pairWith adds beside each bucket of picks, under its reading, the
// bucket of each unit that explains every refusal it leaves, where the
// exact region finds one; a bucket paired before is not paired again.
// Beside a bucket the exact search found next to a window, this is the
// second bucket that fits in the window's place: another shape, listed
// with the window (Rule.AlsoFits).
func (res *Result) pairWith(d *sends, picks []Candidate) {
	n := len(d.refIdx)
	budget := max(maxRegionSteps, 40*int64(d.n()))
	var spent int64
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
		for u := -1; u < len(d.units) && spent <= budget; u++ {
			g := newRegionFit(d, u, p.Reading, target)
			if q, b, ok := g.point(); ok {
				res.Buckets = append(res.Buckets, d.bucketPoint(u, q, b, p.Reading))
			}
			spent += g.steps
		}
	}
	res.BucketSteps += spent
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
	return g.settled(uint64(rg.RateMax), int64(rg.BurstMin))
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
