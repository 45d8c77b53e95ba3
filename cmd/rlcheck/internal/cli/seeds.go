package cli

import (
	"fmt"
	"io"

	"github.com/rlcheck/rlcheck/internal/progress"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/workload"
)

// PlotSeeds runs the n seeds (--plot-runs) of the distribution a chart or
// an HTML report draws, saying so on errOut up front, since they can take
// a hundred times the report's one run, and showing their progress there
// on a terminal.
func PlotSeeds(errOut io.Writer, sc *workload.Scenario, n int, opt simulate.Options) (*simulate.RunsResult, error) {
	fmt.Fprintf(errOut, "charts: running %d seeds (%d to %d) for the distribution across seeds; --plot-runs sets the count, --runs reuses the report's\n",
		n, sc.Seed, sc.Seed+uint64(n)-1)
	if progress.Wanted(errOut, false) {
		bar := progress.NewCount(errOut, n, "seeds")
		defer bar.Finish()
		opt.Progress = func(int, int) { bar.Add(1) }
	}
	return simulate.RunSeeds(sc, n, opt)
}
