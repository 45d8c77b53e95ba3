package infer

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// arrivalsFitTarget replays calls arriving at the given instants (ties
// in log order) through a bucket of q units a day and burst b, in exact
// rationals, and reports whether it admits every accepted call and
// refuses every refused one of target (by rank); the other refused calls
// are another rule's: the bucket is not asked about them, and no refused
// call takes from it.
func arrivalsFitTarget(arrive []int64, refused []bool, target []bool, q, b int64) bool {
	order, rank := arrivalOrder(arrive, refused)
	dayNs := big.NewRat(int64(24*time.Hour), 1)
	burst := big.NewRat(b, 1)
	tokens := new(big.Rat).Set(burst)
	var prev int64
	for k, i := range order {
		if k > 0 {
			refill := new(big.Rat).Quo(big.NewRat(q*(arrive[i]-prev), 1), dayNs)
			if tokens.Add(tokens, refill); tokens.Cmp(burst) > 0 {
				tokens.Set(burst)
			}
		}
		prev = arrive[i]
		room := tokens.Cmp(big.NewRat(1, 1)) >= 0
		switch {
		case !refused[i] && !room, refused[i] && target[rank[i]] && room:
			return false
		case !refused[i]:
			tokens.Sub(tokens, big.NewRat(1, 1))
		}
	}
	return true
}

// arrivalOrder is the calls in order of arrival (ties in log order), and
// each refused call's rank among the refusals.
func arrivalOrder(arrive []int64, refused []bool) (order, rank []int) {
	order = make([]int, len(arrive))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return int(arrive[x] - arrive[y]) })
	rank = make([]int, len(arrive))
	for i, r := 0, 0; i < len(arrive); i++ {
		if rank[i] = r; refused[i] {
			r++
		}
	}
	return order, rank
}

// someArrivalsFitTarget reports whether some arrivals on a grid of step
// within [s_i, s_i+sp] make arrivalsFitTarget hold.
func someArrivalsFitTarget(at []int64, refused, target []bool, sp, step, q, b int64) bool {
	return someArrivals(at, sp, step, func(arrive []int64) bool { return arrivalsFitTarget(arrive, refused, target, q, b) })
}

// someArrivals reports whether some arrivals on a grid of step within
// [s_i, s_i+sp] make fits hold.
func someArrivals(at []int64, sp, step int64, fits func(arrive []int64) bool) bool {
	arrive := slices.Clone(at)
	var try func(i int) bool
	try = func(i int) bool {
		if i == len(at) {
			return fits(arrive)
		}
		for a := at[i]; a <= at[i]+sp; a += step {
			if arrive[i] = a; try(i + 1) {
				return true
			}
		}
		return false
	}
	return try(0)
}

// arrivalsFit is arrivalsFitTarget with every refusal a target.
func arrivalsFit(arrive []int64, refused []bool, q, b int64) bool {
	return arrivalsFitTarget(arrive, refused, everyTarget(refused), q, b)
}

// fitsSomehow is someArrivalsFitTarget with every refusal a target.
func fitsSomehow(at []int64, refused []bool, sp, step, q, b int64) bool {
	return someArrivalsFitTarget(at, refused, everyTarget(refused), sp, step, q, b)
}

// everyTarget marks each refusal of the log a target, by rank.
func everyTarget(refused []bool) []bool {
	var out []bool
	for _, r := range refused {
		if r {
			out = append(out, true)
		}
	}
	return out
}

// smallSpread is the spread of the brute-force checks, the step of
// their grid of arrivals, and the rates they try (1, 10, 100 and 1000 a
// second).
func smallSpread() (sp, step int64, rates []int64) {
	const ms = int64(time.Millisecond)
	return 4 * ms, ms, []int64{86400, 864000, 8640000, 86400000}
}

// smallSpreadLog is a log of 2 to 4 calls within 12 ms, a third of them
// refused, ties and equal instants among them.
func smallSpreadLog(rng *rand.Rand) ([]Send, *sends) {
	s := make([]Send, 2+rng.IntN(3))
	for i := range s {
		s[i] = Send{At: int64(rng.IntN(12)) * int64(time.Millisecond), Refused: rng.IntN(3) == 0, Line: int64(i + 1)}
	}
	slices.SortStableFunc(s, func(a, b Send) int { return int(a.At - b.At) })
	return s, newSends(s)
}

// TestSpreadBucketHoldsEveryFit: every bucket that some arrivals within
// the spread make fit (a brute force over a grid of arrivals, ties and
// equal logged instants among them) lies inside the curves and the region
// the spread pass finds: the tolerance may widen a bucket, never lose it.
func TestSpreadBucketHoldsEveryFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	sp, step, rates := smallSpread()
	checked := 0
	for range 100 {
		s, d := smallSpreadLog(rng)
		if len(d.refIdx) == 0 {
			continue
		}
		at, refused := d.at, d.refused
		g := newSpreadFit(d, -1, sp, RefusedFree, complement(len(d.refIdx), newBitset(len(d.refIdx))))
		rg := g.region()
		for _, q := range rates {
			lower, upper := g.curve(uint64(q))
			for b := int64(1); b <= 4; b++ {
				if !fitsSomehow(at, refused, sp, step, q, b) {
					continue
				}
				checked++
				require.False(t, rg.Empty, "log %v: bucket %d/day burst %d fits, region empty", s, q, b)
				assert.True(t, lower <= b && b <= upper, "log %v: bucket %d/day burst %d fits, curves %d..%d", s, q, b, lower, upper)
				assert.True(t, rg.RateMin <= q && q <= rg.RateMax && int64(rg.BurstMin) <= b && b <= int64(rg.BurstMax),
					"log %v: bucket %d/day burst %d outside the region %+v", s, q, b, rg)
			}
		}
	}
	assert.Greater(t, checked, 50, "the brute force found few fitting buckets")
}

