package infer

import (
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
