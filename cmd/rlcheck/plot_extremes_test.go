package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckPlotNearInt64End: sends 0.8 s before the end of the int64 range
// of nanoseconds, which check accepts, are charted and reported in HTML
// with the checker's one violation; the chart's wall-clock ticks once
// wrapped past the end and looped, growing memory without bound.
func TestCheckPlotNearInt64End(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "x.log")
	require.NoError(t, os.WriteFile(log, []byte("9223372036.000\n9223372036.800\n"), 0o644))
	for _, flag := range []string{"--plot", "--html"} {
		out := filepath.Join(dir, "x"+map[string]string{"--plot": ".png", "--html": ".html"}[flag])
		var stdout, stderr string
		code := -1
		done := make(chan struct{})
		go func() {
			defer close(done)
			stdout, stderr, code = run(t, "", "check", "--rules", "1/1s", flag, out, log)
		}()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			panic("check " + flag + " near the int64 end still running after 2 minutes: it loops")
		}
		assert.Equal(t, exitViolations, code, "%s: exit code; stderr %q", flag, stderr)
		assert.Contains(t, stdout, "FAIL: 1 violation (1/1s: 1)", flag)
		assert.FileExists(t, out, flag)
	}
}
