package infer_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer"
	"github.com/rlcheck/rlcheck/infer/infertest/serveprobe"
	"github.com/rlcheck/rlcheck/rule"
)

// TestSecondBucketNarrowedBySureDrains: client's logs of two buckets on
// calls (reaching serve 0 to 5 ms late, infer told the delay), where the
// second bucket's burst range, bounded from below by the accepted calls
// alone, spanned 42 to 99 (seed 6) and 22 to 36 (seed 1): the refusals
// the first bucket explains and the second certainly had room for took
// from it, and its ranges come out narrow.
func TestSecondBucketNarrowedBySureDrains(t *testing.T) {
	for _, c := range []struct {
		seed uint64
		want string
	}{
		{6, "11/5s burst 13,41/30s burst 54"},
		{1, "9/10s burst 14,18/30s burst 28"},
	} {
		hidden := serveprobe.Contract(rand.New(rand.NewPCG(c.seed, 30)), serveprobe.Case{Kind: rule.Bucket})
		want, err := rule.ParseList(c.want)
		require.NoError(t, err)
		require.Equal(t, want, hidden)
		run, err := serveprobe.Probe(hidden, serveprobe.Options{Seed: c.seed, Budget: groundBudget, MaxDelay: groundDelay})
		require.NoError(t, err)
		res := infer.Infer(run.ClientLog(), infer.Options{Delay: groundDelay})
		require.NotNil(t, res.Tolerance)
		f := res.Tolerance.ByReading[infer.RefusedCount].Fit
		s := score(hidden, hidden, f)
		t.Logf("seed %d: found %s %v", c.seed, infer.RulesText(f.Rules), ranges(f))
		assert.True(t, s.narrow, "seed %d: found %s %v: %s", c.seed, infer.RulesText(f.Rules), ranges(f), s.why)
	}
}
