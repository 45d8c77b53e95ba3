package plots

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"

	"github.com/rlcheck/rlcheck/simulate"
)

func TestMarginLinesPlotShareAndThroughput(t *testing.T) {
	r := &simulate.MarginResult{Scenario: "x", Runs: 4, Margins: []time.Duration{0, 2500 * time.Microsecond},
		Strategies: []simulate.StrategyMargin{{Name: "combined", Sweep: []simulate.SweepPoint{
			{Violating: 3, Cost: simulate.RunCost{Duration: 2 * time.Second, Sends: 30}},
			{Violating: 0, Cost: simulate.RunCost{Duration: 3 * time.Second, Sends: 30}},
		}}}}
	lines, err := MarginLines(r)
	require.NoError(t, err)
	require.Len(t, lines, 1)
	assert.Equal(t, plotter.XYs{{X: 0, Y: 75}, {X: 2.5, Y: 0}}, lines[0].Violating)
	assert.Equal(t, plotter.XYs{{X: 0, Y: 15}, {X: 2.5, Y: 10}}, lines[0].Throughput, "30 sends in 2 s, then in 3 s")

	var log bytes.Buffer
	dir := t.TempDir()
	require.NoError(t, MarginsFile(dir, ".svg", r, &log))
	assert.Equal(t, "wrote "+filepath.Join(dir, "margins.svg")+"\n", log.String())

	_, err = MarginLines(&simulate.MarginResult{Runs: 4})
	assert.EqualError(t, err, "plots: margins: no sweep to draw")
}
