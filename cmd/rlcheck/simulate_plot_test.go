package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimulatePlot(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := run(t, "", "simulate", "seed", "--plot", dir, "--plot-runs", "20", "--plot-format", "svg")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"timeline-sequential", "timeline-combined", "comparison", "distribution", "waits"} {
		p := filepath.Join(dir, name+".svg")
		st, err := os.Stat(p)
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
		if !strings.Contains(errOut, "wrote "+p) {
			t.Errorf("stderr does not list %s:\n%s", p, errOut)
		}
	}
	if _, errOut, code := run(t, "", "simulate", "seed", "--plot", dir, "--plot-format", "gif"); code != 2 || !strings.Contains(errOut, "--plot-format") {
		t.Errorf("gif: exit %d, %s", code, errOut)
	}
}
