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

// rateLog is a random log for the least-rate search: ties, costs of 0,
// costs past every burst tried and, at extreme, instants near the end of
// int64 and costs whose sums reach far past 64 bits times a day.
func rateLog(rng *rand.Rand, extreme bool) (*sends, int) {
	var s []Send
	at := int64(rng.IntN(3))
	if extreme {
		at = math.MaxInt64 / 2
	}
	for i := range 2 + rng.IntN(40) {
		at += int64(rng.IntN(4)) * int64(time.Millisecond) / int64(1+rng.IntN(3))
		c := rng.Int64N(4)
		if extreme && rng.IntN(4) == 0 {
			c = 1 << 40
		}
		s = append(s, Send{At: at, Refused: rng.IntN(4) == 0, Line: int64(i + 1), Cost: []int64{c}})
	}
	d := newSends(s)
	d.addCosts(s, []string{"tokens"})
	return d, rng.IntN(2) - 1 // the calls (-1) or the unit
}

// naiveSpreadRate is the least rate in (lo, hi) that keeps the accepted
// calls within burst b and spread sp, or hi where none does, from the
// definition: every call costs at most b, and for every pair i ≤ j of
// accepted calls (W − b)·day ≤ q·(s_j − s_i + sp), W their work; in
// math/big.
func naiveSpreadRate(d *sends, u int, lo, hi uint64, sp, b int64) uint64 {
	at, cost := d.accepted(u)
	costOf := func(k int) int64 {
		if cost == nil {
			return 1
		}
		return cost[k]
	}
	need := new(big.Int)
	for j := range at {
		if costOf(j) > b {
			return hi
		}
		w := new(big.Int)
		for i := j; i >= 0; i-- {
			w.Add(w, big.NewInt(costOf(i)))
			n := new(big.Int).Sub(w, big.NewInt(b))
			if n.Sign() <= 0 {
				continue
			}
			n.Mul(n, new(big.Int).SetUint64(day))
			den := big.NewInt(at[j] - at[i] + sp)
			if den.Sign() == 0 {
				return hi
			}
			n.Add(n, den).Sub(n, big.NewInt(1)).Quo(n, den) // rounded up
			if n.Cmp(need) > 0 {
				need = n
			}
		}
	}
	if hi <= lo+1 || !need.IsUint64() || need.Uint64() >= hi {
		return hi
	}
	return max(lo+1, need.Uint64())
}

// TestSpreadRateIsTheBisection: the least rate of each burst found from
// the pairs is the bisection's over spreadLeast, and the definition's,
// in brackets wide, narrow and empty, at spreads of 0 up, with the pairs
// of the bursts searched before (in any order) carried along; where it
// walked, the least burst it gives is spreadLeast's.
func TestSpreadRateIsTheBisection(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 31))
	checked := 0
	for round := range 400 {
		d, u := rateLog(rng, round%4 == 3)
		sp := []int64{0, 1, int64(time.Millisecond), 5 * int64(time.Millisecond), rng.Int64N(1e7)}[rng.IntN(5)]
		var pairs []spreadPair
		for range 12 {
			lo, hi := uint64(0), maxRegionRate
			switch rng.IntN(4) {
			case 0:
				lo, hi = rng.Uint64N(1e9), rng.Uint64N(1e12)
				lo, hi = min(lo, hi), max(lo, hi)
			case 1:
				lo = rng.Uint64N(3)
				hi = lo + rng.Uint64N(3)
			}
			b := 1 + rng.Int64N(12)
			if rng.IntN(8) == 0 {
				b = 1<<40 + rng.Int64N(1<<41)
			}
			want := bisectRate(lo, hi, func(q uint64) bool { return d.spreadLeast(u, q, sp) <= b })
			got, least, walked := d.spreadRate(u, lo, hi, sp, b, &pairs)
			require.Equal(t, want, got, "round %d, unit %d, (%d, %d), spread %d, burst %d", round, u, lo, hi, sp, b)
			assert.Equal(t, naiveSpreadRate(d, u, lo, hi, sp, b), got, "round %d, definition", round)
			if walked {
				assert.Equal(t, d.spreadLeast(u, got, sp), least, "round %d, least burst", round)
			}
			checked++
		}
	}
	assert.Equal(t, 400*12, checked)
}

// TestSpreadSampledIsTheBisection: the candidates a unit's sampled
// bursts give, under both readings, hold the rate, the least burst and
// the steps the search by bisection over spreadLeast gives them.
func TestSpreadSampledIsTheBisection(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 41))
	compared := 0
	for round := range 120 {
		d, u := rateLog(rng, round%5 == 4)
		if len(d.refIdx) == 0 {
			continue
		}
		sp := int64(rng.IntN(6)) * int64(time.Millisecond)
		all := complement(len(d.refIdx), newBitset(len(d.refIdx)))
		g := newSpreadFit(d, u, sp, RefusedFree, all)
		g.steps = rng.Int64N(1000)
		ref := *g
		got := g.sampled(all)
		want := bisectSampled(&ref)
		require.Len(t, got, len(want), "round %d", round)
		compared += len(got)
		for i, c := range got {
			w := want[i]
			assert.Equal(t, [4]int64{w.q, w.least, w.steps, int64(w.rd)}, [4]int64{c.PerDay, int64(c.AtLeast), c.Steps, int64(c.Reading)}, "round %d, candidate %d", round, i)
		}
	}
	t.Log(compared, "candidates")
	assert.Greater(t, compared, 500)
}

// sampledWant is a sampled candidate's rate, least burst, steps and
// reading.
type sampledWant struct {
	q, least, steps int64
	rd              Reading
}

// bisectSampled is spreadFit.sampled's search as the bisection over
// spreadLeast makes it, walk by walk.
func bisectSampled(g *spreadFit) []sampledWant {
	d, u, sp := g.d, g.u, g.sp
	var out []sampledWant
	lo, hi := d.rateRange(u)
	qlo, q := uint64(lo), uint64(hi)
	from, to := d.spreadLeast(u, q, sp), d.spreadLeast(u, qlo, sp)
	for b, k := from, 0; b < to && k < spreadSearched; k++ {
		q = bisectRate(qlo, q, func(q uint64) bool { g.steps += int64(d.n()); return d.spreadLeast(u, q, sp) <= b })
		least := d.spreadLeast(u, q, sp)
		for _, rd := range []Reading{RefusedFree, RefusedCount} {
			g.steps += 2 * int64(d.n())
			out = append(out, sampledWant{q: int64(q), least: least, steps: g.steps, rd: rd})
		}
		if b++; b > spreadAllBursts {
			b = max(b, int64(float64(b-1)*spreadBurstRatio))
		}
	}
	return slices.Clip(out)
}
