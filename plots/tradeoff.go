package plots

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TradeOffPoint is one way of keeping a rule: what it costs and what it
// gives, measured by the caller.
type TradeOffPoint struct {
	Name string
	// Bytes is the memory one limiter holds for its rules.
	Bytes float64
	// Utilisation is its sends as a share of the exact log's (1 = as many).
	Utilisation float64
	// Violations counts the sends that overfilled a window.
	Violations int64
}

// tradeOffLabel is the text beside a point.
func tradeOffLabel(p TradeOffPoint) string {
	s := fmt.Sprintf("%s: %.1f%%, %s B", p.Name, 100*p.Utilisation, thousands(int64(math.Round(p.Bytes))))
	if p.Violations > 0 {
		s += ", " + plural(p.Violations, "violation")
	}
	return s
}

// TradeOff draws the points on one pair of axes, memory per limiter (log
// scale) against utilisation, red where a way of keeping violated a
// window, and writes the chart to path (.png or .svg).
func TradeOff(path, subtitle string, points []TradeOffPoint) error {
	if _, err := checkExt(path); err != nil {
		return err
	}
	if len(points) == 0 {
		return errors.New("plots: trade-off: no points to draw")
	}
	p := newPanel("", "bytes per limiter (log scale)", "sends, % of the exact log's")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, pt := range points {
		if pt.Bytes <= 0 {
			return fmt.Errorf("plots: trade-off: %s: bytes must be positive", pt.Name)
		}
		sc, err := plotter.NewScatter(plotter.XYs{{X: pt.Bytes, Y: 100 * pt.Utilisation}})
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		sc.GlyphStyle.Radius = vg.Points(4)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		sc.GlyphStyle.Color = StrategyColor(pt.Name)
		if pt.Violations > 0 {
			sc.GlyphStyle.Color = violationColor
			sc.GlyphStyle.Shape = draw.CrossGlyph{}
		}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: pt.Bytes, Y: 100 * pt.Utilisation}}, Labels: []string{tradeOffLabel(pt)}})
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		// Every other label sits a line lower, so points close together
		// keep readable labels.
		lb.Offset = vg.Point{X: vg.Points(6), Y: -vg.Points(9) * vg.Length(i%2)}
		for j := range lb.TextStyle {
			lb.TextStyle[j].YAlign = draw.YCenter
			lb.TextStyle[j].Font.Size = 8
		}
		p.Add(sc, lb)
		lo, hi = min(lo, pt.Bytes), max(hi, pt.Bytes)
	}
	p.X.Min, p.X.Max = lo/2, hi*40 // room for the labels
	return save(path, barsWidth, 6*vg.Inch, func(dc draw.Canvas) {
		drawFigure(dc, "Memory, utilisation and violations per way of keeping a window", subtitle, [][]*plot.Plot{{p}})
	})
}
