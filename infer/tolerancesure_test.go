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

	"github.com/rlcheck/rlcheck/infer/infertest"
)

// arrivalsFitDrained replays calls arriving at the given instants (ties
// in log order) through a bucket of q units a day and burst b, in exact
// rationals, under "refused calls count": it reports whether the bucket
// admits every accepted call and refuses every refused one of target (by
// rank). The other refused calls are another rule's: the bucket is not
// asked about them, but each took from it when it had room.
func arrivalsFitDrained(arrive []int64, refused, target []bool, q, b int64) bool {
	order, rank := arrivalOrder(arrive, refused)
	one, burst := big.NewRat(1, 1), big.NewRat(b, 1)
	tokens := new(big.Rat).Set(burst)
	for k, i := range order {
		if k > 0 {
			gap := arrive[i] - arrive[order[k-1]]
			tokens.Add(tokens, big.NewRat(q*gap, int64(24*time.Hour)))
			if tokens.Cmp(burst) > 0 {
				tokens.Set(burst)
			}
		}
		room := tokens.Cmp(one) >= 0
		switch {
		case !refused[i] && !room, refused[i] && target[rank[i]] && room:
			return false
		case room:
			tokens.Sub(tokens, one) // accepted, or another rule's refusal it had room for
		}
	}
	return true
}

// someArrivalsFitDrained reports whether some arrivals on a grid of step
// within [s_i, s_i+sp] make arrivalsFitDrained hold.
func someArrivalsFitDrained(at []int64, refused, target []bool, sp, step, q, b int64) bool {
	return someArrivals(at, sp, step, func(arrive []int64) bool { return arrivalsFitDrained(arrive, refused, target, q, b) })
}

// drainedLog is a log of 4 to 6 calls within 30 ms, half of them refused,
// ties and equal instants among them, and a target: each refusal by rank
// the bucket explains, the others another rule's.
func drainedLog(rng *rand.Rand) (*sends, []bool, bitset) {
	s := make([]Send, 4+rng.IntN(3))
	for i := range s {
		s[i] = Send{At: int64(rng.IntN(30)) * int64(time.Millisecond), Refused: rng.IntN(2) == 0, Line: int64(i + 1)}
	}
	slices.SortStableFunc(s, func(a, b Send) int { return int(a.At - b.At) })
	d := newSends(s)
	target, set := make([]bool, len(d.refIdx)), newBitset(len(d.refIdx))
	for r := range target {
		if target[r] = rng.IntN(2) == 0; target[r] {
			set.add(r)
		}
	}
	return d, target, set
}

// TestSureDrainsHoldEveryFit: under "refused calls count", every bucket
// that some arrivals within the spread make fit beside another rule's
// refusals (a brute force over a grid of arrivals, those refusals taking
// from it where it had room) lies inside the region narrowed by the
// refusals certain to take, and between its curves at its rate; and the
// narrowing is no empty promise: some regions come out narrower.
func TestSureDrainsHoldEveryFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 23))
	const ms = int64(time.Millisecond)
	sp, step := 2*ms, ms
	rates := []int64{86400, 864000, 8640000, 43200000, 86400000, 172800000}
	var checked, narrower int
	for range infertest.Seeds(120, 600) {
		d, target, set := drainedLog(rng)
		if len(d.refIdx) == 0 || set.count() == len(d.refIdx) {
			continue
		}
		wide := newSpreadFit(d, -1, sp, RefusedCount, set).region()
		g := newSpreadFit(d, -1, sp, RefusedCount, set)
		rg, _ := g.narrowed(g.region())
		if !rg.Empty && !wide.Empty && rg != wide {
			narrower++
		}
		for _, q := range rates {
			lower, upper := g.curve(uint64(q))
			for b := int64(1); b <= 5; b++ {
				if !someArrivalsFitDrained(d.at, d.refused, target, sp, step, q, b) {
					continue
				}
				checked++
				require.False(t, rg.Empty, "log %v, target %v: bucket %d/day burst %d fits, region empty", d.at, target, q, b)
				assert.True(t, rg.RateMin <= q && (rg.RateOpen || q <= rg.RateMax) && int64(rg.BurstMin) <= b && b <= int64(rg.BurstMax),
					"log %v refused %v, target %v: bucket %d/day burst %d outside the region %+v", d.at, d.refused, target, q, b, rg)
				assert.True(t, lower <= b && b <= upper, "log %v refused %v, target %v: bucket %d/day burst %d fits, curves %d..%d", d.at, d.refused, target, q, b, lower, upper)
			}
		}
	}
	t.Logf("%d fitting buckets checked; %d regions narrower", checked, narrower)
	assert.Greater(t, checked, 300, "the brute force found few fitting buckets")
	assert.Positive(t, narrower, "no region narrowed")
}

