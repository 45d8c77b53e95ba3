package infer

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rlcheck/rlcheck/infer/infertest"
)

// TestNarrowHoldsEveryFittingBucket: over small logs of two hidden
// buckets and of a bucket beside a window, under "refused calls count",
// with some refusals left to other rules (so that they may drain the
// bucket), every (rate, burst) of a fine grid that the oracle's replay
// fits lies inside the extent narrowed slab by slab, which lies inside
// the outer extent it narrows.
func TestNarrowHoldsEveryFittingBucket(t *testing.T) {
	rates, bursts := regionGrid()
	var points, narrowed, outer, cut int
	defer func() {
		t.Logf("%d grid points fit; %d extents bounded from outside, %d of them narrowed, %d less with the budget scant", points, outer, narrowed, cut)
		assert.Greater(t, points, 200, "the logs exercise the narrowing")
		assert.Positive(t, narrowed, "some extents are narrowed")
		assert.Positive(t, cut, "some searches run out of budget")
	}()
	for seed := range uint64(infertest.Seeds(40, 500)) {
		rng := rand.New(rand.NewPCG(seed, 67))
		var s []Send
		if seed%2 == 0 {
			s = twoBucketLog(rng, seed%4 == 2)
		} else {
			s = regionLog(rng, RefusedCount, seed%3 == 1)
		}
		g, target := targetedFit(rng, s)
		rg := g.region()
		if rg.Empty || rg.Exact {
			continue
		}
		outer++
		// The budget ample, and scant enough to run out mid-search.
		var ample region
		for _, budget := range []int64{1 << 40, narrowPasses * int64(g.d.n())} {
			nr := g.narrow(rg, budget)
			switch {
			case budget == 1<<40:
				ample = nr
				narrowed += map[bool]int{true: 1}[nr != rg]
			case nr != ample:
				cut++
			}
			assert.True(t, rg.RateMin <= nr.RateMin && nr.RateMax <= rg.RateMax && rg.BurstMin <= nr.BurstMin && nr.BurstMax <= rg.BurstMax,
				"seed %d: %+v is not inside %+v", seed, nr, rg)
			for _, b := range bursts {
				for _, q := range rates {
					if !oracleFits(s, q, b, RefusedCount, target.has) {
						continue
					}
					points++
					assert.True(t, nr.BurstMin <= int(b) && int(b) <= nr.BurstMax && nr.RateMin <= q && q <= nr.RateMax,
						"seed %d: %d a day burst %d fits, outside %+v (narrowed from %+v, budget %d)", seed, q, b, nr, rg, budget)
				}
			}
		}
	}
}
