package infer

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// oracleFits is a plain replay of a bucket of q units a day and burst b
// over the calls, the level an exact fraction: it fits when it has room
// for every accepted call and none for a target; a call takes its cost
// when it is accepted, or, under RefusedCount, when it is a refusal the
// bucket had room for.
func oracleFits(s []Send, q, b int64, rd Reading, target func(r int) bool) bool {
	return oracleReplay(s, q, b, func(c Send, r int, room bool) (take, ok bool) {
		switch {
		case !c.Refused:
			return true, room
		case target(r):
			return false, !room
		}
		return room && rd == RefusedCount, true
	})
}

// oracleReplay is a plain replay of a bucket of q units a day and burst b
// over the calls, the level an exact fraction: step judges each call (r
// its rank among the refusals), given whether the bucket has room, and
// says whether it takes its cost and whether the replay goes on. It
// reports whether it went to the end.
func oracleReplay(s []Send, q, b int64, step func(c Send, r int, room bool) (take, ok bool)) bool {
	level := big.NewRat(b, 1)
	full := big.NewRat(b, 1)
	r := 0
	for i, c := range s {
		if i > 0 {
			level.Add(level, big.NewRat(q*(c.At-s[i-1].At)/int64(time.Millisecond), int64(day/uint64(time.Millisecond))))
			if level.Cmp(full) > 0 {
				level.Set(full)
			}
		}
		cost := big.NewRat(1, 1)
		if c.Cost != nil {
			cost = big.NewRat(c.Cost[0], 1)
		}
		take, ok := step(c, r, level.Cmp(cost) >= 0)
		if !ok {
			return false
		}
		if take {
			level.Sub(level, cost)
		}
		if c.Refused {
			r++
		}
	}
	return true
}

// regionLog replays a little traffic, on a millisecond grid, through a
// hidden bucket, alone or beside a window rule; with tokens, the bucket
// meters tokens and each call costs 0 to 3 of them.
func regionLog(rng *rand.Rand, rd Reading, tokens bool) []Send {
	hidden := []rule.Rule{{Kind: rule.Bucket, Limit: 1 + rng.IntN(4), Window: time.Duration(1+rng.IntN(3)) * time.Second, Burst: 1 + rng.IntN(6)}}
	if tokens {
		hidden[0].Unit = infertest.Tokens
	}
	if rng.IntN(2) == 0 {
		hidden = append(hidden, rule.Rule{Kind: rule.Sliding, Limit: 2 + rng.IntN(4), Window: 2 * time.Second})
	}
	return replayTraffic(rng, infertest.NewProvider(hidden, rd == RefusedCount), tokens, 16+rng.IntN(30), 4, 300)
}

// replayTraffic replays calls through provider p on a millisecond grid,
// each gap the product of a draw below steps and one below ms; with
// tokens, each call costs 0 to 3 of them.
func replayTraffic(rng *rand.Rand, p *infertest.Provider, tokens bool, calls, steps, ms int) []Send {
	var s []Send
	at := int64(1_700_000_000_000) * int64(time.Millisecond)
	for i := range calls {
		at += int64(rng.IntN(steps)*rng.IntN(ms)) * int64(time.Millisecond)
		c := Send{At: at, Line: int64(i + 2)}
		cost := int64(1)
		if tokens {
			cost = rng.Int64N(4)
			c.Cost = []int64{cost}
		}
		c.Refused = p.CallCost(at, cost)
		s = append(s, c)
	}
	return s
}

// regionSends are the sorted calls of s, with the tokens unit where the
// calls carry costs, and the unit the bucket meters (-1: calls).
func regionSends(s []Send) (*sends, int) {
	d := newSends(s)
	if len(s) > 0 && s[0].Cost != nil {
		d.addCosts(s, []string{infertest.Tokens})
		return d, 0
	}
	return d, -1
}

// regionGrid are the rates (units a day) and bursts the oracle tries: a
// fine ladder from 0.05 to 8 a second, on whole units a day.
func regionGrid() (rates []int64, bursts []int64) {
	for q := int64(86400 / 20); q <= 8*86400; q = q*41/40 + 1 {
		rates = append(rates, q)
	}
	for b := int64(1); b <= 14; b++ {
		bursts = append(bursts, b)
	}
	return rates, bursts
}

