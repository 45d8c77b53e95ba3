package simulate

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/rlcheck/rlcheck/rule"
)

// writeUsage writes, per strategy, which rule binds in plain words.
func writeUsage(w io.Writer, sts []StrategyResult) {
	if len(sts) == 0 {
		return
	}
	fmt.Fprintln(w, "\nwhich rule binds:")
	var t table
	for i := range sts {
		_, say := Binding(Usage(&sts[i], rule.HalfOpen))
		t.add(sts[i].Name, say)
	}
	writeLeft(w, &t)
}

// WriteUsage writes each rule's usage per strategy: the window occupancy
// over the limit (peak, and mean over the run), when a window first filled,
// and the waiting the rule caused as the binding one.
func WriteUsage(w io.Writer, r *Result) error {
	sts := r.Strategies
	fmt.Fprintln(w, "\nusage per rule (window occupancy over the limit: peak, mean over the run) and time waited with the rule binding:")
	var t table
	t.add("strategy", "rule", "peak", "mean", "first full", "waited", "first bound")
	for i := range sts {
		for k, u := range Usage(&sts[i], rule.HalfOpen) {
			name := ""
			if k == 0 {
				name = sts[i].Name
			}
			waited, bound := "-", "-"
			if u.HasStats {
				waited = durationText(u.Waited)
				if u.FirstBound >= 0 {
					bound = sinceStart(u.FirstBound)
				}
			}
			full := "-"
			if u.FirstFull >= 0 {
				full = sinceStart(u.FirstFull)
			}
			t.add(name, u.Rule.String(), strconv.FormatFloat(u.Peak, 'f', 2, 64), strconv.FormatFloat(u.Mean, 'f', 2, 64),
				full, waited, bound)
		}
	}
	return t.write(w)
}

// writeLeft writes two-column rows, both left-aligned.
func writeLeft(w io.Writer, t *table) {
	width := 0
	for _, r := range t.rows {
		width = max(width, len(r[0]))
	}
	for _, r := range t.rows {
		fmt.Fprintf(w, "  %-*s  %s\n", width, r[0], r[1])
	}
}

// jsonUsage is one rule's usage in the JSON report.
type jsonUsage struct {
	UsagePeak    float64 `json:"usage_peak"`
	UsageMean    float64 `json:"usage_mean"`
	FirstFullNs  *int64  `json:"first_full_ns,omitempty"`
	WaitedNs     *int64  `json:"waited_ns,omitempty"`
	FirstBoundNs *int64  `json:"first_bound_ns,omitempty"`
}

func addUsage(js *jsonStrategy, st *StrategyResult) {
	us := Usage(st, rule.HalfOpen)
	bind, say := Binding(us)
	js.Binding = say
	if bind >= 0 {
		js.BindingRule = us[bind].Rule.String()
	}
	for k, u := range us {
		ju := &jsonUsage{UsagePeak: round(u.Peak, 1e4), UsageMean: round(u.Mean, 1e4)}
		if u.FirstFull >= 0 {
			ju.FirstFullNs = ptr(u.FirstFull)
		}
		if u.HasStats {
			ju.WaitedNs = ptr(int64(u.Waited))
			if u.FirstBound >= 0 {
				ju.FirstBoundNs = ptr(u.FirstBound)
			}
		}
		js.Rules[k].jsonUsage = ju
	}
}

func round(x, scale float64) float64 { return math.Round(x*scale) / scale }

func ptr[T any](v T) *T { return &v }
