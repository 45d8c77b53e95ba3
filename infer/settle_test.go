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
// several rules with a bucket among them is not called the smallest, since
// buckets are searched on a sample of rates and bursts.
func TestSettle(t *testing.T) {
	bucket := Rule{Kind: rule.Bucket, Unit: "tokens", Min: 60, Max: 60, perDay: 60 * 86400, Burst: 120}
	window := Rule{Window: time.Second, Min: 5, Max: 5}
	f := Fit{Fits: true, Smallest: true, Rules: []Rule{bucket, bucket}}
	f.settle()
	assert.Len(t, f.Rules, 1)
	assert.True(t, f.Smallest)

	f = Fit{Fits: true, Smallest: true, Rules: []Rule{window, bucket}}
	f.settle()
	assert.False(t, f.Smallest)
	assert.Equal(t, unprovedBuckets, f.Unproved)

	f = Fit{Fits: true, Smallest: true, Rules: []Rule{window, {Window: time.Minute, Min: 50, Max: 50}}}
	f.settle()
	assert.True(t, f.Smallest, "an exhaustive search over windows proves it")
}
