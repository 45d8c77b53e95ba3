// Package htmlreport writes rlcheck's HTML reports: one self-contained
// page per check, simulation or real-clock run, that opens without network
// access, so a CI job can keep it as an artifact.
//
//	htmlreport.Check(path, result, list, maxKeys)   a checked log (logcheck)
//	htmlreport.Simulate(path, runs)                 a simulation over seeds
//	htmlreport.Run(path, report)                    real-clock runs (realrun)
//
// Each timeline (a key of a log, a strategy of a run) becomes a panel with
// one chart per rule: the window usage as a step line, the limit, and the
// checker's violations; with a send path, the limiter's own records are a
// second layer. The overview is reduced per pixel column by
// plots.TimelineSeries (exact min and max, no violation dropped), and the
// exact steps of a short timeline, or of the sends around the first
// violations of a long one, are inlined for zooming. Tables list the first
// violations with the sends of their windows.
//
// The page embeds uPlot (assets/, vendored from npm at the version in
// assets/VERSION, MIT licence) and a small script, report.js, that only
// decodes the data and drives uPlot. The data is one JSON document,
// delta-encoded, gzipped and base64-encoded; the browser decompresses it
// with DecompressionStream. Sizes and limits: docs/html.md.
//
// The tests open generated reports in headless Chromium through chromedp.
package htmlreport
