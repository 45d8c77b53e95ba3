package plots

import (
	"fmt"
	"strings"

	"github.com/rlcheck/rlcheck/report"
)

// Check draws the timeline of a checked log to path: the whole stream, or
// with keys the worst key's. The result must hold the send times
// (logcheck.Config.KeepTimes).
func Check(path string, res *report.Result, files []string) error {
	g := res.Groups[0]
	title := strings.Join(files, ", ")
	if res.PerKey {
		title = fmt.Sprintf("key %s (the worst of %d) in %s", g.Key, res.Keys(), title)
	}
	return Timeline(path, TimelineInput{
		Title: title, Times: g.Times, Costs: g.Costs, Rules: res.Rules, Boundary: res.Boundary,
		WallClock: res.WallClock(),
	})
}
