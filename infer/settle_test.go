package infer

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// TestSameRuleTwiceIsOneRule: a log replayed through 60 tokens/1s burst
// 120 (99 calls at a random pace, 45 refused) once came back as that rule
// twice, called the smallest set, which a contract file then refused.
func TestSameRuleTwiceIsOneRule(t *testing.T) {
	log, err := Read("bucket-twice.csv", func() (io.Reader, error) { return os.Open("testdata/bucket-twice.csv") },
		ReadOptions{Log: sendlog.Options{Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens"}}}})
	require.NoError(t, err)
	res := Infer(log.Sends[log.Keys[0]], Options{Units: log.Units})
	f := res.Fits[res.Best]
	require.True(t, f.Fits)
	assert.Equal(t, "60 tokens/1s burst 120", RulesText(f.Rules))
	assert.True(t, f.Smallest, "one rule is the smallest contract that explains a refusal")
}

// TestSettle: rules that print the same are one rule, and a cover of
// several rules is called the smallest only where the exact bucket search
// ruled out a single bucket (two rules) and a window beside a bucket
// (three rules); sets of two buckets are never ruled out.
func TestSettle(t *testing.T) {
	bucket := Rule{Kind: rule.Bucket, Unit: "tokens", Min: 60, Max: 60, perDay: 60 * 86400, Burst: 120}
	window := Rule{Window: time.Second, Min: 5, Max: 5}
	minute := Rule{Window: time.Minute, Min: 50, Max: 50}
	proved := bucketProof{single: true, pairs: true}
	f := Fit{Fits: true, Smallest: true, Rules: []Rule{bucket, bucket}}
	f.settle(bucketProof{})
	assert.Len(t, f.Rules, 1)
	assert.True(t, f.Smallest)

	f = Fit{Fits: true, Smallest: true, Rules: []Rule{window, bucket}}
	f.settle(proved)
	assert.True(t, f.Smallest, "no single bucket fits, and the windows were searched exhaustively")

	f = Fit{Fits: true, Smallest: true, Rules: []Rule{window, bucket}}
	f.settle(bucketProof{pairs: true})
	assert.False(t, f.Smallest)
	assert.Equal(t, unprovedSingle, f.Unproved)

	f = Fit{Fits: true, Smallest: true, Rules: []Rule{window, minute, bucket}}
	f.settle(proved)
	assert.False(t, f.Smallest, "two buckets are not searched at every rate")
	assert.Equal(t, unprovedBuckets, f.Unproved)

	f = Fit{Fits: true, Smallest: true, Rules: []Rule{window, minute, bucket}}
	f.settle(bucketProof{single: true})
	assert.Equal(t, unprovedPairs, f.Unproved)

	f = Fit{Fits: true, Smallest: false, Unproved: unprovedGreedy, Rules: []Rule{window, minute}}
	f.settle(proved)
	assert.Equal(t, unprovedGreedy, f.Unproved)
}
