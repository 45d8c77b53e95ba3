package cli

import (
	"os"
	"runtime/debug"
)

// GCPercent sets the collector's target to percent, unless the user set
// GOGC, and returns what restores it. check sets 50 (its live heap is the
// rules' windows: collecting at 1.5x keeps peak RSS near it); simulate with
// many runs and audit set 400 (they allocate fast over a small live heap,
// much of it the embedded Redis's: collecting at 5x rather than 2x halves
// their CPU). The figures are in docs/benchmarks.md.
func GCPercent(percent int) (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(old) }
}
