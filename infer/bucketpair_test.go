package infer

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rlcheck/rlcheck/infer/infertest"
)

// TestSettledPointFits: inside regions bounded from outside (under
// "refused calls count", some refusals left to other rules), every
// bucket settled returns fits as the oracle's plain replay judges it, and
// so does every point pairBuckets takes from a region; over the seeds,
// settled finds some where neither corner of the extent fits.
func TestSettledPointFits(t *testing.T) {
	var outer, settled, missed int
	defer func() {
		t.Logf("%d regions bounded from outside with no corner that fits: a bucket settled in %d, none in %d", outer, settled, missed)
		assert.Positive(t, settled, "settled finds buckets the corners miss")
	}()
	rates, bursts := regionGrid()
	for seed := range uint64(infertest.Seeds(300, 1500)) {
		s, g, target := targetedRegion(seed)
		// The oracle's replay multiplies the rate by a gap in int64: rates
		// near maxRegionRate (an open rate) are past it.
		if q, b, ok := g.point(); ok && q < 1<<40 {
			assert.True(t, oracleFits(s, int64(q), int64(b), RefusedCount, target.has), "seed %d: the point %d a day burst %d", seed, q, b)
		}
		rg := g.region()
		if !g.drain || rg.Empty || rg.BurstMax > 1<<20 || g.fits(uint64(rg.RateMin), int64(rg.BurstMax)) || g.fits(uint64(rg.RateMax), int64(rg.BurstMin)) {
			continue
		}
		outer++
		q, b, ok := g.settled(uint64(rg.RateMin), int64(rg.BurstMax))
		if ok {
			settled++
			assert.True(t, oracleFits(s, int64(q), int64(b), RefusedCount, target.has), "seed %d: settled %d a day burst %d", seed, q, b)
			continue
		}
		for _, b := range bursts {
			for _, q := range rates {
				if oracleFits(s, q, b, RefusedCount, target.has) {
					missed++
					t.Logf("seed %d: %d a day burst %d fits, settled found none", seed, q, b)
					goto next
				}
			}
		}
	next:
	}
}

// targetedRegion is seed's small log under "refused calls count", with
// about two refusals in three as the targets, and its region fit.
func targetedRegion(seed uint64) ([]Send, *regionFit, bitset) {
	rng := rand.New(rand.NewPCG(seed, 47))
	s := regionLog(rng, RefusedCount, seed%3 == 1)
	g, target := targetedFit(rng, s)
	return s, g, target
}

// targetedFit is the region fit of log s under "refused calls count",
// with about two refusals in three (drawn from rng) as the targets.
func targetedFit(rng *rand.Rand, s []Send) (*regionFit, bitset) {
	d, u := regionSends(s)
	n := len(d.refIdx)
	target := newBitset(n)
	for r := range n {
		if rng.IntN(3) > 0 {
			target.add(r)
		}
	}
	return newRegionFit(d, u, RefusedCount, target), target
}

// TestClimbedPointFits: inside regions bounded from outside whose corners
// do not fit, every bucket climbBursts returns fits as the oracle's plain
// replay judges it, and over the seeds it finds some.
func TestClimbedPointFits(t *testing.T) {
	var outer, climbed int
	defer func() {
		t.Logf("%d regions bounded from outside with no corner that fits: a bucket climbed to in %d", outer, climbed)
		assert.Positive(t, climbed, "climbBursts finds buckets")
	}()
	for seed := range uint64(infertest.Seeds(300, 1500)) {
		s, g, target := targetedRegion(seed)
		rg := g.region()
		if !g.drain || rg.Empty || rg.BurstMax > 1<<20 || g.fits(uint64(rg.RateMin), int64(rg.BurstMax)) || g.fits(uint64(rg.RateMax), int64(rg.BurstMin)) {
			continue
		}
		outer++
		if q, b, ok := g.climbBursts(rg); ok {
			climbed++
			assert.True(t, oracleFits(s, int64(q), int64(b), RefusedCount, target.has), "seed %d: climbed to %d a day burst %d", seed, q, b)
		}
	}
}
