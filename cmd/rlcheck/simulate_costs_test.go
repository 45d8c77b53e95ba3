package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSimulateCosts: simulate runs a scenario whose rules meter tokens and
// its log, checked, gives the simulator's verdict; a strategy that meters
// calls only, or a chart that counts calls, refuses it by name.
func TestSimulateCosts(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	dir := t.TempDir()
	scenario := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(scenario, []byte("name: s\nrules: [3/1s, 100 tokens/1s]\nstrategies: [sequential, combined]\n"+
		"callers: 40\nlateness: uniform(100us, 3ms)\ncosts:\n  tokens: uniform(0, 80)\n"), 0o644))
	out, errOut, code := run(t, "", "simulate", "--format", "json", scenario)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"unit": "tokens"`)
	logPath := filepath.Join(dir, "sends.csv")
	_, errOut, code = run(t, "", "simulate", "--strategy", "combined", "--log", logPath, scenario)
	require.Equal(t, 0, code, errOut)
	_, errOut, code = run(t, "", "check", "--rules", "3/1s, 100 tokens/1s", logPath)
	assert.Equal(t, 0, code, errOut)
	html := filepath.Join(dir, "s.html")
	_, errOut, code = run(t, "", "simulate", "--strategy", "combined", "--plot", filepath.Join(dir, "charts"), "--plot-runs", "3", "--html", html, scenario)
	require.Equal(t, 0, code, errOut)
	assert.FileExists(t, html)
	assert.FileExists(t, filepath.Join(dir, "charts", "timeline-combined.png"))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--strategies", "uber-ratelimit", scenario}, "strategy uber-ratelimit meters calls only so far: it cannot run rules that meter tokens"},
	} {
		out, errOut, code := run(t, "", tt.args...)
		assert.Equal(t, exitUsage, code, "%v: stderr %q", tt.args, errOut)
		assert.Empty(t, out, "%v", tt.args)
		assert.Contains(t, errOut, tt.want, "%v", tt.args)
	}
}