// TestSlicedHoldsEveryFit: under "refused calls count", on client's logs
// of a bucket beside another rule's refusals (14 to 16 calls within
// 200 ms, each logged at its arrival or the spread before it), where the
// region found again slice by slice of its rates is narrower than
// narrowed's, the hidden bucket lies inside it, and no bucket it leaves
// out (on a grid of rates and bursts over narrowed's region) fits any
// arrivals the log allows on that grid (a brute force over every call
// at its logged instant or the spread past it, those refusals taking
// from it where it had room); and the slices are no empty promise: some
// regions come out narrower.
func TestSlicedHoldsEveryFit(t *testing.T) {
	narrowerHoldsEveryFit(t, rand.New(rand.NewPCG(29, 31)), infertest.Seeds(300, 1500), "slices", func(g *spreadFit) (rg, before region) {
		before, base := g.narrowed(g.region())
		rg, _ = g.sliced(before, base)
		return rg, before
	})
}

// narrowerHoldsEveryFit draws seeds slicedLog logs (spread 2 ms) and,
// where narrow (named by what) makes a bucket's region narrower than the
// one before it, asserts assertNarrowerHolds; and that some regions come
// out narrower and leave buckets out to check.
func narrowerHoldsEveryFit(t *testing.T, rng *rand.Rand, seeds int, what string, narrow func(g *spreadFit) (rg, before region)) {
	const sp = 2 * int64(time.Millisecond)
	var narrower, left int
	for range seeds {
		d, target, set, hq, hb := slicedLog(rng, sp)
		if set.count() == 0 || set.count() == len(d.refIdx) {
			continue
		}
		rg, before := narrow(newSpreadFit(d, -1, sp, RefusedCount, set))
		if rg == before {
			continue
		}
		narrower++
		left += assertNarrowerHolds(t, d, target, sp, hq, hb, rg, before)
	}
	t.Logf("%d regions narrower by %s; %d buckets they leave out checked", narrower, what, left)
	assert.Positive(t, narrower, "no region narrowed by %s", what)
	assert.Positive(t, left, "no bucket left out to check")
}

// assertNarrowerHolds asserts that rg, a region narrower than before,
// holds the hidden bucket of hq units a day and burst hb, and that no
// bucket it leaves out, on a grid of rates and bursts over before, fits
// any arrivals of d at the logged instants or sp past them beside the
// other rule's refusals (those not in target); it returns how many it
// left out.
func assertNarrowerHolds(t *testing.T, d *sends, target []bool, sp, hq, hb int64, rg, before region) (left int) {
	t.Helper()
	require.False(t, rg.Empty, "log %v refused %v, target %v: bucket %d/day burst %d fits, region empty", d.at, d.refused, target, hq, hb)
	inside := func(q, b int64) bool {
		return rg.RateMin <= q && q <= rg.RateMax && int64(rg.BurstMin) <= b && b <= int64(rg.BurstMax)
	}
	require.True(t, fitsLateOrNot(d.at, d.refused, target, sp, hq, hb), "the brute force misses the hidden bucket")
	require.True(t, inside(hq, hb), "log %v refused %v, target %v: bucket %d/day burst %d outside the region %+v (before %+v)", d.at, d.refused, target, hq, hb, rg, before)
	for _, q := range gridRates(before.RateMin, before.RateMax, 12) {
		for b := int64(before.BurstMin); b <= min(int64(before.BurstMax), int64(before.BurstMin)+6); b++ {
			if inside(q, b) {
				continue
			}
			left++
			assert.False(t, fitsLateOrNot(d.at, d.refused, target, sp, q, b),
				"log %v refused %v, target %v: bucket %d/day burst %d fits, outside the region %+v (before %+v)", d.at, d.refused, target, q, b, rg, before)
		}
	}
	return left
}

// slicedLog is a client's log of 14 to 16 calls arriving within 200 ms
// (each at its own millisecond) at a bucket of 1 to 4 calls a 10 to
// 30 ms, burst 1 to 4, under
// "refused calls count": a quarter of the calls it has room for are
// another rule's refusals (taking from it), the bucket's refusals its
// target. Each call is logged at its arrival or spread sp before it, so
// the bucket fits the log within sp: it returns the log, the target (by
// rank, and as a set), the bucket's rate and burst.
func slicedLog(rng *rand.Rand, sp int64) (d *sends, target []bool, set bitset, q, b int64) {
	return bucketLog(rng, sp, 14, 200)
}

