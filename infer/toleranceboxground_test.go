package infer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rlcheck/rlcheck/infer"
	"github.com/rlcheck/rlcheck/infer/infertest/serveprobe"
	"github.com/rlcheck/rlcheck/rule"
)

// TestSecondBucketNarrowedByBoxes: client's logs of two buckets (11/5s
// burst 15 and 81/1m burst 146 on calls; 40 tokens/10s burst 67 and 123
// tokens/1m burst 149), calls 0 to 5 ms late, where beside the first the
// second's region within the delay, bounded by the refusals certain and
// possible to take from it, spans bursts 127 to 146 (131 to 218 on
// tokens): narrowed box by box, the refusals sorted over each box, both
// come back within 10%.
func TestSecondBucketNarrowedByBoxes(t *testing.T) {
	for _, c := range []struct {
		seed uint64
		c    serveprobe.Case
		want string
	}{
		{69, serveprobe.Case{Kind: rule.Bucket}, "11/5s burst 15,81/1m burst 146"},
		{39, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "40 tokens/10s burst 67,123 tokens/1m burst 149"},
	} {
		hidden, _ := probed(t, c.seed, c.c, c.want)
		f := clientRecovered(t, c.seed, c.c, c.want)
		s := score(hidden, hidden, f.Fit)
		assert.True(t, s.narrow, "seed %d: found %s %v: %s", c.seed, infer.RulesText(f.Rules), ranges(f.Fit), s.why)
	}
}

// TestTargetsWidenedToTheRegions: a client's log of three token buckets
// (90 tokens/2s burst 139, 310 tokens/15s burst 526 and 772 tokens/1m
// burst 1078), calls 0 to 5 ms late, where beside the others' points a
// bucket is left refusals the hidden one had room for, and no three fits
// the hidden ones: with each bucket's set widened to what a bucket of
// its region may explain, every hidden bucket lies inside the ranges of
// one. (TestThirdBucketOnCallsBesideTwoThatClaimAll needs it too.)
func TestTargetsWidenedToTheRegions(t *testing.T) {
	clientRecovered(t, 52, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "90 tokens/2s burst 139,310 tokens/15s burst 526,772 tokens/1m burst 1078")
}
