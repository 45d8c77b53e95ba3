package checker

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

// TestInWindowAgainstBruteForce counts each rule's window at every send
// and between sends (gaps of exactly W among them) by the definition.
func TestInWindowAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rules := []rule.Rule{{Limit: 1, Window: 10}, {Limit: 3, Window: 25}, {Limit: 5, Window: 100}}
	for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
		for range 50 {
			ts := randomLog(rng, 60, 10)
			c := New(Config{Rules: rules, Boundary: b})
			for i, at := range ts {
				require.NoError(t, c.Observe(at, int64(i)))
				for _, now := range []int64{at, at + 5, at + 10, at + 25} {
					for r, ru := range rules {
						var want []int64
						for j := 0; j <= i; j++ {
							if b.Within(time.Duration(now-ts[j]), ru.Window) {
								want = append(want, ts[j])
							}
						}
						n, free := c.InWindow(r, now)
						require.Equal(t, int64(len(want)), n, "rule %v at %d after send %d (%v)", ru, now, i, b)
						if n >= int64(ru.Limit) {
							assert.Equal(t, want[len(want)-ru.Limit], free.At)
						}
					}
				}
			}
			if c.Idle(ts[len(ts)-1] + 200) {
				n, _ := c.InWindow(2, ts[len(ts)-1]+200)
				assert.Zero(t, n)
			}
		}
	}
}
