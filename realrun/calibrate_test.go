package realrun

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/workload"
)

// TestCalibrationReadsBackAsAScenario: the fragment, pasted into a
// scenario beside it, loads, and its distributions draw the samples.
func TestCalibrationReadsBackAsAScenario(t *testing.T) {
	dir := t.TempDir()
	rep := &Report{Scenario: &workload.Scenario{Name: "x"}, Speed: 1, Runs: []*Result{{Strategies: []StrategyResult{
		{Late: []time.Duration{300 * time.Microsecond, 1200 * time.Microsecond}, SendDelays: []time.Duration{20 * time.Millisecond}},
		{Late: []time.Duration{2 * time.Millisecond}, SendDelays: []time.Duration{21*time.Millisecond + 7}},
	}}}}
	frag := filepath.Join(dir, "measured.yaml")
	require.NoError(t, WriteCalibration(frag, rep))
	text, err := os.ReadFile(frag)
	require.NoError(t, err)
	assert.Contains(t, string(text), "lateness: empirical(measured-lateness.txt)\nsend_delay: empirical(measured-send-delay.txt)\n")

	scn := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(scn, append([]byte("rules: [5/1s]\nstrategies: [combined]\ncallers: 3\n"), text...), 0o644))
	s, err := scenarios.Load(scn)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{300 * time.Microsecond, 1200 * time.Microsecond, 2 * time.Millisecond}, s.Lateness.Samples.D)
	assert.Equal(t, []time.Duration{20 * time.Millisecond, 21*time.Millisecond + 7}, s.SendDelay[0].Samples.D, "exact to the nanosecond")
}
