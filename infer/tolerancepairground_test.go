package infer_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer"
	"github.com/rlcheck/rlcheck/infer/infertest"
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

// TestSecondBucketBesideANearPick: a client's log of two token buckets
// (110 tokens/5s burst 134 and 413 tokens/30s burst 541, calls 0 to 5 ms
// late), where the bucket sampled nearest the first sits two bursts
// above it at a lower rate and, every refusal taking from it, leaves
// refusals only the first explains: beside it nothing fits. Taking what
// the first's unit explains at the bursts just below as explained, the
// second is found, the first again beside it, and both are recovered.
func TestSecondBucketBesideANearPick(t *testing.T) {
	clientRecovered(t, 6, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "110 tokens/5s burst 134,413 tokens/30s burst 541")
}

// TestBucketsPastTheSampledBursts: a client's log of two token buckets
// (170 tokens/1s burst 318 and 812 tokens/30s burst 1315, calls 0 to
// 5 ms late) whose bursts lie past the 64 the sampled search tries (up
// to about 260 tokens): sampled on past them where nothing fits, both
// are recovered.
func TestBucketsPastTheSampledBursts(t *testing.T) {
	clientRecovered(t, 28, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "170 tokens/1s burst 318,812 tokens/30s burst 1315")
}

// TestSecondBucketAtTheOtherEnd: a client's log of two token buckets
// (40 tokens/1s burst 61 and 206 tokens/10s burst 351, calls 0 to 5 ms
// late) where, beside the bucket sampled nearest the first, the second
// taken at the least rate of its region explains too little for the
// first to fit beside it: taken at its most rate, it does, and both are
// recovered within the delay.
func TestSecondBucketAtTheOtherEnd(t *testing.T) {
	f := clientRecovered(t, 76, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "40 tokens/1s burst 61,206 tokens/10s burst 351")
	assert.LessOrEqual(t, f.Spread, groundDelay)
}

// TestTwoBucketsWhereThreeRulesFit: a client's log of two token buckets
// (50 tokens/2s burst 90 and 162 tokens/30s burst 301, calls 0 to 5 ms
// late) where the sampled buckets and the windows give a cover of three
// rules within 5 ms (a window on calls among them): paired there too, the
// two hidden buckets fit, and the fewer rules are reported.
func TestTwoBucketsWhereThreeRulesFit(t *testing.T) {
	clientRecovered(t, 53, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "50 tokens/2s burst 90,162 tokens/30s burst 301")
}

// TestThirdBucketBesideTwoPicks: a client's log of three token buckets
// (20 tokens/1s burst 34, 43 tokens/5s burst 48 and 323 tokens/1m burst
// 621, calls 0 to 5 ms late) that no cover of the sampled and paired
// buckets fits: beside each two picked, the bucket that explains every
// refusal both leave is sought, and all three are recovered (within
// 50 ms; within 5 ms nothing fits still). It runs in full only (about
// 1.5 s).
func TestThirdBucketBesideTwoPicks(t *testing.T) {
	if !infertest.Full() {
		t.Skip("RLCHECK_FULL=1")
	}
	clientRecovered(t, 64, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "20 tokens/1s burst 34,43 tokens/5s burst 48,323 tokens/1m burst 621")
}

// TestThirdBucketOnCallsBesideTwoThatClaimAll: a client's log of three
// buckets on calls (5/1s burst 10, 13/5s burst 19 and 37/1m burst 56,
// calls 0 to 5 ms late) where the two buckets picked, every refusal
// taking from each, claim every refusal, yet fit nowhere together: the
// third is sought beside what each explains with only the other's
// refusals taking from it, the two sought again beside it, each three
// covered alone, and all three are recovered within the delay.
func TestThirdBucketOnCallsBesideTwoThatClaimAll(t *testing.T) {
	f := clientRecovered(t, 20, serveprobe.Case{Kind: rule.Bucket}, "5/1s burst 10,13/5s burst 19,37/1m burst 56")
	assert.LessOrEqual(t, f.Spread, groundDelay)
}

// TestThirdBucketOnCallsTheSecondSoughtFirst: a client's log of three
// buckets on calls (7/1s burst 7, 45/15s burst 81 and 97/1m burst 187,
// calls 0 to 5 ms late) where, beside the third found, the first bucket
// picked sought again last fits nowhere: sought again first, beside the
// third and the second, all three are recovered within the delay.
func TestThirdBucketOnCallsTheSecondSoughtFirst(t *testing.T) {
	f := clientRecovered(t, 89, serveprobe.Case{Kind: rule.Bucket}, "7/1s burst 7,45/15s burst 81,97/1m burst 187")
	assert.LessOrEqual(t, f.Spread, groundDelay)
}

// clientRecovered draws case c's hidden contract for seed, requires it
// to be want, probes it through serve, infers it back from the client's
// log as a user who logged there does, told the delay's bound
// (Options.Delay), asserts it fits and is recovered under "refused calls
// count", and returns that fit.
func clientRecovered(t *testing.T, seed uint64, c serveprobe.Case, want string) infer.ToleranceFit {
	hidden, run := probed(t, seed, c, want)
	res := infer.Infer(run.ClientLog(), infer.Options{Units: run.Units(), Delay: groundDelay})
	require.NotNil(t, res.Tolerance)
	f := res.Tolerance.ByReading[infer.RefusedCount]
	require.True(t, f.Fits)
	s := score(hidden, hidden, f.Fit)
	assert.True(t, s.recovered, "seed %d: found %s %v: %s", seed, infer.RulesText(f.Rules), ranges(f.Fit), s.why)
	t.Logf("seed %d: found %s %v", seed, infer.RulesText(f.Rules), ranges(f.Fit))
	return f
}
