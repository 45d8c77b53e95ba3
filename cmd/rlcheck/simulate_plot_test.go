package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSimulatePlot(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := run(t, "", "simulate", "seed", "--plot", dir, "--plot-runs", "20", "--plot-format", "svg")
	require.Equal(t, exitOK, code, "exit code; stderr %q", errOut)
	for _, name := range []string{"timeline-sequential", "timeline-combined", "comparison", "distribution", "waits"} {
		p := filepath.Join(dir, name+".svg")
		if st, err := os.Stat(p); assert.NoError(t, err) {
			assert.NotZero(t, st.Size(), "%s is empty", p)
		}
		assert.Contains(t, errOut, "wrote "+p, "stderr does not list %s", p)
	}
	_, errOut, code = run(t, "", "simulate", "seed", "--plot", dir, "--plot-format", "gif")
	assert.Equal(t, exitUsage, code, "gif: exit code")
	assert.Contains(t, errOut, "--plot-format", "gif")
}

// TestSimulatePlotSaysWhatItRuns: --plot without --runs runs --plot-runs
// seeds (1,000 by default, a hundred times the report's run), and says so
// on stderr before it starts; with --runs it reuses the report's runs and
// runs nothing more.
func TestSimulatePlotSaysWhatItRuns(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := run(t, "", "simulate", "seed", "--plot", dir, "--plot-runs", "20", "--plot-format", "svg", "--strategies", "combined")
	require.Equal(t, exitOK, code, "exit code; stderr %q", errOut)
	assert.Contains(t, errOut, "charts: running 20 seeds (1 to 20) for the distribution across seeds; --plot-runs sets the count")
	assert.Less(t, strings.Index(errOut, "charts: running"), strings.Index(errOut, "wrote "), "said after the work: %q", errOut)
	_, errOut, code = run(t, "", "simulate", "seed", "--plot", dir, "--runs", "5", "--plot-format", "svg", "--strategies", "combined")
	require.Equal(t, exitOK, code, "exit code; stderr %q", errOut)
	assert.NotContains(t, errOut, "charts: running", "--runs: the report's runs are reused")
}
