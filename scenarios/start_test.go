package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/simulate"
)

const midnight = "name: midnight\nrules: [5/1d fixed]\nstrategies: [combined]\ncallers: 10\ncall_duration: 0\nseed: 1\narrivals:\n  pattern: all-at-once\n  start: "

// TestStartAtAWallClockInstant: arrivals.start takes an instant with its
// zone as well as a duration from the epoch; the run then starts there,
// so a daily fixed window resets at that day's midnight: ten callers half
// a second before midnight under 5/1d fixed all go within that half
// second, none breaking the rule.
func TestStartAtAWallClockInstant(t *testing.T) {
	s, err := Parse("m.yaml", []byte(midnight+"2026-03-10T23:59:59.5Z\n"), noFiles)
	require.NoError(t, err)
	want := time.Date(2026, 3, 10, 23, 59, 59, 500_000_000, time.UTC).UnixNano()
	assert.EqualValues(t, want, s.Arrivals.Start)
	assert.True(t, s.Arrivals.Wall)
	res, err := simulate.Run(&s.Scenario, simulate.Options{})
	require.NoError(t, err)
	st := res.Strategies[0]
	require.Len(t, st.Sends, 10)
	assert.Zero(t, st.Rules[0].Violations)
	assert.GreaterOrEqual(t, st.Sends[0], want)
	assert.Less(t, st.Sends[9]-want, int64(600*time.Millisecond), "the second five go at midnight, not a day later")

	d, err := Parse("m.yaml", []byte(midnight+"20h\n"), noFiles)
	require.NoError(t, err)
	assert.Equal(t, 20*time.Hour, d.Arrivals.Start)
	assert.False(t, d.Arrivals.Wall)

	for value, msg := range map[string]string{
		"2026-03-10T23:59:59.5": "m.yaml:9: arrivals.start: 2026-03-10T23:59:59.5 has no zone: write Z for UTC (2026-03-10T23:59:59.5Z) or its offset (+01:00)",
		"2026-13-10T00:00:00Z":  `m.yaml:9: arrivals.start: "2026-13-10T00:00:00Z" is neither a duration such as 20h nor an instant such as 2026-03-10T20:00:00Z`,
		"1969-12-31T23:00:00Z":  "m.yaml:9: arrivals.start: 1969-12-31T23:00:00Z is outside 1970 to 2262, the instants a run can hold",
	} {
		_, err := Parse("m.yaml", []byte(midnight+value+"\n"), noFiles)
		require.Error(t, err, value)
		assert.Equal(t, msg, err.Error(), value)
	}
}
