package htmlreport

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"os"

	"github.com/klauspost/compress/gzip"

	"github.com/rlcheck/rlcheck/plots"
)

var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed report.js
	reportJS string
	//go:embed report.css
	reportCSS string
	//go:embed report.html
	pageHTML string
)

var pageTmpl = template.Must(template.New("page").Parse(pageHTML))

// write renders p, with text as the report in words, into a self-contained
// HTML file at path.
func write(path string, p *page, text string) error {
	if path == "" {
		return nil
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("htmlreport: %w", err)
	}
	var z bytes.Buffer
	// The fastest level: a check report grows by 1%, a simulation's by
	// 14%, and compressing gets several times faster (docs/benchmarks.md).
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		return fmt.Errorf("htmlreport: %w", err)
	}
	var out bytes.Buffer
	err = pageTmpl.Execute(&out, map[string]any{
		"Title":     p.Title,
		"Text":      text,
		"Data":      template.HTML(base64.StdEncoding.EncodeToString(z.Bytes())), // [A-Za-z0-9+/=] only
		"UPlotJS":   template.JS(uplotJS),
		"UPlotCSS":  template.CSS(uplotCSS),
		"ReportJS":  template.JS(reportJS),
		"ReportCSS": template.CSS(reportCSS),
	})
	if err != nil {
		return fmt.Errorf("htmlreport: %w", err)
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}

func hexColor(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

func strategyColor(name string) string { return hexColor(plots.StrategyColor(name)) }
