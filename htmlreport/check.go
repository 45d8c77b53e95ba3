package htmlreport

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/keytext"
	"github.com/rlcheck/rlcheck/report"
)

// CheckList is the Config.List a check needs for its HTML report (when
// path is set): at least Listed, so that the table can list the sends of
// the first violations' windows.
func CheckList(list int, path string) int {
	if path == "" {
		return list
	}
	return max(list, Listed)
}

// Check writes the HTML report of a check to path: per rule and key (the
// worst MaxPanels keys), the window usage against the limit with the
// violations marked, the table of the first violations with the sends that
// filled their windows, and the text report. res must come from a run with
// Config.KeepTimes and Config.List at CheckList(list, path); Check then
// trims every group's listed violations to list, as the text report that
// follows should show them. An empty path writes nothing.
func Check(path string, res *report.Result, list, maxKeys int) error {
	if path == "" {
		return nil
	}
	where := func(ref int64) string {
		r := report.Ref(ref)
		return fmt.Sprintf("%s:%d", res.Files[r.File()].Name, r.Line())
	}
	var names []string
	for _, f := range res.Files {
		names = append(names, f.Name)
	}
	p := &page{Kind: "check", Title: "rlcheck check " + strings.Join(names, ", ")}
	for gi := range res.Groups[:min(len(res.Groups), MaxPanels)] {
		g := &res.Groups[gi]
		if len(g.Times) == 0 || len(res.Rules) == 0 {
			continue
		}
		name := "all sends"
		if res.PerKey {
			name = "key " + keytext.Show(g.Key)
		}
		listed := make([][]checker.Violation, len(res.Rules))
		for i, rr := range g.Report.Rules {
			listed[i] = rr.Listed
		}
		pn, err := build(timeline{name: name, times: g.Times, costs: g.Costs, rules: res.Rules, boundary: res.Boundary,
			wall: res.WallClock(), where: where, listed: listed})
		if err != nil {
			return err
		}
		p.Panels = append(p.Panels, pn)
	}
	for gi := range res.Groups {
		for i := range res.Groups[gi].Report.Rules {
			rr := &res.Groups[gi].Report.Rules[i]
			rr.Listed = rr.Listed[:min(len(rr.Listed), list)]
			if len(rr.Listed) == 0 {
				rr.Listed = nil
			}
		}
	}
	var text bytes.Buffer
	if err := report.Write(&text, []*report.Result{res}, report.Options{MaxKeys: maxKeys}); err != nil {
		return err
	}
	return write(path, p, text.String())
}
