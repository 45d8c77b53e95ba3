package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/keytext"
	"github.com/rlcheck/rlcheck/rule"
)

// WallClock reports whether the checked times are epoch times (shown as UTC)
// rather than offsets from the log's own start.
func (r *Result) WallClock() bool { return r.First >= epochFloor }

// epochFloor: timestamps from 2000-01-01 on are shown as UTC times, earlier
// ones as seconds (logs that count from their own start).
const epochFloor = 946684800 * int64(1e9)

// instantFormatter shows times as UTC when the log holds epoch times (judged
// by its first send), else as decimal seconds with nanosecond precision.
func InstantFormatter(first int64) func(int64) string {
	if first >= epochFloor {
		return func(t int64) string { return time.Unix(0, t).UTC().Format("2006-01-02T15:04:05.000000000Z") }
	}
	return seconds
}

func seconds(ns int64) string {
	neg := ""
	if ns < 0 {
		neg, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%09d s", neg, ns/1e9, ns%1e9)
}

// placer names where a send came from: "line 28" for one file,
// "host1.csv:28" when several were merged.
func placer(res *Result) func(int64) string {
	if len(res.Files) == 1 {
		format := "line %d"
		if f := res.Files[0].LineFormat; f != "" {
			format = f
		}
		return func(ref int64) string { return fmt.Sprintf(format, Ref(ref).Line()) }
	}
	return func(ref int64) string {
		r := Ref(ref)
		return fmt.Sprintf("%s:%d", res.Files[r.File()].Name, r.Line())
	}
}

// WriteText writes the human report of one check: the inputs, a table of
// rules with violations, maxima and first violations, the worst keys (at most
// maxKeys of them when maxKeys > 0), the in-flight cap and the verdict.
func writeText(w io.Writer, res *Result, maxKeys int) error {
	at := InstantFormatter(res.First)
	where := placer(res)
	var b strings.Builder
	span := fmt.Sprintf("%s from %s to %s (%v), %s windows", plural(res.Sends, "send"), at(res.First), at(res.Last),
		time.Duration(res.Last-res.First), res.Boundary)
	if len(res.Files) == 1 {
		fmt.Fprintf(&b, "%s: %s\n%s\n", res.Files[0].Name, span, readAs(res.Files[0]))
	} else {
		fmt.Fprintf(&b, "%d files merged by time: %s\n", len(res.Files), span)
		for _, f := range res.Files {
			fmt.Fprintf(&b, "  %s: %s, %s\n", f.Name, plural(f.Sends, "send"), readAs(f))
		}
	}
	for _, f := range res.Files {
		if f.Filtered > 0 {
			fmt.Fprintf(&b, "left out %s of %s by the --path, --method and --status filters\n", plural(f.Filtered, "request"), f.Name)
		}
		if f.Skipped > 0 {
			fmt.Fprintf(&b, "skipped %s of %s, the first:\n", plural(f.Skipped, "invalid line"), f.Name)
			for _, e := range f.Skips {
				fmt.Fprintf(&b, "  %v\n", e)
			}
		}
	}
	writeStatuses(&b, res)
	if d := res.Disorder; d.Lines > 0 {
		fmt.Fprintf(&b, "%s arrived out of time order, by at most %v; each was checked in its place\n", plural(d.Lines, "line"), d.Max)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if len(res.Rules) > 0 {
		if res.PerKey {
			fmt.Fprintln(tw, "KEY\tRULE\tVIOLATIONS\tMAX IN WINDOW\tUSAGE\tFIRST VIOLATION")
		} else {
			fmt.Fprintln(tw, "RULE\tVIOLATIONS\tMAX IN WINDOW\tFIRST VIOLATION")
		}
	}
	shown := len(res.Groups)
	if res.PerKey && maxKeys > 0 {
		shown = min(shown, maxKeys)
	}
	for _, g := range res.Groups[:shown] {
		for _, r := range g.Report.Rules {
			max := maxInWindow(r)
			if res.NoMaxInWindow {
				max = "-"
			}
			cells := []string{r.Rule.String(), strconv.FormatInt(r.Violations, 10), max}
			if res.PerKey {
				cells = append([]string{keytext.Show(g.Key)}, append(cells, usageText(r, res.NoMaxInWindow))...)
			}
			fmt.Fprintln(tw, strings.Join(append(cells, firstViolation(r.Rule, r.First, at, where)), "\t"))
		}
	}
	tw.Flush()
	if shown < res.Keys() {
		fmt.Fprintf(&b, "(the %d worst of %d keys; --keys 0 shows all)\n", shown, res.Keys())
	}
	if res.PerKey && len(res.Rules) > 0 {
		var parts []string
		for _, t := range res.Totals {
			parts = append(parts, fmt.Sprintf("%s %s in %d of %s", t.Rule, plural(t.Violations, "violation"), t.Groups, plural(int64(res.Keys()), "key")))
		}
		fmt.Fprintf(&b, "\ntotals: %s\n", strings.Join(parts, "; "))
	}
	for _, g := range res.Groups[:shown] {
		for _, r := range g.Report.Rules {
			for i, v := range r.Listed {
				key := ""
				if res.PerKey {
					key = " for key " + keytext.Show(g.Key)
				}
				fmt.Fprintf(&b, "\n%s violation %d of %d%s: %s at %s; %s\n",
					r.Rule, i+1, r.Violations, key, where(v.Send.Ref), at(v.Send.At), windowText(r.Rule, v, at, where))
				listWindow(&b, v, r.Rule.Unit, at, where)
			}
		}
	}
	if f := res.InFlight; f != nil {
		fmt.Fprintf(&b, "\nin flight: at most %d allowed; peak %d at %s (%s); %s", f.Max, f.Peak, where(f.PeakAt.Ref), at(f.PeakAt.At), plural(f.Violations, "violation"))
		if f.First != nil {
			fmt.Fprintf(&b, ", the first at %s (%s)", where(f.First.Ref), at(f.First.At))
		}
		b.WriteString("\n")
	}
	for _, n := range res.NotChecked {
		fmt.Fprintf(&b, "\nnot checked: %s\n", n)
	}
	if n := res.Violations(); n > 0 {
		fmt.Fprintf(&b, "\nFAIL: %s (%s)\n", plural(n, "violation"), violationSummary(res))
	} else {
		fmt.Fprintf(&b, "\nOK: every rule held\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// plural writes "1 line" or "2 lines".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func readAs(f FileInfo) string {
	s := "read as " + f.Format
	if f.Column != "" {
		s += ", " + f.Column
	}
	if f.Detected != "" {
		s += ", timestamps as " + f.Detected
	}
	return s
}

// listWindow lists the sends of v's window, each with its cost for a
// rule that meters unit.
func listWindow(b *strings.Builder, v checker.Violation, unit string, at func(int64) string, where func(int64) string) {
	n := len(v.Window)
	for k, s := range v.Window {
		if n > 20 && k == 10 {
			fmt.Fprintf(b, "  … %d more …\n", n-20)
		}
		if n <= 20 || k < 10 || k >= n-10 {
			fmt.Fprintf(b, "  %s  %s", where(s.Ref), at(s.At))
			if unit != "" && k < len(v.WindowCosts) {
				fmt.Fprintf(b, "  %d %s", v.WindowCosts[k], unit)
			}
			b.WriteString("\n")
		}
	}
}

func violationSummary(res *Result) string {
	var parts []string
	for _, t := range res.Totals {
		if t.Violations > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", t.Rule, t.Violations))
		}
	}
	if res.InFlight != nil && res.InFlight.Violations > 0 {
		parts = append(parts, fmt.Sprintf("in flight: %d", res.InFlight.Violations))
	}
	return strings.Join(parts, ", ")
}

func maxInWindow(r checker.RuleReport) string {
	if r.Rule.Kind == rule.Bucket {
		return "-" // a bucket has no window
	}
	if r.MaxSaturated {
		return fmt.Sprintf("≥%d", r.MaxInWindow)
	}
	return fmt.Sprint(r.MaxInWindow)
}

// sendsText is a violation's count of sends: "1 send", "3 sends", or
// "≥65536 sends" for a lower bound.
func sendsText(v checker.Violation) string {
	if v.CountSaturated {
		return fmt.Sprintf("≥%d sends", v.Count)
	}
	return plural(v.Count, "send")
}

func firstViolation(r rule.Rule, v *checker.Violation, at func(int64) string, where func(int64) string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%s at %s: %s", where(v.Send.Ref), at(v.Send.At), windowText(r, *v, at, where))
}

// windowText says what a violation overfilled: the sliding window from its
// earliest send, the fixed or first-call window with its bounds, or the
// bucket with its level.
func windowText(r rule.Rule, v checker.Violation, at func(int64) string, where func(int64) string) string {
	from := fmt.Sprintf("from %s (%s)", where(v.WindowStart.Ref), at(v.WindowStart.At))
	units := ""
	if r.Unit != "" {
		units = fmt.Sprintf(" holding %d %s", v.Units, r.Unit)
	}
	switch {
	case r.Kind == rule.Bucket:
		return fmt.Sprintf("the bucket held %s; %s since it was full, %s", v.Level, sendsText(v), from)
	case r.Kind == rule.FirstCall && v.Span == nil:
		return fmt.Sprintf("its %d %s alone exceed the limit, with no window open: it opened none", v.Cost, r.Unit)
	case v.Span != nil:
		return fmt.Sprintf("%s%s in the %s window [%s, %s), %s", sendsText(v), units, r.Kind, at(v.Span.From), at(v.Span.To), from)
	}
	return fmt.Sprintf("%s%s in the window %s", sendsText(v), units, from)
}

// usageText is a rule's fullest window as a share of its limit, the
// measure keys are ordered by; "-" for a bucket (no window) or when the
// fullest window was not computed.
func usageText(r checker.RuleReport, noMax bool) string {
	if noMax || r.Rule.Kind == rule.Bucket || r.Rule.Limit <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(r.MaxInWindow)/float64(r.Rule.Limit))
}

// writeStatuses says what a log's statuses made of its calls: how many
// were refused, how they were read, and which rules explain them.
func writeStatuses(b *strings.Builder, res *Result) {
	st := res.Statuses
	if st == nil {
		return
	}
	if st.Refused > 0 {
		what := "counted toward later windows, not judged"
		if st.Refusals == rule.RefusedFree {
			what = "left out: refused calls do not count"
		}
		fmt.Fprintf(b, "%s refused (429): %s\n", plural(st.Refused, "call"), what)
		var parts []string
		for _, t := range res.Totals {
			if t.Explained > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", t.Rule, t.Explained))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(b, "refusals each rule explains: %s\n", strings.Join(parts, ", "))
		}
		if st.Unexplained > 0 {
			fmt.Fprintf(b, "%s no rule explains: the provider refused more than these rules say\n", plural(st.Unexplained, "refusal"))
		}
	}
	if st.LeftOut > 0 {
		fmt.Fprintf(b, "%s of another status than 2xx or 429 left out\n", plural(st.LeftOut, "call"))
	}
}
