package strategies

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rlcheck/rlcheck/rule"
)

// TestLimitersRefuseKinds: a limiter built for a rule it cannot enforce
// yet stops at once rather than enforce a sliding rule; sliding cost rules
// it takes.
func TestLimitersRefuseKinds(t *testing.T) {
	for _, s := range []string{"5000/1h fixed", "10/1s burst 20", "100/1m first-call"} {
		r, err := rule.Parse(s)
		assert.NoError(t, err)
		want := "strategies: rule " + s + ": this limiter supports sliding rules only so far"
		assert.PanicsWithValue(t, want, func() { NewBook(r) }, s)
		assert.PanicsWithValue(t, want, func() { NewBucketWindow(r, 4) }, s)
		assert.PanicsWithValue(t, want, func() { NewWindowCounter(r) }, s)
		assert.PanicsWithValue(t, want, func() { NewFixedWindow(r) }, s)
	}
	assert.NotPanics(t, func() { NewBook(rule.Rule{Limit: 5, Window: 1e9}) })
	assert.NotPanics(t, func() { NewBook(rule.Rule{Limit: 5, Window: 1e9, Unit: "tokens"}) })
}
