package infer

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
					for _, k := range Kinds {
						if k == rule.Sliding && o != 0 {
							continue
						}
						for _, rd := range []Reading{RefusedCount, RefusedFree} {
							p := d.spreadPass(w, k, sp, o, rd)
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
