package infer

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
)

// boxed is g's region narrowed, sliced and then narrowed box by box,
// with a budget no small log runs out of; and the region before the boxes.
func boxed(g *spreadFit) (rg, before region) {
	before, _ = g.sliced(g.narrowed(g.region()))
	return g.boxNarrow(before, maxRegionSteps), before
}

// TestBoxedHoldsEveryFit: under "refused calls count", on client's logs
// of a bucket beside another rule's refusals (5 to 7 calls within 50 ms,
// each logged at its arrival or the spread before it), where the boxes
// narrow the region, every bucket that some arrivals within the spread
// make fit (a brute force over a grid of arrivals, the other rule's
// refusals taking from it where it had room), on a grid of rates and
// bursts over the region before, lies inside the region narrowed.
func TestBoxedHoldsEveryFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 43))
	const ms = int64(time.Millisecond)
	sp, step := 2*ms, ms
	var checked, narrower int
	for range infertest.Seeds(200, 1500) {
		d, target, set, _, _ := bucketLog(rng, sp, 5, 50)
		if set.count() == 0 || set.count() == len(d.refIdx) {
			continue
		}
		rg, before := boxed(newSpreadFit(d, -1, sp, RefusedCount, set))
		if rg == before {
			continue
		}
		narrower++
		for _, q := range gridRates(before.RateMin, before.RateMax, 12) {
			for b := int64(before.BurstMin); b <= min(int64(before.BurstMax), int64(before.BurstMin)+6); b++ {
				if !someArrivalsFitDrained(d.at, d.refused, target, sp, step, q, b) {
					continue
				}
				checked++
				require.False(t, rg.Empty, "log %v, target %v: bucket %d/day burst %d fits, region empty", d.at, target, q, b)
				assert.True(t, rg.RateMin <= q && q <= rg.RateMax && int64(rg.BurstMin) <= b && b <= int64(rg.BurstMax),
					"log %v refused %v, target %v: bucket %d/day burst %d outside the region %+v (before %+v)", d.at, d.refused, target, q, b, rg, before)
			}
		}
	}
	t.Logf("%d regions narrower by boxes; %d fitting buckets checked", narrower, checked)
	assert.Positive(t, narrower, "no region narrowed by boxes")
	assert.Positive(t, checked, "the brute force found no fitting bucket")
}

// TestBoxedKeepsTheHiddenBucket: on client's logs of a bucket beside
// another rule's refusals (14 to 16 calls within 200 ms, each logged at
// its arrival or the spread before it), where the boxes narrow the
// region, the hidden bucket lies inside it, and no bucket it leaves out
// (on a grid of rates and bursts over the region before) fits any
// arrivals at the logged instants or the spread past them; and the
// boxes are no empty promise: some regions come out narrower.
func TestBoxedKeepsTheHiddenBucket(t *testing.T) {
	narrowerHoldsEveryFit(t, rand.New(rand.NewPCG(47, 53)), infertest.Seeds(150, 1500), "boxes", boxed)
}