// TestNoExtremeArrivalDecides: two accepted calls logged at one instant
// fit a burst of 1 when they arrived a refill apart within the spread,
// and not when both arrived as late as allowed: no one extreme arrival
// per call decides a bucket's fit, so the tolerance bounds it instead.
func TestNoExtremeArrivalDecides(t *testing.T) {
	const ms = int64(time.Millisecond)
	at, refused := []int64{0, 0}, []bool{false, false}
	q := int64(1000 * 86400) // one a millisecond
	assert.False(t, arrivalsFit([]int64{4 * ms, 4 * ms}, refused, q, 1), "both late")
	assert.False(t, arrivalsFit([]int64{0, 0}, refused, q, 1), "both early")
	assert.True(t, fitsSomehow(at, refused, 4*ms, ms, q, 1), "a refill apart")
	d := newSends([]Send{{At: 0}, {At: 0}})
	lower := d.spreadLeast(-1, uint64(q), 4*ms)
	assert.Equal(t, int64(1), lower, "the certain need lets the burst of 1 fit")
}

// TestSpreadCurvesFall: both curves fall as the rate rises (the region's
// jumps rely on it), at the exact edges and extreme rates too.
func TestSpreadCurvesFall(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for range 50 {
		var s []Send
		for i := range 40 {
			s = append(s, Send{At: int64(rng.IntN(2000)) * int64(time.Millisecond), Refused: rng.IntN(4) == 0, Line: int64(i + 1)})
		}
		slices.SortStableFunc(s, func(a, b Send) int { return int(a.At - b.At) })
		d := newSends(s)
		if len(d.refIdx) == 0 {
			continue
		}
		g := newSpreadFit(d, -1, int64(2*time.Millisecond), RefusedCount, complement(len(d.refIdx), newBitset(len(d.refIdx))))
		pl, pu := g.curve(1)
		for _, q := range []uint64{2, 86400, 86401, 1 << 20, 1 << 40, maxRegionRate} {
			l, u := g.curve(q)
			assert.LessOrEqual(t, l, pl, "lower at %d", q)
			assert.LessOrEqual(t, u, pu, "upper at %d", q)
			pl, pu = l, u
		}
	}
}

// naiveSpreadLeast is the least burst the accepted calls certainly need
// within spread sp at q calls a day, from the definition: over every run
// of accepted calls j..i, their count less what q refills from s_j to
// s_i+sp, rounded up; at least 1.
func naiveSpreadLeast(at []int64, refused []bool, q, sp int64) int64 {
	least := int64(1)
	for i := range at {
		if refused[i] {
			continue
		}
		var calls int64
		for j := i; j >= 0; j-- {
			if refused[j] {
				continue
			}
			calls++
			if need := calls*int64(day) - q*(at[i]-at[j]+sp); need > 0 {
				least = max(least, (need+int64(day)-1)/int64(day))
			}
		}
	}
	return least
}

// TestSpreadWalksStopAlike: the walks that stop early (the least burst
// past a limit, the upper bound below one) answer the comparison as the
// whole walk does, and the least burst, where within its limit, is the
// definition's.
func TestSpreadWalksStopAlike(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	const ms = int64(time.Millisecond)
	checked := 0
	for range 200 {
		var s []Send
		for i := range 2 + rng.IntN(30) {
			s = append(s, Send{At: int64(rng.IntN(500)) * ms, Refused: rng.IntN(3) == 0, Line: int64(i + 1)})
		}
		slices.SortStableFunc(s, func(a, b Send) int { return int(a.At - b.At) })
		d := newSends(s)
		if len(d.refIdx) == 0 {
			continue
		}
		sp := int64(rng.IntN(6)) * ms
		target := newBitset(len(d.refIdx))
		for r := range d.refIdx {
			if rng.IntN(2) == 0 {
				target.add(r)
			}
		}
		for _, q := range []int64{1, 86400, 864000, 8640000, 86400000, 864000000} {
			full := d.spreadLeast(-1, uint64(q), sp)
			require.Equal(t, naiveSpreadLeast(d.at, d.refused, q, sp), full, "log %v, q %d, spread %d", s, q, sp)
			wide := make([]int64, len(d.refIdx))
			d.spreadWide(-1, uint64(q), sp, target, wide)
			upper := int64(math.MaxInt64)
			for r, w := range wide {
				if target.has(r) {
					upper = min(upper, w)
				}
			}
			for _, limit := range []int64{math.MinInt64, 0, 1, full - 1, full, full + 1, upper - 1, upper, upper + 1, math.MaxInt64} {
				checked++
				past := d.spreadLeastPast(-1, uint64(q), sp, limit)
				assert.Equal(t, full <= limit, past <= limit, "least past %d", limit)
				if full <= limit {
					assert.Equal(t, full, past)
				}
				below := d.spreadUpper(-1, uint64(q), sp, target, nil, target, limit)
				assert.Equal(t, upper < limit, below < limit, "upper below %d", limit)
				if upper >= limit {
					assert.Equal(t, upper, below)
				}
			}
		}
	}
	assert.Greater(t, checked, 1000)
}
