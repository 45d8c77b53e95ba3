package realrun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

func TestJudgeShortfall(t *testing.T) {
	const ms = int64(time.Millisecond)
	rules := []rule.Rule{{Limit: 2, Window: 100 * time.Millisecond}, {Limit: 10, Window: time.Second}}
	// The third send is 3 ms early against the first, the fifth 1 ms early
	// against the third: the worst shortfall is 3 ms.
	sends := []int64{0, 10 * ms, 97 * ms, 150 * ms, 196 * ms}
	got, first, last, err := judge(sends, rules, rule.HalfOpen)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, int64(0), first, "first")
	assert.Equal(t, 196*ms, last, "last")
	assert.Equal(t, int64(2), got[0].Violations, "rule 0: violations in %+v", got[0])
	assert.Equal(t, 3*time.Millisecond, got[0].Shortfall, "rule 0: shortfall in %+v", got[0])
	assert.Equal(t, int64(3), got[0].MaxInWindow, "rule 0: max in window in %+v", got[0])
	assert.Equal(t, rules[1], got[1].Rule, "rule 1: rule in %+v", got[1])
	assert.Zero(t, got[1].Violations, "rule 1: violations in %+v", got[1])
	assert.Zero(t, got[1].Shortfall, "rule 1: shortfall in %+v", got[1])
	// Exactly W apart is no violation under the half-open contract, and a
	// violation under the closed one, short by nothing.
	even := []int64{0, 0, 100 * ms}
	got, _, _, err = judge(even, rules[:1], rule.HalfOpen)
	require.NoError(t, err)
	assert.Zero(t, got[0].Violations, "half-open: %+v", got[0])
	got, _, _, err = judge(even, rules[:1], rule.Closed)
	require.NoError(t, err)
	assert.Equal(t, int64(1), got[0].Violations, "closed: violations in %+v", got[0])
	assert.Zero(t, got[0].Shortfall, "closed: shortfall in %+v", got[0])
	got, first, last, err = judge(nil, rules, rule.HalfOpen)
	if assert.NoError(t, err, "no sends") {
		assert.Len(t, got, 2, "no sends")
		assert.Zero(t, first, "no sends: first")
		assert.Zero(t, last, "no sends: last")
	}
}
