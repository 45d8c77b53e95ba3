// Package plots draws rlcheck's charts with gonum/plot: what a log or a
// simulated run did to every window, and how strategies compare.
//
// Every chart is written to a file whose extension picks the format, .png or
// .svg; any other extension is an error and nothing is written.
//
//	plots.Timeline(path, plots.TimelineInput{Times, Rules, Boundary, ...})
//	    one panel per rule on a shared time axis: sends in the window as a
//	    step line, the limit dashed, violations as red dots where they happen.
//	plots.Comparison(path, summary)   violations per strategy and rule
//	plots.Distribution(path, summary) violations per run across seeds
//	plots.Waits(path, summary)        time callers waited on each rule
//
// A Summary holds the rules and one StrategyResult per strategy. Each
// strategy keeps its colour (StrategyColor) in every chart; red is kept for
// violations.
//
// Charts draw series computed first, so tests check the series rather than
// pixels: Occupancy yields the exact occupancy steps of one rule, and
// TimelineSeries reduces them to at most four points per pixel column (the
// column's first and last steps, its lowest and its highest) and marks the
// violations found in the same sweep: the sends whose step is over the
// limit, which are exactly the checker's verdicts (a property test holds
// them to the checker), so no second check runs. Up to MaxMarkers
// violations per rule are kept one by one; beyond that, one marker per pixel
// column stands for them, and the legend says how many are not drawn and when
// the first happened. A panel with more than MaxDots markers shades the pixel
// columns that hold violations instead of drawing dots, so the usage line
// stays visible at fleet scale. OccupancyFrom yields the exact steps from any
// send on, for a zoomed-in range of a long log (the HTML reports). A 10-million-send log with limits in the thousands
// plots in about a second (see docs/benchmarks.md).
//
// Time axes show seconds (minutes, hours or days for longer spans) from the
// first send, or, with TimelineInput.WallClock, the time of day of Unix
// nanosecond timestamps.
//
// The package imports only rule and checker from rlcheck; callers pass plain
// send times in integer nanoseconds and results they computed.
package plots
