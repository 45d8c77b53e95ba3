package difftest

import (
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// FromResult reads a report per key and rule in the oracle's terms: the
// lines of its listed violations (all of them when the check listed every
// one), its fullest window (-1 for a bucket rule) and a bucket's levels.
func FromResult(res *report.Result) map[string][]Verdict {
	out := map[string][]Verdict{}
	for _, g := range res.Groups {
		for _, rr := range g.Report.Rules {
			v := Verdict{Max: rr.MaxInWindow}
			if rr.Rule.Kind == rule.Bucket {
				v.Max = -1
			}
			for _, l := range rr.Listed {
				v.Lines = append(v.Lines, report.Ref(l.Send.Ref).Line())
				if rr.Rule.Kind == rule.Bucket {
					v.Levels = append(v.Levels, l.Level)
				}
			}
			out[g.Key] = append(out[g.Key], v)
		}
	}
	return out
}

// Summary is the part of a verdict every report gives, sql's included:
// how many sends broke the rule, the line of the first, and the fullest
// window (-1 for a bucket rule).
type Summary struct {
	Violations int64
	First      int64
	Max        int64
}

// Summaries reduces verdicts to their summaries.
func Summaries(vs map[string][]Verdict) map[string][]Summary {
	out := map[string][]Summary{}
	for k, rs := range vs {
		for _, v := range rs {
			s := Summary{Violations: int64(len(v.Lines)), Max: v.Max}
			if len(v.Lines) > 0 {
				s.First = v.Lines[0]
			}
			out[k] = append(out[k], s)
		}
	}
	return out
}

// SummariesOf reads a report's summaries: counts, the first violation's
// line and the fullest window.
func SummariesOf(res *report.Result) map[string][]Summary {
	out := map[string][]Summary{}
	for _, g := range res.Groups {
		for _, rr := range g.Report.Rules {
			s := Summary{Violations: rr.Violations, Max: rr.MaxInWindow}
			if rr.Rule.Kind == rule.Bucket {
				s.Max = -1
			}
			if rr.First != nil {
				s.First = report.Ref(rr.First.Send.Ref).Line()
			}
			out[g.Key] = append(out[g.Key], s)
		}
	}
	return out
}

// ReadOptions are check's options for the case's CSV.
func (c Case) ReadOptions() sendlog.Options {
	o := sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", Unit: sendlog.UnitNanos}
	if c.Keyed {
		o.KeyCol = "key"
	}
	for _, u := range c.Units() {
		o.Costs = append(o.Costs, sendlog.CostSource{Unit: u, Col: u})
	}
	return o
}