// bucketLog is slicedLog's log of n to n+2 calls within span ms.
func bucketLog(rng *rand.Rand, sp int64, n, span int) (d *sends, target []bool, set bitset, q, b int64) {
	const ms = int64(time.Millisecond)
	const one = int64(24 * time.Hour)
	q, b = (1+rng.Int64N(4))*one/((10+rng.Int64N(21))*ms), 1+rng.Int64N(4)
	arrive := make([]int64, n+rng.IntN(3))
	for i, a := range rng.Perm(span)[:len(arrive)] { // no two at once: the replay's ties are in log order
		arrive[i] = int64(a) * ms
	}
	slices.Sort(arrive)
	s, explains := make([]Send, len(arrive)), make([]bool, len(arrive))
	tokens, prev := b*one, int64(0)
	for i, a := range arrive {
		tokens, prev = min(b*one, tokens+q*(a-prev)), a
		explains[i] = tokens < one
		s[i] = Send{At: a - sp*rng.Int64N(2), Refused: explains[i] || rng.IntN(4) == 0, Line: int64(i)}
		if !explains[i] {
			tokens -= one
		}
	}
	slices.SortStableFunc(s, func(x, y Send) int { return int(x.At - y.At) })
	d = newSends(s)
	set = newBitset(len(d.refIdx))
	for _, c := range s {
		if c.Refused {
			if target = append(target, explains[c.Line]); explains[c.Line] {
				set.add(len(target) - 1)
			}
		}
	}
	return d, target, set, q, b
}

// gridRates are n+1 rates from lo to hi, a like ratio apart, both ends
// among them.
func gridRates(lo, hi int64, n int) []int64 {
	out := []int64{lo}
	for k := 1; k < n; k++ {
		out = append(out, int64(float64(lo)*math.Pow(float64(hi)/float64(lo), float64(k)/float64(n))))
	}
	return append(out, hi)
}

// fitsLateOrNot reports whether some arrivals, each call at its logged
// instant or sp past it, make a bucket of q units a day and burst b fit
// under "refused calls count" (as arrivalsFitDrained, in integers:
// tokens counted in parts of a day's nanoseconds, exact while q times a
// gap stays within int64).
func fitsLateOrNot(at []int64, refused, target []bool, sp, q, b int64) bool {
	const one = int64(24 * time.Hour)
	n := len(at)
	_, rank := arrivalOrder(at, refused)
	arrive, order := make([]int64, n), make([]int, n)
	for mask := 0; mask < 1<<n; mask++ {
		for i := range n {
			arrive[i] = at[i] + sp*int64(mask>>i&1)
			k := i // insertion, stable: ties in log order
			for ; k > 0 && arrive[order[k-1]] > arrive[i]; k-- {
				order[k] = order[k-1]
			}
			order[k] = i
		}
		if replayDrainedInt(arrive, order, rank, refused, target, q, b*one) {
			return true
		}
	}
	return false
}

// replayDrainedInt is arrivalsFitDrained's replay in integers, the calls
// in the order given, burst already in parts of a day's nanoseconds.
func replayDrainedInt(arrive []int64, order, rank []int, refused, target []bool, q, burst int64) bool {
	const one = int64(24 * time.Hour)
	tokens := burst
	for k, i := range order {
		if k > 0 {
			tokens = min(burst, tokens+q*(arrive[i]-arrive[order[k-1]]))
		}
		room := tokens >= one
		switch {
		case !refused[i] && !room, refused[i] && target[rank[i]] && room:
			return false
		case room:
			tokens -= one
		}
	}
	return true
}

// TestSlicedKeepsNarrowRegion: a region within 1% in rate and burst is
// kept as it is, with no walk over the log (a million calls' narrow
// regions took more passes to slice than the rest of their search);
// a wider one is sliced.
func TestSlicedKeepsNarrowRegion(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 41))
	const sp = 2 * int64(time.Millisecond)
	d, _, set, _, _ := slicedLog(rng, sp)
	g := newSpreadFit(d, -1, sp, RefusedCount, set)
	narrow := region{RateMin: 1_000_000, RateMax: 1_009_000, BurstMin: 200, BurstMax: 201}
	got, base := g.sliced(narrow, 1_000_000)
	assert.Equal(t, narrow, got)
	assert.Equal(t, uint64(1_000_000), base)
	assert.Zero(t, g.steps, "no walk for a narrow region")
	wide := narrow
	wide.RateMax = 1_100_000
	g.sliced(wide, 1_000_000)
	assert.Positive(t, g.steps, "a wider region is sliced")
}
