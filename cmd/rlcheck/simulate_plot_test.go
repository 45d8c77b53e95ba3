package main

import (
	"os"
	"path/filepath"
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
