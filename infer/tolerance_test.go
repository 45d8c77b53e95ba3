package infer

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// bruteSpread is the oracle of the spread counts: it tries every pair of
// arrivals a_i in [t_i+o, t_i+o+sp], a_j likewise, on a grid of whole
// units (the times, window, spread and offset are even, so that every
// open interval of arrivals that is not empty holds a whole unit). An
// earlier call j is certainly in call i's window when every pair has a_j
// before a_i and in its window, possibly when some pair does.
func bruteSpread(s []Send, i int, w, sp, o int64, k rule.Kind, rd Reading) (certain, possible int) {
	r := rule.Rule{Window: time.Duration(w), Kind: k}
	for j := range s {
		if j == i || rd == RefusedFree && s[j].Refused {
			continue
		}
		all, some := true, false
		for di := int64(0); di <= sp; di++ {
			for dj := int64(0); dj <= sp; dj++ {
				ai, aj := s[i].At+o+di, s[j].At+o+dj
				in := aj < ai && inWindow(r, aj, ai)
				all = all && in
				some = some || in
			}
		}
		if all {
			certain++
		}
		if some {
			possible++
		}
	}
	return certain, possible
}

// TestSpreadPassMatchesBruteForce: each accepted call's certain count and
// each refused call's possible count equal the oracle's, for both kinds
// and readings, with ties, gaps of exactly the spread and of the window,
// and offsets either way.
func TestSpreadPassMatchesBruteForce(t *testing.T) {
	for seed := range uint64(25) {
		rng := rand.New(rand.NewPCG(seed, 2))
		var s []Send
		at := int64(-40) // negative times too
		for i := range 60 {
			at += 2 * rng.Int64N(4)
			s = append(s, Send{At: at, Refused: rng.IntN(3) == 0, Line: int64(i + 1)})
		}
		d := newSends(s)
		for _, w := range []int64{10, 20} {
			for _, sp := range []int64{2, 4, 6} {
				for _, o := range []int64{-sp, -2, 0, 2, sp} {
					for _, k := range windowKinds {
						if k == rule.Sliding && o != 0 {
							continue
						}
						p := d.spreadPass(w, k, sp, o)
						for _, rd := range []Reading{RefusedCount, RefusedFree} {
							lower, pins, r := 1, 0, 0
							for i, c := range s {
								certain, possible := bruteSpread(s, i, w, sp, o, k, rd)
								if c.Refused {
									require.EqualValues(t, possible, p.before[rd][r], "seed %d w %d sp %d o %d %v %v: refusal on line %d", seed, w, sp, o, k, rd, c.Line)
									r++
								} else if certain+1 > lower {
									lower, pins = certain+1, 1
								} else if certain+1 == lower {
									pins++
								}
							}
							assert.Equal(t, lower, p.lower[rd], "seed %d w %d sp %d o %d %v %v", seed, w, sp, o, k, rd)
							assert.Equal(t, pins, p.lowerPins[rd], "seed %d w %d sp %d o %d %v %v", seed, w, sp, o, k, rd)
						}
					}
				}
			}
		}
	}
}

// delayed replays hidden rules on arrivals up to maxDelay after each
// traffic instant, and returns the log of the instants sent.
func delayed(hidden []rule.Rule, seed uint64, maxDelay time.Duration) []Send {
	return delayedN(hidden, seed, maxDelay, 1500)
}

// delayedN is delayed on n calls of traffic.
func delayedN(hidden []rule.Rule, seed uint64, maxDelay time.Duration, n int) []Send {
	rng := rand.New(rand.NewPCG(seed, 9))
	ms := infertest.Traffic(rng, hidden[0], n)
	type call struct{ sent, arrived int64 }
	calls := make([]call, len(ms))
	for i, m := range ms {
		sent := m*int64(time.Millisecond) + int64(i) // distinct instants
		calls[i] = call{sent, sent + rng.Int64N(int64(maxDelay)+1)}
	}
	byArrival := slices.Clone(calls)
	slices.SortStableFunc(byArrival, func(a, b call) int { return cmp.Compare(a.arrived, b.arrived) })
	p := infertest.NewProvider(hidden, true)
	refused := map[int64]bool{}
	for _, c := range byArrival {
		refused[c.sent] = p.Call(c.arrived)
	}
	out := make([]Send, len(calls))
	for i, c := range calls {
		out[i] = Send{At: c.sent, Refused: refused[c.sent], Line: int64(i + 2)}
	}
	return out
}

