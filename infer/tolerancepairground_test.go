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

// TestTwoTokenBucketsWithinTheDelay: a client's log of two token buckets
// (60 tokens/1s burst 88 and 310 tokens/10s burst 578, calls reaching
// serve 0 to 5 ms late), where every refusal taking from the first
// bucket lets it alone explain them all and the sampled bursts miss the
// second: paired on what the first explains with no refusal taking from
// it, a contract of two token buckets fits within the delay, each hidden
// bucket inside the ranges of one (the second's are wide: the refusals
// the first explains may take from it or not).
func TestTwoTokenBucketsWithinTheDelay(t *testing.T) {
	hidden, res := clientTokenBuckets(t, 82, "60 tokens/1s burst 88,310 tokens/10s burst 578")
	tol := res.Tolerance
	require.NotNil(t, tol)
	f := tol.ByReading[infer.RefusedCount]
	require.True(t, f.Fits)
	assert.LessOrEqual(t, f.Spread, groundDelay)
	assert.Len(t, f.Rules, 2, "found %s", infer.RulesText(f.Rules))
	s := score(hidden, hidden, f.Fit)
	assert.True(t, s.recovered, "found %s %v: %s", infer.RulesText(f.Rules), ranges(f.Fit), s.why)
}

// TestToleranceBucketsAreBounded: a client's log of two token buckets
// (180 tokens/5s burst 226 and 371 tokens/15s burst 705) whose covers
// within 5 ms keep losing a bucket that fits nowhere once bounded: a
// cover is reported only with each bucket's ranges its region's, never
// one the refits ran out on.
func TestToleranceBucketsAreBounded(t *testing.T) {
	_, res := clientTokenBuckets(t, 31, "180 tokens/5s burst 226,371 tokens/15s burst 705")
	require.NotNil(t, res.Tolerance)
	for _, f := range res.Tolerance.ByReading {
		for _, r := range f.Rules {
			if r.Kind == rule.Bucket {
				assert.True(t, r.Rate > 0 && r.RateMin > 0 && r.RateMin <= r.RateMax && r.Min > 0, "%v: %s %v", f.Reading, infer.RulesText([]infer.Rule{r}), ranges(f.Fit))
			}
		}
	}
}

// clientTokenBuckets draws the token-bucket case's hidden contract for
// seed, requires it to be want, probes it through serve and infers it
// back from the client's log (calls 0 to groundDelay late).
func clientTokenBuckets(t *testing.T, seed uint64, want string) ([]rule.Rule, *infer.Result) {
	hidden := serveprobe.Contract(rand.New(rand.NewPCG(seed, 30)), serveprobe.Case{Kind: rule.Bucket, Cost: true})
	rules, err := rule.ParseList(want)
	require.NoError(t, err)
	require.Equal(t, rules, hidden)
	run, err := serveprobe.Probe(hidden, serveprobe.Options{Seed: seed, Budget: groundBudget, MaxDelay: groundDelay})
	require.NoError(t, err)
	return hidden, infer.Infer(run.ClientLog(), infer.Options{Units: run.Units()})
}
