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
	var points, narrowed, outer int
	defer func() {
		t.Logf("%d grid points fit; %d extents bounded from outside, %d of them narrowed", points, outer, narrowed)
		assert.Greater(t, points, 200, "the logs exercise the narrowing")
		assert.Positive(t, narrowed, "some extents are narrowed")
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
		nr := g.narrow(rg, 1<<40)
		if nr != rg {
			narrowed++
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
					"seed %d: %d a day burst %d fits, outside %+v (narrowed from %+v)", seed, q, b, nr, rg)
			}
		}
	}
}
