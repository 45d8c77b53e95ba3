package plots

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/rlcheck/rlcheck/internal/fixtures"
	"github.com/rlcheck/rlcheck/rule"
)

// legendBoxes returns, per panel, the boxes of the legend's lines as
// drawn on rec: each string the panel's legend holds, from its baseline
// down by the descent and up by the font size, widened left over the
// thumbnail.
func legendBoxes(rec *recorder.Canvas, thumb vg.Length) []vg.Rectangle {
	var out []vg.Rectangle
	for _, a := range rec.Actions {
		fs, ok := a.(*recorder.FillString)
		if !ok || !isLegend(fs.String) {
			continue
		}
		f := font.DefaultCache.Lookup(fs.Font, fs.Size)
		out = append(out, vg.Rectangle{
			Min: vg.Point{X: fs.Point.X - thumb - f.Extents().Descent, Y: fs.Point.Y - f.Extents().Descent},
			Max: vg.Point{X: fs.Point.X + f.Width(fs.String), Y: fs.Point.Y + f.Extents().Ascent},
		})
	}
	return out
}

// isLegend tells the timeline's legend lines from its other text.
func isLegend(s string) bool {
	for _, p := range []string{"sends in the last ", "limit: ", "violation"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// markerRadius is the violation dots' radius.
var markerRadius = vg.Points(3.2)

// TestTimelineLegendClearsTheData draws timelines whose violations sit at
// the top left, where the legend hangs, and checks where each marker and
// the peak of the line land against the boxes the legend's lines were
// drawn in: none inside.
func TestTimelineLegendClearsTheData(t *testing.T) {
	burst := []int64{}
	for i := range 12 {
		burst = append(burst, int64(i)*int64(time.Millisecond))
	}
	for i := range 40 {
		burst = append(burst, int64(2+i)*int64(time.Second))
	}
	dense := []int64{}
	for i := range 6000 {
		dense = append(dense, int64(i)*int64(10*time.Millisecond))
	}
	for _, in := range []TimelineInput{
		{Title: "violations shaded from the start", Times: dense, Rules: []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 200, Window: 10 * time.Second}}},
		{Title: "a burst at the start", Times: burst, Rules: []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 20, Window: time.Minute}}},
		{Title: "the asyncio fixture", Times: fixtures.MustTimes(t, "asyncio-sequential.txt"), Rules: fixtureRules, WallClock: true},
	} {
		f, err := timelineFigure(in)
		require.NoError(t, err, in.Title)
		rec := &recorder.Canvas{}
		dc := draw.Canvas{Canvas: rec, Rectangle: vg.Rectangle{Max: vg.Point{X: f.w, Y: f.h}}}
		canvases := f.paint(dc)
		boxes := legendBoxes(rec, f.panels[0][0].Legend.ThumbnailWidth)
		require.NotEmpty(t, boxes, "%s: no legend drawn", in.Title)
		for i, rs := range f.series.Rules {
			p := f.panels[i][0]
			data := p.DataCanvas(canvases[i][0])
			tx, ty := p.Transforms(&data)
			points := []vg.Point{}
			for _, m := range rs.Markers {
				points = append(points, vg.Point{X: tx(f.axis.x(m.At)), Y: ty(float64(m.Count))})
			}
			for _, st := range rs.Steps {
				points = append(points, vg.Point{X: tx(f.axis.x(st.At)), Y: ty(float64(st.Count))})
			}
			if b := f.bands[i]; b != nil {
				for _, sp := range b.spans {
					band := vg.Rectangle{Min: vg.Point{X: tx(sp[0]), Y: ty(0)}, Max: vg.Point{X: tx(sp[1]), Y: ty(b.top)}}
					for _, lb := range boxes {
						overlap := band.Min.X <= lb.Max.X && lb.Min.X <= band.Max.X && band.Min.Y <= lb.Max.Y && lb.Min.Y <= band.Max.Y
						assert.False(t, overlap, "%s, %v: shaded violations %v under the legend line %v", in.Title, rs.Rule, band, lb)
					}
				}
			}
			for _, pt := range points {
				for _, b := range boxes {
					inside := pt.X >= b.Min.X && pt.X <= b.Max.X && pt.Y+markerRadius >= b.Min.Y && pt.Y-markerRadius <= b.Max.Y
					assert.False(t, inside, "%s, %v: a point at (%.1f, %.1f) is under the legend line %v", in.Title, rs.Rule, pt.X, pt.Y, b)
				}
			}
		}
	}
}

// TestDistributionPanelsOwnScales: each strategy's histogram has its own
// scale of runs, so that combined's every run at zero does not flatten
// sequential's spread.
func TestDistributionPanelsOwnScales(t *testing.T) {
	clean := make([]int64, 1000)
	spread := make([]int64, 1000)
	for i := range spread {
		spread[i] = int64(i % 7)
	}
	panels, runs, err := distributionPanels(Summary{Strategies: []StrategyResult{
		{Name: "sequential", RunViolations: spread}, {Name: "combined", RunViolations: clean}}}, 10*vg.Inch)
	require.NoError(t, err)
	assert.Equal(t, 1000, runs)
	require.Len(t, panels, 2)
	for i, row := range panels {
		var most float64 // the tallest bar
		for _, b := range Histogram([][]int64{spread, clean}[i], 6) {
			most = max(most, float64(b.Runs))
		}
		y := row[0].Y
		assert.GreaterOrEqual(t, y.Max, most, "panel %d: its tallest bar fits", i)
		assert.LessOrEqual(t, y.Max, most*1.2, "panel %d: on its own scale", i)
	}
}
