package plots

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rlcheck/rlcheck/rule"
)

const (
	timelineWidth = 10 * vg.Inch
	panelHeight   = 2.3 * vg.Inch
)

// Timeline draws one window-usage panel per rule, stacked on a shared time
// axis, and writes it to path (.png or .svg).
func Timeline(path string, in TimelineInput) error {
	if _, err := checkExt(path); err != nil {
		return err
	}
	f, err := timelineFigure(in)
	if err != nil {
		return err
	}
	return save(path, f.w, f.h, func(dc draw.Canvas) { f.paint(dc) })
}

// timelineFig is a timeline laid out, before drawing: its panels, the
// series behind them and the highest value each must keep clear of its
// legend.
type timelineFig struct {
	title, sub string
	w, h       vg.Length
	series     Series
	axis       timeAxis
	panels     [][]*plot.Plot
	tops       []float64
	bands      []*band // per panel, nil when its violations are dots
}

func timelineFigure(in TimelineInput) (*timelineFig, error) {
	s, err := TimelineSeries(in, int(timelineWidth/vg.Inch*dpi))
	if err != nil {
		return nil, err
	}
	axis := timeAxisOf(s.From, uint64(s.To-s.From))
	xMax := axis.x(s.To)
	if s.To == s.From {
		xMax = 1
	}
	xLabel := axis.label()
	var ticker plot.Ticker = niceTicks{n: 10}
	at := func(t int64) string { return offsetBetween(s.From, t) }
	if in.WallClock {
		loc := in.Location
		if loc == nil {
			loc = time.UTC
		}
		ticker = wallTicks{axis: axis, loc: loc}
		xLabel = wallLabel(s.From, loc)
		at = func(t int64) string { return time.Unix(0, t).In(loc).Format("15:04:05.000000") }
	}
	line := neutralColor
	if in.Strategy != "" {
		line = StrategyColor(in.Strategy)
	}
	f := &timelineFig{series: s, axis: axis, w: timelineWidth, title: cmp.Or(in.Title, "Window usage")}
	for i, rs := range s.Rules {
		p, b, err := timelinePanel(rs, axis, xMax, newPixelColumns(s.From, s.To, s.Columns), line, at)
		if err != nil {
			return nil, err
		}
		p.X.Tick.Marker = ticker
		p.X.Min, p.X.Max = 0, xMax
		if i == len(s.Rules)-1 {
			p.X.Label.Text = xLabel
		}
		f.panels = append(f.panels, []*plot.Plot{p})
		f.bands = append(f.bands, b)
		f.tops = append(f.tops, float64(max(rs.Peak, Capacity(rs.Rule))))
	}
	marks := "red dots are sends that broke the rule"
	for _, rs := range s.Rules {
		if len(rs.Markers) > MaxDots {
			marks = "red marks sends that broke the rule"
		}
	}
	f.sub = fmt.Sprintf("%s over %s · %s windows: %s · %s",
		plural(int64(len(in.Times)), "send"), spanText(s.From, s.To), in.Boundary, boundaryNote(in.Boundary), marks)
	f.h = headerHeight + panelHeight*vg.Length(len(f.panels)) + 0.3*vg.Inch
	return f, nil
}

// paint draws the figure on dc and returns each panel's canvas.
func (f *timelineFig) paint(dc draw.Canvas) [][]draw.Canvas {
	return drawFigureFit(dc, f.title, f.sub, f.panels, func(i, _ int, p *plot.Plot, c draw.Canvas) {
		clearLegend(p, c, f.tops[i])
	})
}

// legendGap is the room kept between a legend's last line and the data.
var legendGap = vg.Points(4)

