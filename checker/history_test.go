package checker

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

// drainRings empties ringPools and returns what they held.
func drainRings() []*ring {
	var out []*ring
	for k := range ringPools {
		for {
			b, ok := ringPools[k].Get().(*ring)
			if !ok {
				break
			}
			out = append(out, b)
		}
	}
	return out
}

// TestRingNeverPooledWhileLive: the memory a history gives back (as it
// grows, on Idle, when Check ends) is never memory a live checker still
// uses. Two checkers fed in turn, with Checks and Idles between their sends
// taking and giving back histories of the same sizes, give the reports of
// checkers run alone, and the pools then hold nothing either still holds,
// nor anything twice.
func TestRingNeverPooledWhileLive(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	reused, idled := 0, 0
	for iter := range 200 {
		cfg := Config{
			Rules:    []rule.Rule{{Limit: 1 + rng.IntN(4), Window: time.Duration(1 + rng.IntN(20))}, {Limit: 50 + rng.IntN(300), Window: time.Duration(100 + rng.IntN(400))}},
			Boundary: rule.Boundary(rng.IntN(2)),
			List:     2,
		}
		a, b := randomLog(rng, 200+rng.IntN(800), 3), randomLog(rng, 200+rng.IntN(800), 3)
		gap := int64(0) // now and then longer than every window, for Idle
		for i := range b {
			if rng.IntN(100) == 0 {
				gap += 1000
			}
			b[i] += gap
		}
		wantA, err := Check(a, cfg)
		require.NoError(t, err)
		wantB, err := Check(b, cfg)
		require.NoError(t, err)
		ca, cb := New(cfg), New(cfg)
		for i := range max(len(a), len(b)) {
			if i < len(a) {
				require.NoError(t, ca.Observe(a[i], int64(i)))
			}
			if rng.IntN(8) == 0 {
				_, err := Check(randomLog(rng, rng.IntN(600), 3), cfg)
				require.NoError(t, err)
			}
			if i < len(b) {
				if rng.IntN(2) == 0 && cb.Idle(b[i]) {
					idled++
				}
				require.NoError(t, cb.Observe(b[i], int64(i)))
			}
		}
		require.Equal(t, wantA, ca.Report(), "iteration %d", iter)
		require.Equal(t, wantB, cb.Report(), "iteration %d", iter)
		seen := map[*int64]bool{}
		for _, p := range drainRings() {
			reused++
			require.False(t, seen[&p.at[0]], "iteration %d: a ring is in the pools twice, for two histories to share", iter)
			seen[&p.at[0]] = true
			for _, c := range []*Checker{ca, cb} {
				if c.hist.buf != nil {
					require.NotSame(t, &c.hist.buf.at[0], &p.at[0], "iteration %d: a live history is in the pool", iter)
					require.NotSame(t, &c.hist.buf.ref[0], &p.ref[0], "iteration %d: a live history is in the pool", iter)
				}
			}
		}
	}
	require.Greater(t, reused, 200, "the pools were hardly used: the test does not exercise them")
	require.Greater(t, idled, 200, "too few Idles: the test does not exercise them")
}
