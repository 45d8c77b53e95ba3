package plots

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Bar sizes are in points (vg.Length's unit).
const (
	barsWidth     = 10 * vg.Inch
	barThickness  = vg.Length(11)
	barPitch      = vg.Length(14)
	groupSpacing  = vg.Length(14)
	barsAxesExtra = 1.0 * vg.Inch
)

// barGroup is one strategy's row of bars, one bar per rule.
type barGroup struct {
	name   string
	color  color.RGBA
	values []float64
	labels []string
}

// groupedBars draws horizontal bars, one group per strategy from top to
// bottom, one bar per rule inside a group, each labelled at its end. Rules
// are told apart by their labels and by a lighter tint of the strategy's
// colour, so the strategy's colour stays its own.
func groupedBars(title, xLabel string, groups []barGroup, rules int, integer bool) (*plot.Plot, vg.Length, error) {
	p := newPanel(title, xLabel, "")
	p.Title.TextStyle.Font.Size = 12
	n := len(groups)
	names := make([]string, n)
	top := 0.0
	for i, g := range groups {
		names[n-1-i] = g.name
		for _, v := range g.values {
			top = max(top, v)
		}
	}
	grid := plotter.NewGrid()
	grid.Horizontal.Width = 0
	p.Add(grid)
	for i, g := range groups {
		y := float64(n - 1 - i)
		for k := range rules {
			off := (vg.Length(rules-1)/2 - vg.Length(k)) * barPitch
			bc, err := plotter.NewBarChart(plotter.Values{g.values[k]}, barThickness)
			if err != nil {
				return nil, 0, fmt.Errorf("plots: %w", err)
			}
			bc.Horizontal = true
			bc.XMin = y
			bc.Offset = off
			bc.Color = tint(g.color, 0.55*float64(k)/float64(max(rules-1, 1)))
			bc.LineStyle = draw.LineStyle{Color: g.color, Width: vg.Points(0.6)}
			lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: g.values[k], Y: y}}, Labels: []string{g.labels[k]}})
			if err != nil {
				return nil, 0, fmt.Errorf("plots: %w", err)
			}
			lb.Offset = vg.Point{X: vg.Points(4), Y: off}
			for j := range lb.TextStyle {
				lb.TextStyle[j].YAlign = draw.YCenter
				lb.TextStyle[j].Font.Size = 9
			}
			p.Add(bc, lb)
		}
	}
	p.NominalY(names...)
	p.Y.Tick.Label.Font.Size = 10
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	p.X.Min = 0
	p.X.Max = top*1.3 + 0.0001
	if top == 0 {
		p.X.Max = 1
	}
	p.X.Tick.Marker = niceTicks{n: 8, integer: integer}
	p.Legend.Top, p.Legend.Left = true, false
	dataHeight := vg.Length(n) * (vg.Length(rules)*barPitch + groupSpacing)
	return p, dataHeight, nil
}

// drawBars writes a grouped-bar chart with its header to path.
func drawBars(path, title, subtitle string, p *plot.Plot, dataHeight vg.Length) error {
	h := headerHeight + dataHeight + barsAxesExtra
	return save(path, barsWidth, h, func(dc draw.Canvas) {
		drawFigure(dc, title, subtitle, [][]*plot.Plot{{p}})
	})
}

// strategyLabel is a strategy's name with its run's duration, as the bars
// show it.
func strategyLabel(r StrategyResult) string {
	if r.Duration <= 0 {
		return r.Name
	}
	return fmt.Sprintf("%s (%s)", r.Name, seconds(r.Duration))
}