// clearLegend raises the top of p's y axis until every value up to top
// lies below the legend, which sits at the top left of the data area, so
// that the legend never covers the occupancy line nor a violation.
func clearLegend(p *plot.Plot, c draw.Canvas, top float64) {
	data := p.DataCanvas(c)
	// The legend hangs from the top of the area left of the y axis, which
	// is at or above the data area's: measuring from the data area's top
	// errs towards more room.
	height := p.Legend.Rectangle(data).Size().Y + p.Legend.TextStyle.FontExtents().Descent
	bottom := data.Max.Y + p.Legend.YOffs - height - legendGap
	frac := float64((bottom - data.Min.Y) / (data.Max.Y - data.Min.Y))
	if !(frac > 0.25) {
		frac = 0.25 // a panel too short for its legend: keep the data in view
	}
	p.Y.Max = max(p.Y.Max, p.Y.Min+(top-p.Y.Min)/frac)
}

// spanText writes the time from the first send to the last, which may not
// fit a time.Duration.
func spanText(from, to int64) string {
	if d := uint64(to - from); d > math.MaxInt64 {
		return fmt.Sprintf("%s years", strconv.FormatFloat(float64(d)/float64(365*day), 'f', 0, 64))
	}
	return seconds(time.Duration(to - from))
}

func boundaryNote(b rule.Boundary) string {
	if b == rule.Closed {
		return "a send still counts exactly W later"
	}
	return "a send leaves exactly W later"
}

// timelinePanel draws one rule: occupancy as a step line, the limit dashed,
// violations as red dots at the instant and height they happened.
func timelinePanel(rs RuleSeries, axis timeAxis, xMax float64, cols pixelColumns, lineColor color.Color, at func(int64) string) (*plot.Plot, *band, error) {
	viol := "no violations"
	switch {
	case rs.Violations == 1:
		viol = "1 violation"
	case rs.Violations > 1:
		viol = thousands(rs.Violations) + " violations"
	}
	words := wordsFor(rs.Rule)
	title := fmt.Sprintf("rule %s: %s — %s, peak %s", rs.Rule, words.title, viol, thousands(rs.Peak))
	if rs.Rule.Kind != rule.Bucket {
		title += " in one window"
	}
	p := newPanel(title, "", words.axis)

	pts := make(plotter.XYs, len(rs.Steps))
	for i, st := range rs.Steps {
		pts[i] = plotter.XY{X: axis.x(st.At), Y: float64(st.Count)}
	}
	if last := pts[len(pts)-1]; last.X < xMax {
		pts = append(pts, plotter.XY{X: xMax, Y: last.Y}) // hold the last count to the axis end
	}
	occ, err := plotter.NewLine(pts)
	if err != nil {
		return nil, nil, fmt.Errorf("plots: %w", err)
	}
	occ.StepStyle = plotter.PostStep
	occ.Color = lineColor
	occ.Width = vg.Points(1.3)

	capacity := float64(Capacity(rs.Rule))
	lim, err := plotter.NewLine(plotter.XYs{{X: 0, Y: capacity}, {X: xMax, Y: capacity}})
	if err != nil {
		return nil, nil, fmt.Errorf("plots: %w", err)
	}
	lim.Color = limitColor
	lim.Width = vg.Points(1)
	lim.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}

	top := max(rs.Peak, Capacity(rs.Rule))
	yMax := float64(top)*1.55 + 1
	var b *band
	if len(rs.Markers) > MaxDots {
		// Dots this dense would hide the line: shade the columns instead,
		// behind it, up to the data's top rather than the axis', so that
		// the shading stays clear of the legend above (clearLegend).
		b = newBand(rs.Markers, axis, cols, float64(top))
		p.Add(plotter.NewGrid(), b, occ, lim)
		p.Legend.Add(fmt.Sprintf("violations (shaded where they happen): %s, the first at %s, %s",
			thousands(rs.Violations), at(rs.First.At), words.found(rs.First.Count)), b)
	} else {
		p.Add(plotter.NewGrid(), occ, lim)
	}
	p.Legend.Add(words.line, occ)
	p.Legend.Add(words.capacity, lim)

	if n := len(rs.Markers); n > 0 && n <= MaxDots {
		mk := make(plotter.XYs, len(rs.Markers))
		for i, m := range rs.Markers {
			mk[i] = plotter.XY{X: axis.x(m.At), Y: float64(m.Count)}
		}
		sc, err := plotter.NewScatter(mk)
		if err != nil {
			return nil, nil, fmt.Errorf("plots: %w", err)
		}
		radius := vg.Points(3.2)
		if int64(len(rs.Markers)) < rs.Violations {
			radius = vg.Points(2.2) // one per pixel column: keep neighbours apart
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: violationColor, Radius: radius, Shape: draw.CircleGlyph{}}
		p.Add(sc)
		// The first violation's instant is where a post-mortem starts.
		label := fmt.Sprintf("violation: %s; the first at %s, %s", words.violation, at(rs.First.At), words.found(rs.First.Count))
		if hidden := rs.Violations - int64(len(rs.Markers)); hidden > 0 {
			label = fmt.Sprintf("violations, the first at %s: %s drawn, %s more not drawn (each shares a pixel column with one drawn)",
				at(rs.First.At), plural(int64(len(rs.Markers)), "marker"), thousands(hidden))
		}
		p.Legend.Add(label, sc)
	}
	p.Y.Tick.Marker = niceTicks{n: 4, integer: true}
	p.Y.Min = 0
	p.Y.Max = yMax
	return p, b, nil
}

