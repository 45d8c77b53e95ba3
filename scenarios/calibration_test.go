package scenarios

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// TestSeedTracksTheRecordedRuns compares the seed scenario, send by send,
// with the real asyncio runs it models: same number of sends, the same
// verdict from the checker, and every send within a few milliseconds of
// the recorded one. It is what the lateness and cost model is tuned to.
func TestSeedTracksTheRecordedRuns(t *testing.T) {
	s, err := Shipped("seed")
	require.NoError(t, err)
	for _, tt := range []struct{ strategy, fixture string }{
		{"sequential", "asyncio-sequential.txt"},
		{"combined", "asyncio-combined.txt"},
	} {
		f, err := os.Open("../testdata/fixtures/" + tt.fixture)
		require.NoError(t, err)
		recorded, err := ReadTimes(tt.fixture, f)
		f.Close()
		require.NoError(t, err)
		st, _ := catalog.Lookup(tt.strategy)
		res, err := simulate.RunStrategy(&s.Scenario, st, s.Seed, simulate.Options{})
		require.NoError(t, err)
		require.Len(t, res.Sends, len(recorded), "%s: sends, against the recorded run", tt.strategy)
		want, _ := checker.Check(recorded, checker.Config{Rules: s.Rules})
		for i, rr := range res.Rules {
			assert.Equal(t, want.Rules[i].Violations, rr.Violations, "%s %v: violations against the recorded run", tt.strategy, rr.Rule)
			assert.Equal(t, want.Rules[i].MaxInWindow, rr.MaxInWindow, "%s %v: max in a window against the recorded run", tt.strategy, rr.Rule)
		}
		const tolerance = 10 * time.Millisecond
		for i := range recorded {
			d := time.Duration(res.Sends[i] - recorded[i]).Abs()
			assert.LessOrEqual(t, d, tolerance, "%s send %d: at %d ns, recorded %d ns", tt.strategy, i+1, res.Sends[i], recorded[i])
		}
	}
}