// TestRegionHoldsEveryFittingBucket: over small logs replayed through a
// hidden bucket (beside a window or not), under both readings, with every
// refusal a target or only some (the others explained by other rules),
// on calls or on tokens (costs 0 to 3, a cost above the level among them),
// every (rate, burst) of a fine grid that the oracle's replay fits lies
// inside the region's extent, an empty region has no fitting point, and
// for a fixed burst the fitting rates are one run of the grid (the level
// is monotone in the rate) wherever the refusals take nothing. An exact
// region's corners fit.
func TestRegionHoldsEveryFittingBucket(t *testing.T) {
	rates, bursts := regionGrid()
	var points, drained, outer int // the grid points that fit; the regions bounded from outside
	defer func() {
		t.Logf("%d grid points fit; %d regions with drains, %d of them not exact", points, drained, outer)
		assert.Greater(t, points, 500, "the logs exercise the region")
		assert.Positive(t, drained, "some regions have refusals that drain")
	}()
	for seed := range uint64(infertest.Seeds(60, 400)) {
		rng := rand.New(rand.NewPCG(seed, 41))
		rd := Reading(rng.IntN(2))
		s := regionLog(rng, rd, seed%4 == 1)
		d, u := regionSends(s)
		n := len(d.refIdx)
		target := newBitset(n)
		for r := range n {
			if seed%2 == 0 || rng.IntN(3) > 0 {
				target.add(r)
			}
		}
		g := newRegionFit(d, u, rd, target)
		rg := g.region()
		monotone := !g.drain
		if g.drain {
			drained++
			if !rg.Exact {
				outer++
			}
		}
		for _, b := range bursts {
			var run []int // grid indexes of the rates that fit
			for k, q := range rates {
				if !oracleFits(s, q, b, rd, target.has) {
					continue
				}
				run = append(run, k)
				points++
				require.False(t, rg.Empty, "seed %d: %d a day burst %d fits, the region is empty", seed, q, b)
				assert.True(t, rg.BurstMin <= int(b) && int(b) <= rg.BurstMax, "seed %d %v: burst %d outside [%d, %d]", seed, rd, b, rg.BurstMin, rg.BurstMax)
				assert.True(t, rg.RateMin <= q && (rg.RateOpen || q <= rg.RateMax), "seed %d %v: %d a day outside [%d, %d]", seed, rd, q, rg.RateMin, rg.RateMax)
			}
			if monotone && len(run) > 0 {
				assert.Equal(t, len(run)-1, run[len(run)-1]-run[0], "seed %d burst %d: the rates that fit are one run", seed, b)
			}
		}
		if !rg.Empty && rg.Exact && !rg.RateOpen && rg.RateMax < 1<<40 {
			assert.True(t, g.fits(uint64(rg.RateMax), int64(rg.BurstMin)), "seed %d: corner (most rate, least burst)", seed)
			assert.True(t, g.fits(uint64(rg.RateMin), int64(rg.BurstMax)), "seed %d: corner (least rate, most burst)", seed)
		}
	}
}

// TestRegionFitsMatchesOracle: the exact predicate the corners are judged
// by agrees with the oracle's replay on every grid point near the hidden
// rate.
func TestRegionFitsMatchesOracle(t *testing.T) {
	rates, bursts := regionGrid()
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 43))
		rd := Reading(rng.IntN(2))
		s := regionLog(rng, rd, seed%2 == 1)
		d, u := regionSends(s)
		target := newBitset(len(d.refIdx))
		for r := range d.refIdx {
			if rng.IntN(4) > 0 {
				target.add(r)
			}
		}
		g := newRegionFit(d, u, rd, target)
		for k := 0; k < len(rates); k += 7 {
			q := rates[k]
			for _, b := range bursts {
				require.Equal(t, oracleFits(s, q, b, rd, target.has), g.fits(uint64(q), b), "seed %d %v: %d a day burst %d", seed, rd, q, b)
			}
		}
	}
}

