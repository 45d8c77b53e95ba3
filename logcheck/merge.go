package logcheck

import (
	"slices"
	"strings"
)

// Finish completes a Result built outside Run (from SQL, or merged shards)
// from its groups: it orders them worst first, then by key, and fills
// Sends, First, Last and Totals as Run does.
func Finish(res *Result) {
	slices.SortStableFunc(res.Groups, func(a, b Group) int {
		if va, vb := a.Violations(), b.Violations(); va != vb {
			if va > vb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	res.Sends, res.First, res.Last = 0, 0, 0
	for _, g := range res.Groups {
		r := g.Report
		if r.Sends == 0 {
			continue
		}
		if res.Sends == 0 || r.First < res.First {
			res.First = r.First
		}
		if res.Sends == 0 || r.Last > res.Last {
			res.Last = r.Last
		}
		res.Sends += r.Sends
	}
	res.Totals = nil
	for i, r := range res.Rules {
		tot := RuleTotal{Rule: r}
		for _, g := range res.Groups {
			if v := g.Report.Rules[i].Violations; v > 0 {
				tot.Violations += v
				tot.Groups++
			}
		}
		res.Totals = append(res.Totals, tot)
	}
}