// MaxDots is how many violation markers a timeline panel draws as dots;
// past it, the pixel columns with violations are shaded instead.
const MaxDots = 200

// band shades the x ranges where violations happened, full height.
type band struct {
	spans [][2]float64
	top   float64
}

var bandColor = color.NRGBA{0xD0, 0x00, 0x00, 0x48}

// newBand merges the pixel columns of the markers (in time order) into
// runs of neighbouring columns.
func newBand(ms []Marker, axis timeAxis, cols pixelColumns, top float64) *band {
	b := &band{top: top}
	edge := func(c int) float64 {
		if c >= cols.n {
			return axis.x(cols.from + int64(cols.span)) // wraps to the last instant
		}
		if c == 0 {
			return axis.x(cols.from)
		}
		return axis.x(cols.start(c))
	}
	for _, m := range ms {
		c := cols.of(m.At)
		lo, hi := edge(c), edge(c+1)
		if n := len(b.spans); n > 0 && lo <= b.spans[n-1][1] {
			b.spans[n-1][1] = max(b.spans[n-1][1], hi)
			continue
		}
		b.spans = append(b.spans, [2]float64{lo, hi})
	}
	return b
}

// Plot implements plot.Plotter.
func (b *band) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	for _, s := range b.spans {
		x0, x1 := tx(s[0]), tx(s[1])
		if x1-x0 < vg.Points(0.75) {
			x1 = x0 + vg.Points(0.75) // at least a hairline, whatever the column width
		}
		c.FillPolygon(bandColor, c.ClipPolygonXY([]vg.Point{{X: x0, Y: ty(0)}, {X: x1, Y: ty(0)}, {X: x1, Y: ty(b.top)}, {X: x0, Y: ty(b.top)}}))
	}
}

// Thumbnail implements plot.Thumbnailer, for the legend.
func (b *band) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(bandColor, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// offsetLabel writes a duration in seconds with every significant digit, so
// the label names the very nanosecond: "6.003795 s".
func offsetLabel(d int64) string { return offsetBetween(0, d) }

// offsetBetween is offsetLabel of t - from, which it takes unsigned so that
// no span overflows it.
func offsetBetween(from, t int64) string {
	sign, d := "", uint64(t-from)
	if t < from {
		sign, d = "-", uint64(from-t)
	}
	frac := strings.TrimRight(fmt.Sprintf("%09d", d%1e9), "0")
	if frac == "" {
		return fmt.Sprintf("%s%d s", sign, d/1e9)
	}
	return fmt.Sprintf("%s%d.%s s", sign, d/1e9, frac)
}
