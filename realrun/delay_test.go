package realrun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/fixtures"
	"github.com/rlcheck/rlcheck/rule"
)

func TestWakeDelays(t *testing.T) {
	const ms = int64(time.Millisecond)
	two := []rule.Rule{{Limit: 2, Window: 100 * time.Millisecond}}
	for _, tc := range []struct {
		name  string
		sends []int64
		want  []time.Duration
	}{
		{"no window binds", []int64{0, 200 * ms, 400 * ms}, nil},
		{"on time", []int64{0, 0, 100 * ms, 100 * ms}, []time.Duration{0, 0}},
		{"late", []int64{0, 10 * ms, 103 * ms, 111 * ms}, []time.Duration{3 * time.Millisecond, time.Millisecond}},
		{"early is negative", []int64{0, 0, 99 * ms}, []time.Duration{-time.Millisecond}},
		{"free before the previous send", []int64{0, 0, 150 * ms, 160 * ms}, []time.Duration{50 * time.Millisecond}},
		{"idle gaps count too", []int64{0, 0, 500 * ms}, []time.Duration{400 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := WakeDelays(tc.sends, two)
			if tc.want == nil {
				assert.Empty(t, got, "sends %v", tc.sends)
			} else {
				assert.Equal(t, tc.want, got, "sends %v", tc.sends)
			}
		})
	}
	fixed := []rule.Rule{{Limit: 2, Window: 100 * time.Millisecond, Kind: rule.Fixed}}
	assert.Empty(t, WakeDelays([]int64{90 * ms, 90 * ms, 100 * ms, 100 * ms}, fixed), "a fixed window frees at its edge, not W after a send")
	assert.Equal(t, Spread{N: 5, Min: 1, P50: 3, P95: 5, Max: 5}, SpreadOf([]time.Duration{5, 1, 3, 2, 4}), "spread")
	assert.Equal(t, Spread{}, SpreadOf(nil), "spread of nothing")
}

// TestFixtureWakeDelays measures the recorded asyncio runs the way rlcheck
// run measures Go: run it with -v to see the figures docs/fidelity.md quotes.
func TestFixtureWakeDelays(t *testing.T) {
	rules := []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}}
	for _, name := range []string{"asyncio-combined.txt", "asyncio-sequential.txt"} {
		sends := fixtures.MustTimes(t, name)
		sp := SpreadOf(WakeDelays(sends, rules))
		require.NotZero(t, sp.N, "%s: no send waited for a window", name)
		t.Logf("%s: %d sends waited for a window; delay after it freed: min %v, p50 %v, p95 %v, max %v",
			name, sp.N, sp.Min, sp.P50, sp.P95, sp.Max)
	}
}
