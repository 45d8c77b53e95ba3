package simulate

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/workload"
)

// TestRunsUsageShowsMeans: --usage over many runs adds each strategy's
// mean sends and mean duration, as RunSeeds computed them; without it
// the report is the violations table alone.
func TestRunsUsageShowsMeans(t *testing.T) {
	s := &workload.Scenario{
		Name: "means", Rules: []rule.Rule{{Limit: 5, Window: time.Second, Kind: rule.Fixed}},
		Strategies: []string{"combined", "combined-sliding"}, Callers: 10, Workers: 1,
		Arrivals: workload.Arrivals{Kind: workload.AllAtOnce, Start: 900 * time.Millisecond},
		Lateness: workload.Dist{Kind: workload.Uniform, A: 100 * time.Microsecond, B: 3 * time.Millisecond}, Seed: 1,
	}
	rs, err := RunSeeds(s, 20, Options{})
	require.NoError(t, err)
	var plain, usage bytes.Buffer
	require.NoError(t, ReportRuns(&plain, rs, ReportOptions{}))
	require.NoError(t, ReportRuns(&usage, rs, ReportOptions{Usage: true}))
	require.True(t, strings.HasPrefix(usage.String(), plain.String()))
	extra := strings.TrimPrefix(usage.String(), plain.String())
	assert.Contains(t, extra, "mean over the 20 runs")
	for _, st := range rs.Strategies {
		assert.Regexp(t, "(?m)^"+st.Name+" +"+strconv.FormatFloat(st.MeanSends, 'f', 2, 64)+" +"+durationText(st.MeanDuration)+"$", extra)
	}
	assert.Less(t, rs.Strategies[0].MeanDuration, rs.Strategies[1].MeanDuration, "the fixed-aware limiter sends the burst sooner")
}
