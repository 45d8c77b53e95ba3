package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rlcheck/rlcheck/simulate"
)

// MarginLine is one strategy's sweep: at each margin (ms), the share of
// runs violating at the provider (%) and the throughput (mean sends over
// the mean time from first to last send, per second).
type MarginLine struct {
	Name       string
	Color      color.RGBA
	Violating  plotter.XYs
	Throughput plotter.XYs
}

// MarginLines returns the series the margin chart draws, one per strategy.
func MarginLines(r *simulate.MarginResult) ([]MarginLine, error) {
	if len(r.Margins) == 0 || r.Runs < 1 {
		return nil, errors.New("plots: margins: no sweep to draw")
	}
	var out []MarginLine
	for _, sm := range r.Strategies {
		l := MarginLine{Name: sm.Name, Color: StrategyColor(sm.Name)}
		for i, p := range sm.Sweep {
			x := float64(r.Margins[i]) / 1e6
			l.Violating = append(l.Violating, plotter.XY{X: x, Y: 100 * float64(p.Violating) / float64(r.Runs)})
			tput := 0.0
			if p.Cost.Duration > 0 {
				tput = p.Cost.Sends / p.Cost.Duration.Seconds()
			}
			l.Throughput = append(l.Throughput, plotter.XY{X: x, Y: tput})
		}
		out = append(out, l)
	}
	return out, nil
}

// Margins draws the share of runs violating at the provider and the
// throughput against the margin, one line per strategy, to path (.png or
// .svg).
func Margins(path string, r *simulate.MarginResult) error {
	if _, err := checkExt(path); err != nil {
		return err
	}
	lines, err := MarginLines(r)
	if err != nil {
		return err
	}
	share := newPanel("runs violating at the provider", "margin (ms)", "% of runs")
	tput := newPanel("throughput", "margin (ms)", "sends per second (first to last send)")
	share.Y.Min, share.Y.Max = 0, 100
	share.Legend.Left = false
	for _, l := range lines {
		for _, pp := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{share, l.Violating}, {tput, l.Throughput}} {
			ln, pts, err := plotter.NewLinePoints(pp.xys)
			if err != nil {
				return fmt.Errorf("plots: margins: %w", err)
			}
			ln.Color, pts.Color = l.Color, l.Color
			ln.Width = vg.Points(1.5)
			pts.Radius = vg.Points(2)
			pp.p.Add(ln, pts)
			if pp.p == share {
				share.Legend.Add(l.Name, ln, pts)
			}
		}
	}
	title := "The margin that keeps the provider's windows"
	sub := fmt.Sprintf("scenario %s, %d runs per margin (seeds %d to %d)", r.Scenario, r.Runs, r.Seed, r.Seed+uint64(r.Runs)-1)
	return save(path, 8*vg.Inch, 7*vg.Inch, func(dc draw.Canvas) {
		drawFigure(dc, title, sub, [][]*plot.Plot{{share}, {tput}})
	})
}

// MarginsFile writes the margin chart into dir as margins.EXT and names
// the file written on log.
func MarginsFile(dir, ext string, r *simulate.MarginResult, log io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "margins"+ext)
	if err := Margins(path, r); err != nil {
		return err
	}
	_, err := fmt.Fprintln(log, "wrote", path)
	return err
}
