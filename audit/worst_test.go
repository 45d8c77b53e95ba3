package audit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// TestSearchWorst: the worst-case search finds at least the known worst
// cases for 5/1s (x/time/rate with burst N: 9 in one second; fixed windows:
// 2N-1 = 9), and the scenario it writes replays to the same counts through
// the simulator.
func TestSearchWorst(t *testing.T) {
	opt := DefaultOptions(mustRules(t, "5/1s"))
	opt.Seeds, opt.NoSearch = 1, true
	opt.Strategies = []string{catalog.XRateChained, catalog.FixedWindow}
	opt.SearchDir, opt.SearchTries = t.TempDir(), 8
	rep, err := Run(opt)
	require.NoError(t, err)
	require.Len(t, rep.Worst, 2, "worst schedules")
	atLeast := map[string]int64{catalog.XRateChained: 9, catalog.FixedWindow: 2*5 - 1}
	for _, w := range rep.Worst {
		assert.GreaterOrEqual(t, w.Rules[0].MaxInWindow, atLeast[w.Strategy], "%s: most sends in one second", w.Strategy)
		sc, err := scenarios.Load(w.File)
		require.NoError(t, err, "%s", w.File)
		res, err := simulate.Run(&sc.Scenario, simulate.Options{})
		require.NoError(t, err, "%s", w.File)
		require.Len(t, res.Strategies, 1)
		got := res.Strategies[0]
		assert.Equal(t, w.Strategy, got.Name)
		assert.Equal(t, len(w.Times), len(got.Sends), "%s: sends through simulate", w.Strategy)
		assert.Equal(t, w.Rules[0].MaxInWindow, got.Rules[0].MaxInWindow, "%s: max in window through simulate", w.Strategy)
		assert.Equal(t, w.Rules[0].Violations, got.Rules[0].Violations, "%s: violations through simulate", w.Strategy)
	}
}
