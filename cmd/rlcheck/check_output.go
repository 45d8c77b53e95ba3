package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rlcheck/rlcheck/checker"
)

func timeFromNanos(ns int64) time.Time { return time.Unix(0, ns) }

func writeCheckText(w io.Writer, res checkResult) error {
	rep := res.Report
	first := rep.First
	at := func(t int64) string { return formatInstant(t, first) }
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d sends from %s to %s (%s), %s windows\n",
		res.Name, rep.Sends, at(rep.First), at(rep.Last),
		time.Duration(rep.Last-rep.First), rep.Boundary)
	fmt.Fprintf(&b, "read as %s", res.Format)
	if res.Column != "" {
		fmt.Fprintf(&b, ", %s", res.Column)
	}
	if res.Detected != "" {
		fmt.Fprintf(&b, ", timestamps as %s", res.Detected)
	}
	b.WriteString("\n")
	if res.Skipped > 0 {
		fmt.Fprintf(&b, "skipped %d invalid lines, the first:\n", res.Skipped)
		for _, e := range res.Skips {
			fmt.Fprintf(&b, "  %v\n", e)
		}
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tVIOLATIONS\tMAX IN WINDOW\tFIRST VIOLATION")
	for _, r := range rep.Rules {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", r.Rule, r.Violations, maxInWindow(r), firstViolation(r.First, at))
	}
	tw.Flush()
	for _, r := range rep.Rules {
		for i, v := range r.Listed {
			fmt.Fprintf(&b, "\n%s violation %d of %d: line %d at %s; %s sends in the window from line %d (%s)\n",
				r.Rule, i+1, r.Violations, v.Send.Ref, at(v.Send.At), countText(v), v.WindowStart.Ref, at(v.WindowStart.At))
			for k, s := range v.Window {
				if n := len(v.Window); n > 20 && k == 10 {
					fmt.Fprintf(&b, "  … %d more …\n", n-20)
				}
				if n := len(v.Window); n <= 20 || k < 10 || k >= n-10 {
					fmt.Fprintf(&b, "  line %d  %s\n", s.Ref, at(s.At))
				}
			}
		}
	}
	if n := rep.Violations(); n > 0 {
		fmt.Fprintf(&b, "\nFAIL: %d violations (%s)\n", n, ruleNames(rep.Rules))
	} else {
		fmt.Fprintf(&b, "\nOK: every rule held\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func maxInWindow(r checker.RuleReport) string {
	if r.MaxSaturated {
		return fmt.Sprintf("≥%d", r.MaxInWindow)
	}
	return fmt.Sprint(r.MaxInWindow)
}

func countText(v checker.Violation) string {
	if v.CountSaturated {
		return fmt.Sprintf("≥%d", v.Count)
	}
	return fmt.Sprint(v.Count)
}

func firstViolation(v *checker.Violation, at func(int64) string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("line %d at %s: %s sends in the window from line %d (%s)",
		v.Send.Ref, at(v.Send.At), countText(*v), v.WindowStart.Ref, at(v.WindowStart.At))
}

// JSON view of a check. Times are integer nanoseconds; "window" is Go's
// time.Duration string.
type checkJSON struct {
	File     string          `json:"file"`
	Sends    int64           `json:"sends"`
	FirstNs  int64           `json:"first_ns"`
	LastNs   int64           `json:"last_ns"`
	Boundary string          `json:"boundary"`
	Format   string          `json:"input_format"`
	Column   string          `json:"time_column,omitempty"`
	Times    string          `json:"timestamps,omitempty"`
	Skipped  int64           `json:"skipped_lines"`
	Rules    []ruleCheckJSON `json:"rules"`
	Total    int64           `json:"violations"`
}

type ruleCheckJSON struct {
	Rule           string          `json:"rule"`
	Limit          int             `json:"limit"`
	Window         string          `json:"window"`
	WindowNs       int64           `json:"window_ns"`
	Violations     int64           `json:"violations"`
	MaxInWindow    int64           `json:"max_in_window"`
	MaxSaturated   bool            `json:"max_in_window_is_lower_bound,omitempty"`
	MaxWindowStart sendJSON        `json:"max_window_start"`
	First          *violationJSON  `json:"first_violation"`
	Listed         []violationJSON `json:"violations_listed,omitempty"`
}

type sendJSON struct {
	AtNs int64 `json:"at_ns"`
	Line int64 `json:"line"`
}

type violationJSON struct {
	AtNs           int64      `json:"at_ns"`
	Line           int64      `json:"line"`
	Index          int64      `json:"index"`
	WindowStartNs  int64      `json:"window_start_ns"`
	WindowStartLn  int64      `json:"window_start_line"`
	Count          int64      `json:"count"`
	CountSaturated bool       `json:"count_is_lower_bound,omitempty"`
	Window         []sendJSON `json:"window,omitempty"`
}

func violationView(v checker.Violation) violationJSON {
	out := violationJSON{
		AtNs: v.Send.At, Line: v.Send.Ref, Index: v.Index,
		WindowStartNs: v.WindowStart.At, WindowStartLn: v.WindowStart.Ref,
		Count: v.Count, CountSaturated: v.CountSaturated,
	}
	for _, s := range v.Window {
		out.Window = append(out.Window, sendJSON{AtNs: s.At, Line: s.Ref})
	}
	return out
}

func ruleView(r checker.RuleReport) ruleCheckJSON {
	out := ruleCheckJSON{
		Rule: r.Rule.String(), Limit: r.Rule.Limit,
		Window: r.Rule.Window.String(), WindowNs: int64(r.Rule.Window),
		Violations: r.Violations, MaxInWindow: r.MaxInWindow, MaxSaturated: r.MaxSaturated,
		MaxWindowStart: sendJSON{AtNs: r.MaxWindowStart.At, Line: r.MaxWindowStart.Ref},
	}
	if r.First != nil {
		v := violationView(*r.First)
		out.First = &v
	}
	for _, v := range r.Listed {
		out.Listed = append(out.Listed, violationView(v))
	}
	return out
}

func writeCheckJSON(w io.Writer, res checkResult) error {
	rep := res.Report
	out := checkJSON{
		File: res.Name, Sends: rep.Sends, FirstNs: rep.First, LastNs: rep.Last,
		Boundary: rep.Boundary.String(), Format: res.Format.String(), Column: res.Column,
		Times: res.Detected, Skipped: res.Skipped, Total: rep.Violations(),
		Rules: []ruleCheckJSON{},
	}
	for _, r := range rep.Rules {
		out.Rules = append(out.Rules, ruleView(r))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