// TestLeastRoomIsTheLeastRate: the forced jumps land on the least rate at
// which a burst keeps every accepted call, as a bisection over the exact
// pass finds it.
func TestLeastRoomIsTheLeastRate(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 47))
		s := regionLog(rng, RefusedFree, false)
		d := newSends(s)
		for b := int64(1); b <= 8; b++ {
			got, _ := d.leastRoom(-1, b, 1, nil)
			fits := func(q uint64) bool { _, ok := d.roomPass(-1, b, q, nil); return ok }
			want := uint64(0)
			if fits(maxRegionRate) {
				want = bisectRate(0, maxRegionRate, fits)
			}
			require.Equal(t, want, got, "seed %d burst %d", seed, b)
			if got > 1 {
				p := d.bucketAt(-1, got, false, 0)
				assert.LessOrEqual(t, int64(p.lower[RefusedFree]), b, "seed %d: the bucket pass agrees at %d", seed, got)
				p = d.bucketAt(-1, got-1, false, 0)
				assert.Greater(t, int64(p.lower[RefusedFree]), b, "seed %d: and one unit a day below", seed)
			}
		}
	}
}

// TestNineCallsFitOneBucket: nine calls at +0, +400, +800, +1200 ms
// (200), +1600 (429), +2000 (200), +2400, +2800 (429), +3200 ms (200)
// are explained exactly by 1/1s burst 3. At either clock offset (on the
// second, and a quarter past) infer reports one bucket, the smallest,
// whose ranges hold 1/1s burst 3. 17/10s burst 2, once reported beside
// a fixed window, does not explain the log alone: it has room for the
// call refused at +2400 ms.
func TestNineCallsFitOneBucket(t *testing.T) {
	status := []bool{false, false, false, false, true, false, true, true, false}
	for _, from := range []int64{1796528897000, 1796528897250} {
		var s []Send
		for i, refused := range status {
			s = append(s, Send{At: (from + int64(i)*400) * int64(time.Millisecond), Refused: refused, Line: int64(i + 2)})
		}
		res := Infer(s, Options{})
		for _, rd := range []Reading{RefusedCount, RefusedFree} {
			f := res.Fits[rd]
			require.True(t, f.Holds(), "%d %v", from, rd)
			require.Len(t, f.Rules, 1, "%d %v: %s", from, rd, RulesText(f.Rules))
			r := f.Rules[0]
			assert.Equal(t, rule.Bucket, r.Kind)
			assert.True(t, f.Smallest)
			assert.True(t, r.Min <= 3 && 3 <= r.Max, "%d %v: burst [%d, %d]", from, rd, r.Min, r.Max)
			assert.True(t, r.RateMin <= 86400 && 86400 <= r.RateMax, "%d %v: rate [%d, %d] a day", from, rd, r.RateMin, r.RateMax)
			other := Rule{Kind: rule.Bucket, Window: 10 * time.Second, Rate: 17, Burst: 2, perDay: 17 * 8640}
			assert.False(t, explainsAll([]Rule{other}, rd, s, nil), "17/10s burst 2 alone has room for the call refused at +2400 ms")
			assert.True(t, explainsAll([]Rule{{Kind: rule.Bucket, Window: time.Second, Rate: 1, Burst: 3, perDay: 86400}}, rd, s, nil))
			assert.True(t, slices.ContainsFunc([]Rule{r}, func(r Rule) bool { return r.Rule().String() == "1/1s burst 3" }), r.Rule().String())
		}
	}
}

// TestRateWithoutUpperBound: three calls accepted and a fourth refused at
// one instant pin a bucket's burst at 3 but set no upper bound on its
// rate: the report says "at least" and "cannot tell", the confidence is
// 0, and the advice says what traffic would bound it.
func TestRateWithoutUpperBound(t *testing.T) {
	at := int64(1_700_000_000) * int64(time.Second)
	s := []Send{{At: at, Line: 2}, {At: at, Line: 3}, {At: at, Line: 4}, {At: at, Refused: true, Line: 5}, {At: at + int64(time.Second), Line: 6}}
	d := newSends(s)
	rg := newRegionFit(d, -1, RefusedFree, complement(1, newBitset(1))).region()
	require.False(t, rg.Empty)
	assert.Equal(t, [2]int{3, 3}, [2]int{rg.BurstMin, rg.BurstMax})
	assert.True(t, rg.RateOpen)
	r := Rule{Kind: rule.Bucket, Window: time.Second, Rate: 1, Burst: 3, Min: 3, Max: 3, RateMin: rg.RateMin, RateMax: rg.RateMax, RateOpen: true}
	var b strings.Builder
	writeBucketRange(&b, r)
	assert.Contains(t, b.String(), "at least")
	assert.Contains(t, b.String(), "cannot tell the most")
	assert.Contains(t, r.Advice(), "no upper bound")
	assert.Zero(t, bucketConfidence(rg))
}
