package infer

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// providerLog replays traffic through a provider holding hidden, under
// the reading rd.
func providerLog(t *testing.T, hidden string, rd Reading, seed uint64) []Send {
	t.Helper()
	rules, err := rule.ParseList(hidden)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 3))
	calls := infertest.Replay(infertest.NewProvider(rules, rd == RefusedCount), infertest.Traffic(rng, rules[0], 3000))
	out := make([]Send, len(calls))
	for i, c := range calls {
		out[i] = Send{At: c.At, Refused: c.Refused, Line: int64(i + 2)}
	}
	return out
}

// TestPruneDropsARedundantRule: a fit holding the provider's rule and one
// that refuses nothing on its own loses the second, under both readings;
// a fit whose rules each explain refusals the other does not keeps both.
func TestPruneDropsARedundantRule(t *testing.T) {
	for _, rd := range []Reading{RefusedCount, RefusedFree} {
		s := providerLog(t, "7/1s", rd, 1)
		f := Fit{Reading: rd, Fits: true, Rules: []Rule{
			{Window: 10 * time.Second, Kind: rule.Sliding, Min: 100000, Explains: 3},
			{Window: time.Second, Kind: rule.Sliding, Min: 7, Explains: 100},
		}}
		f.verify(s, nil)
		require.True(t, f.Holds(), rd)
		f.prune(s, nil)
		require.Len(t, f.Rules, 1, rd)
		assert.Equal(t, "7/1s", f.Rules[0].Rule().String(), rd)
		assert.True(t, f.Smallest, rd)

		both := providerLog(t, "7/1s,40/10s", rd, 2)
		g := Fit{Reading: rd, Fits: true, Rules: []Rule{
			{Window: time.Second, Kind: rule.Sliding, Min: 7},
			{Window: 10 * time.Second, Kind: rule.Sliding, Min: 40},
		}}
		g.verify(both, nil)
		require.True(t, g.Holds(), rd)
		g.prune(both, nil)
		assert.Len(t, g.Rules, 2, "%v: each rule explains refusals the other does not", rd)
	}
}
