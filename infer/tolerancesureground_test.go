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

// TestSecondBucketNarrowedBySureDrains: client's logs of two buckets
// (reaching serve 0 to 5 ms late, infer told the delay), where the second
// bucket's burst range, bounded from below by the accepted calls alone,
// spanned 42 to 99 (seed 6), 55 to 92 (seed 48) and 159 to 224 tokens
// (seed 15): the refusals the first bucket explains and the second
// certainly had room for took from it, and its ranges come out narrow.
// On seeds 84 and 40 (tokens) the burst range spanned 61 to 80 and 296
// to 734 with those refusals reckoned at the region's least rate;
// reckoned at each slice of its rates' own least, more are certain and
// it comes out narrow too.
func TestSecondBucketNarrowedBySureDrains(t *testing.T) {
	for _, c := range []struct {
		seed uint64
		cost bool
		want string
	}{
		{6, false, "11/5s burst 13,41/30s burst 54"},
		{48, false, "17/2s burst 20,43/10s burst 76"},
		{15, true, "50 tokens/1s burst 92,169 tokens/5s burst 197"},
		{84, false, "14/2s burst 16,53/15s burst 77"},
		{40, true, "100 tokens/10s burst 111,406 tokens/1m burst 615"},
	} {
		hidden := serveprobe.Contract(rand.New(rand.NewPCG(c.seed, 30)), serveprobe.Case{Kind: rule.Bucket, Cost: c.cost})
		want, err := rule.ParseList(c.want)
		require.NoError(t, err)
		require.Equal(t, want, hidden)
		run, err := serveprobe.Probe(hidden, serveprobe.Options{Seed: c.seed, Budget: groundBudget, MaxDelay: groundDelay})
		require.NoError(t, err)
		res := infer.Infer(run.ClientLog(), infer.Options{Units: run.Units(), Delay: groundDelay})
		require.NotNil(t, res.Tolerance)
		f := res.Tolerance.ByReading[infer.RefusedCount].Fit
		s := score(hidden, hidden, f)
		assert.True(t, s.narrow, "seed %d: found %s %v: %s", c.seed, infer.RulesText(f.Rules), ranges(f), s.why)
	}
}
