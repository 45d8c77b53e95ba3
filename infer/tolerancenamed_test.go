package infer_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer"
	"github.com/rlcheck/rlcheck/infer/infertest/serveprobe"
	"github.com/rlcheck/rlcheck/rule"
)

// TestSpreadBucketNamedInsideItsRanges: a client's log of two buckets
// (seed 84, reaching serve 0 to 5 ms late, infer told the delay) where no
// rate named in the second bucket's range kept its burst range: the rule
// was named at the candidate's own point, 529647/24h burst 26, outside
// its ranges of 294006 to 367898 a day and a burst of 61 to 80. Every
// bucket rule found, under each reading, lies inside its own ranges.
func TestSpreadBucketNamedInsideItsRanges(t *testing.T) {
	const seed = 84
	hidden := serveprobe.Contract(rand.New(rand.NewPCG(seed, 30)), serveprobe.Case{Kind: rule.Bucket})
	run, err := serveprobe.Probe(hidden, serveprobe.Options{Seed: seed, Budget: groundBudget, MaxDelay: groundDelay})
	require.NoError(t, err)
	res := infer.Infer(run.ClientLog(), infer.Options{Units: run.Units(), Delay: groundDelay})
	require.NotNil(t, res.Tolerance)
	buckets := 0
	for _, rd := range []infer.Reading{infer.RefusedCount, infer.RefusedFree} {
		for _, r := range res.Tolerance.ByReading[rd].Fit.Rules {
			if r.Kind != rule.Bucket {
				continue
			}
			buckets++
			perDay := int64(r.Rate) * int64(24*time.Hour/r.Window)
			assert.True(t, r.RateMin <= perDay && (r.RateOpen || perDay <= r.RateMax),
				"%v: %d a day outside [%d, %d]", r, perDay, r.RateMin, r.RateMax)
			assert.True(t, r.Min <= r.Burst && (r.Max == 0 || r.Burst <= r.Max),
				"%v: burst %d outside [%d, %d]", r, r.Burst, r.Min, r.Max)
		}
	}
	assert.Positive(t, buckets, "no bucket rule found")
}
