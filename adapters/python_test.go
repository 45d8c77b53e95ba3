package adapters

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/adapter"
	"github.com/rlcheck/rlcheck/internal/pythontest"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/simulate"
)

func needPython(t testing.TB) string { return pythontest.Need(t, "the Python adapter's tests") }

// TestPythonAdapterUnittests runs the folder's own tests.
func TestPythonAdapterUnittests(t *testing.T) {
	t.Parallel()
	py := needPython(t)
	cmd := exec.Command(py, "-m", "unittest", "-q")
	cmd.Dir = "python"
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "OK")
}

// seedsOr is how many seeds a test on seed.yaml runs: the acceptance's
// 1,000 with RLCHECK_FULL=1, everyday otherwise.
func seedsOr(everyday int) int {
	if testrun.Full() {
		return 1000
	}
	return everyday
}

// TestGuideThroughPythonOnSeed: the guide's Python code on seed.yaml gives
// the guide's result beside the Go strategies: sequential overfills 5/1s
// in about as many runs as Go's, combined keeps every window.
func TestGuideThroughPythonOnSeed(t *testing.T) {
	t.Parallel()
	py := needPython(t)
	sc, err := scenarios.Shipped("seed")
	require.NoError(t, err)
	prog, err := adapter.Open(adapter.Config{Command: py + " python/guide.py"})
	require.NoError(t, err)
	defer prog.Close()
	n := seedsOr(100)
	res, err := simulate.RunSeeds(&sc.Scenario, n, simulate.Options{Strategies: []string{"sequential", "combined"}, Exec: prog})
	require.NoError(t, err)
	rows := map[string]simulate.StrategyRuns{}
	for _, r := range res.Strategies {
		rows[r.Name] = r
	}
	require.Len(t, rows, 4)
	assert.Zero(t, rows["py-combined"].RunsWithViolations)
	assert.Zero(t, rows["combined"].RunsWithViolations)
	goSeq, pySeq := rows["sequential"].RunsWithViolations, rows["py-sequential"].RunsWithViolations
	assert.Greater(t, pySeq, n/4, "sequential overfills in many runs")
	assert.InDelta(t, goSeq, pySeq, float64(n)/8, "Python's sequential fails about as often as Go's")
	assert.Zero(t, rows["py-sequential"].Rules[1].Max, "12/3s holds: the first rule is the one overfilled")
	again, err := simulate.RunSeeds(&sc.Scenario, 20, simulate.Options{Strategies: []string{}, Exec: prog})
	require.NoError(t, err)
	assert.Equal(t, rows["py-sequential"].Rules[0].PerRun[:20], again.Strategies[0].Rules[0].PerRun, "the same seeds give the same sends")
}
