package infer

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wideLog is a random log for the spread's bounds: ties, zero and huge
// costs, and with extreme instants near MaxInt64/2.
func wideLog(rng *rand.Rand, extreme bool) *sends {
	var s []Send
	at := int64(rng.IntN(3))
	if extreme {
		at = math.MaxInt64/2 - int64(rng.IntN(1000))
	}
	for i := range 2 + rng.IntN(60) {
		if rng.IntN(3) > 0 { // else a tie with the call before
			at += int64(rng.IntN(4)) * int64(time.Millisecond) / int64(1+rng.IntN(3))
		}
		c := rng.Int64N(4) // zero included
		switch rng.IntN(8) {
		case 0:
			c = 1 << 40
		case 1:
			c = 1<<62 + rng.Int64N(1<<60)
		}
		s = append(s, Send{At: at, Refused: rng.IntN(3) == 0, Line: int64(i + 1), Cost: []int64{c}})
	}
	d := newSends(s)
	d.addCosts(s, []string{"tokens"})
	return d
}

// TestSpreadWideBothIsSpreadWide: the one walk for both drains gives
// each refusal the bound spreadWide gives it with no refusal taking and
// with every one taking, on random logs, rates and spreads.
func TestSpreadWideBothIsSpreadWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 59))
	compared := 0
	for round := range 400 {
		d := wideLog(rng, round%3 == 2)
		n := len(d.refIdx)
		if n == 0 {
			continue
		}
		all := complement(n, newBitset(n))
		sp := int64(rng.IntN(6)) * int64(time.Millisecond)
		if rng.IntN(10) == 0 {
			sp = math.MaxInt64 / 4
		}
		for _, q := range []uint64{0, 1, 86_400, 8_640_000_000, 1 << 50, math.MaxUint64} {
			for u := -1; u < len(d.units); u++ {
				wantFree, wantCount := make([]int64, n), make([]int64, n)
				d.spreadWide(u, q, sp, nil, wantFree)
				d.spreadWide(u, q, sp, all, wantCount)
				free, count := make([]int64, n), make([]int64, n)
				d.spreadWideBoth(u, q, sp, free, count)
				require.Equal(t, wantFree, free, "round %d, unit %d, q %d, spread %d: free", round, u, q, sp)
				require.Equal(t, wantCount, count, "round %d, unit %d, q %d, spread %d: count", round, u, q, sp)
				compared += 2 * n
			}
		}
	}
	assert.Greater(t, compared, 20_000)
}

// TestSpreadBucketsKeepTheirBounds: each candidate of a spread's buckets
// explains the refusals spreadWide's bounds at its rate give it (no
// refusal taking under RefusedFree and the region's, every one under
// RefusedCount's sampled), and once spreadBounds has made its bounds again
// they are those.
func TestSpreadBucketsKeepTheirBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 67))
	compared := 0
	for round := range 150 {
		d := wideLog(rng, round%4 == 3)
		n := len(d.refIdx)
		sp := int64(rng.IntN(6)) * int64(time.Millisecond)
		found, bounds := d.spreadBuckets(sp, false)
		var cands []*Candidate
		for rd := range found {
			for i := range found[rd] {
				cands = append(cands, &found[rd][i])
			}
		}
		d.spreadBounds(sp, cands, bounds)
		all := complement(n, newBitset(n))
		for _, c := range cands {
			b, ok := bounds[c.pass]
			require.True(t, ok, "round %d: a candidate without its bounds", round)
			assert.False(t, b.count && c.Reading == RefusedFree, "round %d: RefusedFree drained", round)
			var drain bitset
			if b.count {
				drain = all
			}
			want := make([]int64, n)
			d.spreadWide(slices.Index(d.units, c.Unit), uint64(c.PerDay), sp, drain, want)
			require.Equal(t, want, c.pass.wide[RefusedCount], "round %d", round)
			require.Equal(t, want, c.pass.wide[RefusedFree], "round %d", round)
			set := newBitset(n)
			for r, w := range want {
				if clampInt(w) >= c.AtLeast {
					set.add(r)
				}
			}
			assert.Equal(t, set, c.set, "round %d", round)
			compared++
		}
	}
	assert.Greater(t, compared, 300)
}

// TestSpreadPointFindsEveryFit: on small logs with random targets (ties
// and equal logged instants among them), wherever some bucket fits the
// targets within the spread for some arrivals on a grid (a brute force
// in exact rationals), spreadPoint finds a bucket, and the bucket it
// gives explains every target with its least burst: pairing within a
// spread loses no bucket the region holds.
func TestSpreadPointFindsEveryFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	sp, step, rates := smallSpread()
	checked := 0
	for range 150 {
		s, d := smallSpreadLog(rng)
		nr := len(d.refIdx)
		if nr == 0 {
			continue
		}
		target, in := newBitset(nr), make([]bool, nr)
		for r := range nr {
			if r == 0 || rng.IntN(2) == 0 {
				target.add(r)
				in[r] = true
			}
		}
		fits := false
		for _, q := range rates {
			for b := int64(1); b <= 4 && !fits; b++ {
				fits = someArrivalsFitTarget(d.at, d.refused, in, sp, step, q, b)
			}
		}
		var spent int64
		c, ok := spreadPoint(d, -1, sp, RefusedFree, target, &spent)
		if !fits {
			continue
		}
		checked++
		require.True(t, ok, "log %v, targets %v: a bucket fits, none paired", s, in)
		assert.Positive(t, spent)
		assert.True(t, subset(target, c.set), "log %v, targets %v: the bucket %d/day burst %d leaves some", s, in, c.PerDay, c.AtLeast)
		assert.Equal(t, d.spreadLeast(-1, uint64(c.PerDay), sp), int64(c.AtLeast), "log %v: its least burst", s)
	}
	assert.Greater(t, checked, 40, "the brute force found few fitting buckets")
}
