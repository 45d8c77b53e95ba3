package plots

import (
	"errors"
	"fmt"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Bin is one histogram bar: Runs runs had between Lo and Hi violations,
// both included.
type Bin struct {
	Lo, Hi int64
	Runs   int64
}

// maxBins caps the bars per histogram; beyond it bins widen.
const maxBins = 25

// Histogram counts runs per number of violations over bins 0..top (top is
// the largest value across every strategy, so all histograms share bins).
// Bins are one violation wide up to maxBins values; beyond that, clean runs
// keep a bin of their own and the rest share wider bins.
func Histogram(runs []int64, top int64) []Bin {
	top = max(top, 0)
	var bins []Bin
	width := int64(1)
	if top+1 > maxBins {
		width = (top + maxBins - 2) / (maxBins - 1) // ceil(top / (maxBins-1))
		bins = append(bins, Bin{Lo: 0, Hi: 0})
	}
	for lo := int64(len(bins)); lo <= top; lo += width {
		bins = append(bins, Bin{Lo: lo, Hi: lo + width - 1})
	}
	for _, v := range runs {
		if v < 0 {
			continue
		}
		i := int64(0)
		if v > 0 && width > 1 {
			i = 1 + (v-1)/width
		} else if width == 1 {
			i = v
		}
		bins[min(i, int64(len(bins)-1))].Runs++
	}
	return bins
}

// Distribution draws, for each strategy with RunViolations, a histogram of
// violations per run across seeds, all on the same bins, and writes it to
// path (.png or .svg).
func Distribution(path string, s Summary) error {
	if _, err := checkExt(path); err != nil {
		return err
	}
	w := 10 * vg.Inch
	panels, runs, err := distributionPanels(s, w)
	if err != nil {
		return err
	}
	h := headerHeight + vg.Length(len(panels))*2*vg.Inch + 0.3*vg.Inch
	sub := subtitleOf(s, fmt.Sprintf("%d runs per strategy · bars: runs with that many violations, each panel on its own scale", runs))
	return save(path, w, h, func(dc draw.Canvas) {
		drawFigure(dc, "Violations per run across seeds", sub, panels)
	})
}

// distributionPanels lays out the histograms of a figure w wide, and
// returns them with the runs per strategy.
func distributionPanels(s Summary, w vg.Length) ([][]*plot.Plot, int, error) {
	var rs []StrategyResult
	var top int64
	for _, r := range s.Strategies {
		if len(r.RunViolations) == 0 {
			continue
		}
		rs = append(rs, r)
		for _, v := range r.RunViolations {
			top = max(top, v)
		}
	}
	if len(rs) == 0 {
		return nil, 0, errors.New("plots: distribution: no strategy has per-run results")
	}
	cols := 1
	if len(rs) > 4 {
		cols = 2
	}
	rows := (len(rs) + cols - 1) / cols
	panels := make([][]*plot.Plot, rows)
	for i := range panels {
		panels[i] = make([]*plot.Plot, cols)
	}
	for i, r := range rs {
		// Each panel on its own scale of runs: a strategy clean in every
		// run would flatten another's spread on a shared one.
		hist := Histogram(r.RunViolations, top)
		var runsTop int64
		for _, b := range hist {
			runsTop = max(runsTop, b.Runs)
		}
		p, err := histogramPanel(r, hist, runsTop, (w-0.8*vg.Inch)/vg.Length(cols)-0.8*vg.Inch)
		if err != nil {
			return nil, 0, err
		}
		if i/cols == rows-1 || i+cols >= len(rs) {
			p.X.Label.Text = "violations in one run, all rules together"
		}
		panels[i/cols][i%cols] = p
	}
	return panels, len(rs[0].RunViolations), nil
}

func histogramPanel(r StrategyResult, bins []Bin, runsTop int64, panelWidth vg.Length) (*plot.Plot, error) {
	var bad, sum, worst int64
	for _, v := range r.RunViolations {
		if v > 0 {
			bad++
		}
		sum += v
		worst = max(worst, v)
	}
	mean := float64(sum) / float64(len(r.RunViolations))
	title := fmt.Sprintf("%s: violations in %d of %d runs, mean %s, worst %d",
		r.Name, bad, len(r.RunViolations), strconv.FormatFloat(mean, 'f', 2, 64), worst)
	p := newPanel(title, "", "runs")
	// One bar per bin, evenly spaced whatever the bins' widths, so the bin
	// of clean runs stays as visible as the others.
	vals := make(plotter.Values, len(bins))
	for i, b := range bins {
		vals[i] = float64(b.Runs)
	}
	bc, err := plotter.NewBarChart(vals, min(max(panelWidth/vg.Length(len(bins))*0.7, vg.Points(2)), vg.Points(24)))
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	bc.Color = StrategyColor(r.Name)
	bc.LineStyle.Width = 0
	grid := plotter.NewGrid()
	grid.Vertical.Width = 0
	p.Add(grid, bc)
	p.NominalX(binLabels(bins)...)
	p.X.Tick.Label.Font.Size = 9
	p.Y.Min, p.Y.Max = 0, float64(runsTop)*1.1
	p.Y.Tick.Marker = niceTicks{n: 4, integer: true}
	return p, nil
}

// binLabels names the bins under their bars, leaving some blank when there
// are too many to read: the first bin (clean runs) is always named.
func binLabels(bins []Bin) []string {
	every := 1
	wide := bins[len(bins)-1].Hi > bins[len(bins)-1].Lo
	switch {
	case wide:
		every = (len(bins) + 3) / 4
	case len(bins) > 15:
		every = (len(bins) + 9) / 10
	}
	names := make([]string, len(bins))
	for i, b := range bins {
		if i%every != 0 {
			continue
		}
		names[i] = thousands(b.Lo)
		if b.Hi > b.Lo {
			names[i] += "–" + thousands(b.Hi)
		}
	}
	return names
}
