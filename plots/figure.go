package plots

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// headerHeight is the band above the panels for the title and subtitle.
const headerHeight = 0.65 * vg.Inch

// drawFigure writes a title and a subtitle across the top of dc and lays the
// panels out below them in a grid whose columns share their x axes.
func drawFigure(dc draw.Canvas, title, subtitle string, panels [][]*plot.Plot) {
	drawFigureFit(dc, title, subtitle, panels, nil)
}

// drawFigureFit is drawFigure calling fit, when set, on each panel and its
// canvas before drawing it; it returns the panels' canvases.
func drawFigureFit(dc draw.Canvas, title, subtitle string, panels [][]*plot.Plot, fit func(row, col int, p *plot.Plot, c draw.Canvas)) [][]draw.Canvas {
	sty := titleStyle(15)
	top := dc.Max.Y - 0.12*vg.Inch
	mid := (dc.Min.X + dc.Max.X) / 2
	dc.FillText(sty, vg.Point{X: mid, Y: top}, title)
	if subtitle != "" {
		sub := titleStyle(10)
		dc.FillText(sub, vg.Point{X: mid, Y: top - sty.Font.Size - 0.08*vg.Inch}, subtitle)
	}
	body := draw.Crop(dc, 0, 0, 0, -headerHeight)
	tiles := draw.Tiles{
		Rows: len(panels), Cols: len(panels[0]),
		PadX: 0.25 * vg.Inch, PadY: 0.15 * vg.Inch,
		PadTop: 0.05 * vg.Inch, PadBottom: 0.1 * vg.Inch,
		PadLeft: 0.1 * vg.Inch, PadRight: 0.25 * vg.Inch,
	}
	canvases := plot.Align(panels, tiles, body)
	for i := range panels {
		for j, p := range panels[i] {
			if p == nil {
				continue
			}
			if fit != nil {
				fit(i, j, p, canvases[i][j])
			}
			p.Draw(canvases[i][j])
		}
	}
	return canvases
}

func titleStyle(size vg.Length) text.Style {
	sty := plot.New().Title.TextStyle
	sty.Font.Size = size
	sty.XAlign = draw.XCenter
	sty.YAlign = draw.YTop
	return sty
}

// newPanel returns a plot with the common look: white, light grid, legend
// at the top left.
func newPanel(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 11
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = 0.08 * vg.Inch
	p.Legend.YOffs = -0.04 * vg.Inch
	p.Legend.TextStyle.Font.Size = 9
	return p
}
