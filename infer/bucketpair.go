package infer

import "math"

// pairBuckets adds, per reading, beside each bucket the sampled search
// picks (those that explain the most of what the others leave), the
// bucket of each unit that explains every refusal it leaves, where the
// exact region finds one: the sampled search can miss the second of two
// buckets, whose rates and bursts it samples.
func (res *Result) pairBuckets(d *sends) {
	n := len(d.refIdx)
	budget := max(maxRegionSteps, 40*int64(d.n()))
	var spent int64
	var none [2]bitset
	for rd := range none {
		none[rd] = newBitset(n)
	}
	picks, _ := greedyPicks(n, res.Buckets, none)
	for _, p := range picks {
		target := complement(n, p.set)
		if target.count() == 0 {
			continue
		}
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
	}
	return 0, 0, false
}
