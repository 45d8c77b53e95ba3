package infer

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
)

// TestBucketReboundPastTheRounds: a small log of two token buckets whose
// rounds beside each other still move at the last one (the first bucket
// bounded beside a point of the second that moved since): every rate and
// burst of the grid that the oracle's replay fits beside the other as
// reported lies inside each bucket's ranges.
func TestBucketReboundPastTheRounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(110, 53))
	s := twoBucketLog(rng, true)
	f := Infer(s, Options{Units: []string{infertest.Tokens}}).Fits[RefusedCount]
	require.Len(t, f.Rules, 2)
	rates, bursts := regionGrid()
	var points int
	for k, r := range f.Rules {
		other := f.Rules[1-k]
		ex := oracleExplained(s, other.perDay, int64(other.Burst), RefusedCount)
		for _, b := range bursts {
			for _, q := range rates {
				if !oracleFits(s, q, b, RefusedCount, func(i int) bool { return !ex[i] }) {
					continue
				}
				points++
				assert.True(t, r.RateMin <= q && (r.RateOpen || q <= r.RateMax) && r.Min <= int(b) && (r.Max == 0 || int(b) <= r.Max),
					"%d a day burst %d fits beside the other, outside %s rate [%d, %d] burst [%d, %d]", q, b, r.Rule(), r.RateMin, r.RateMax, r.Min, r.Max)
			}
		}
	}
	assert.Positive(t, points)
}