// TestToleranceCoversTheDelay: on the send instants of calls delayed by
// up to 3 ms, every seed no contract fits exactly fits within a spread of
// at most 5 ms (the least rung covering 3 ms), the hidden contract among
// what that spread allows: each true N inside its rule's range whenever
// the rules found are the hidden ones. Without a delay, or with the
// ladder empty, no tolerance is tried.
func TestToleranceCoversTheDelay(t *testing.T) {
	hidden, err := rule.ParseList("5/1s,20/10s fixed")
	require.NoError(t, err)
	tried := 0
	for seed := range uint64(12) {
		s := delayed(hidden, seed, 3*time.Millisecond)
		res := Infer(s, Options{})
		if res.Fits[res.Best].Fits {
			assert.Nil(t, res.Tolerance, "seed %d", seed)
			continue
		}
		tried++
		tol := res.Tolerance
		require.NotNil(t, tol, "seed %d", seed)
		require.True(t, tol.Fits, "seed %d", seed)
		assert.LessOrEqual(t, tol.Spread, 5*time.Millisecond, "seed %d", seed)
		u := tol.ByReading[RefusedCount]
		require.True(t, u.Fits, "seed %d: the provider's reading fits", seed)
		assert.Positive(t, u.Absorbed, "seed %d: some call fits only thanks to the spread", seed)
		assert.LessOrEqual(t, u.Absorbed, len(s))
		if sameRules(u.Rules, []Rule{{Window: time.Second}, {Window: 10 * time.Second, Kind: rule.Fixed}}) {
			for k, r := range u.Rules {
				assert.True(t, r.Min <= hidden[k].Limit && (r.Max == 0 || hidden[k].Limit <= r.Max), "seed %d: %v in [%d, %d]", seed, hidden[k], r.Min, r.Max)
			}
			assert.True(t, u.OffsetMatters)
			assert.True(t, u.OffsetMin <= u.Offset && u.Offset <= u.OffsetMax)
		}
		none := Infer(s, Options{spreadGrid: []time.Duration{}})
		assert.Nil(t, none.Tolerance, "an empty ladder tries none")
	}
	t.Logf("%d of 12 seeds needed a tolerance", tried)
	assert.Positive(t, tried, "some seed needs a tolerance")
	assert.Nil(t, Infer(delayed(hidden, 1, 0), Options{}).Tolerance, "no delay, no tolerance")
}

// bruteSpreadCost is bruteSpread weighing each call by its cost.
func bruteSpreadCost(s []Send, i int, w, sp, o int64, k rule.Kind, rd Reading) (certain, possible int64) {
	for j := range s {
		one := []Send{s[i], s[j]}
		if j == i {
			continue
		}
		c, p := bruteSpread(one, 0, w, sp, o, k, rd)
		certain += int64(c) * s[j].Cost[0]
		possible += int64(p) * s[j].Cost[0]
	}
	return certain, possible
}

// TestSpreadCostPassMatchesBruteForce: a cost rule's bounds within a
// spread equal the oracle's: an accepted call needs N at least the units
// certainly before it plus its own, a refused one is explained by N below
// the units possibly before it plus its own; costs of 0 included.
func TestSpreadCostPassMatchesBruteForce(t *testing.T) {
	for seed := range uint64(15) {
		rng := rand.New(rand.NewPCG(seed, 3))
		var s []Send
		at := int64(-40)
		for i := range 50 {
			at += 2 * rng.Int64N(4)
			s = append(s, Send{At: at, Refused: rng.IntN(3) == 0, Line: int64(i + 1), Cost: []int64{rng.Int64N(6)}})
		}
		d := newSends(s)
		d.addCosts(s, []string{"tokens"})
		for _, w := range []int64{10, 20} {
			for _, sp := range []int64{2, 6} {
				for _, o := range []int64{-sp, 0, 2} {
					for _, k := range windowKinds {
						if k == rule.Sliding && o != 0 {
							continue
						}
						p := d.spreadCostPass(0, w, k, sp, o)
						for _, rd := range []Reading{RefusedCount, RefusedFree} {
							lower, r := int64(1), 0
							for i, c := range s {
								certain, possible := bruteSpreadCost(s, i, w, sp, o, k, rd)
								if c.Refused {
									require.Equal(t, possible+c.Cost[0]-1, p.wide[rd][r], "seed %d w %d sp %d o %d %v %v: refusal on line %d", seed, w, sp, o, k, rd, c.Line)
									r++
								} else {
									lower = max(lower, certain+c.Cost[0])
								}
							}
							assert.EqualValues(t, lower, p.lower[rd], "seed %d w %d sp %d o %d %v %v", seed, w, sp, o, k, rd)
						}
					}
				}
			}
		}
	}
}

// TestSingleAskedAlike: asked only whether a single rule fits within
// 5 ms (the check for a simpler contract beside an exact fit of two
// rules), the search that leaves out the sampled buckets and the covers
// of two or more answers as the whole search does, on delayed logs of
// buckets alone and beside windows, where one rule fits and where none
// does.
func TestSingleAskedAlike(t *testing.T) {
	contracts := []string{"6/1s burst 9", "7/1s burst 20,40/10s", "3/1s burst 5,20/10s fixed", "12/2s burst 4"}
	var fits, not int
	for _, c := range contracts {
		hidden, err := rule.ParseList(c)
		require.NoError(t, err)
		for seed := range uint64(infertest.Seeds(3, 12)) {
			d := newSends(delayedN(hidden, seed, 3*time.Millisecond, 400))
			spreads := []time.Duration{simplerSpread}
			whole := tolerateAs(d, windowGrid, spreads, [2]int{2, 2}, [2][]seedBucket{}, bucketSpread, false)
			single := tolerateAs(d, windowGrid, spreads, [2]int{2, 2}, [2][]seedBucket{}, bucketSpread, true)
			require.Equal(t, whole.Fits, single.Fits, "%s, seed %d", c, seed)
			if whole.Fits {
				fits++
			} else {
				not++
			}
		}
	}
	t.Logf("one rule fits on %d logs, none on %d", fits, not)
	assert.Positive(t, fits)
	assert.Positive(t, not)
}
