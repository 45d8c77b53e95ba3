package logcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rlcheck/rlcheck/buildinfo"
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
func instantFormatter(first int64) func(int64) string {
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
func WriteText(w io.Writer, res *Result, maxKeys int) error {
	at := instantFormatter(res.First)
	where := placer(res)
	var b strings.Builder
	span := fmt.Sprintf("%d sends from %s to %s (%v), %s windows", res.Sends, at(res.First), at(res.Last),
		time.Duration(res.Last-res.First), res.Boundary)
	if len(res.Files) == 1 {
		fmt.Fprintf(&b, "%s: %s\n%s\n", res.Files[0].Name, span, readAs(res.Files[0]))
	} else {
		fmt.Fprintf(&b, "%d files merged by time: %s\n", len(res.Files), span)
		for _, f := range res.Files {
			fmt.Fprintf(&b, "  %s: %d sends, %s\n", f.Name, f.Sends, readAs(f))
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
	if d := res.Disorder; d.Lines > 0 {
		fmt.Fprintf(&b, "%s arrived out of time order, by at most %v; each was checked in its place\n", plural(d.Lines, "line"), d.Max)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if len(res.Rules) > 0 {
		if res.PerKey {
			fmt.Fprintln(tw, "KEY\tRULE\tVIOLATIONS\tMAX IN WINDOW\tFIRST VIOLATION")
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
			if res.PerKey {
				fmt.Fprintf(tw, "%s\t", keytext.Show(g.Key))
			}
			max := maxInWindow(r)
			if res.NoMaxInWindow {
				max = "-"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", r.Rule, r.Violations, max, firstViolation(r.Rule, r.First, at, where))
		}
	}
	tw.Flush()
	if shown < len(res.Groups) {
		fmt.Fprintf(&b, "(the %d worst of %d keys; --keys 0 shows all)\n", shown, len(res.Groups))
	}
	if res.PerKey && len(res.Rules) > 0 {
		var parts []string
		for _, t := range res.Totals {
			parts = append(parts, fmt.Sprintf("%s %d violations in %d of %d keys", t.Rule, t.Violations, t.Groups, len(res.Groups)))
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
				listWindow(&b, v.Window, at, where)
			}
		}
	}
	if f := res.InFlight; f != nil {
		fmt.Fprintf(&b, "\nin flight: at most %d allowed; peak %d at %s (%s); %d violations", f.Max, f.Peak, where(f.PeakAt.Ref), at(f.PeakAt.At), f.Violations)
		if f.First != nil {
			fmt.Fprintf(&b, ", the first at %s (%s)", where(f.First.Ref), at(f.First.At))
		}
		b.WriteString("\n")
	}
	for _, n := range res.NotChecked {
		fmt.Fprintf(&b, "\nnot checked: %s\n", n)
	}
	if n := res.Violations(); n > 0 {
		fmt.Fprintf(&b, "\nFAIL: %d violations (%s)\n", n, violationSummary(res))
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

func listWindow(b *strings.Builder, window []checker.Send, at func(int64) string, where func(int64) string) {
	n := len(window)
	for k, s := range window {
		if n > 20 && k == 10 {
			fmt.Fprintf(b, "  … %d more …\n", n-20)
		}
		if n <= 20 || k < 10 || k >= n-10 {
			fmt.Fprintf(b, "  %s  %s\n", where(s.Ref), at(s.At))
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

func countText(v checker.Violation) string {
	if v.CountSaturated {
		return fmt.Sprintf("≥%d", v.Count)
	}
	return fmt.Sprint(v.Count)
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
		return fmt.Sprintf("the bucket held %s; %s sends since it was full, %s", v.Level, countText(v), from)
	case v.Span != nil:
		return fmt.Sprintf("%s sends%s in the %s window [%s, %s), %s", countText(v), units, r.Kind, at(v.Span.From), at(v.Span.To), from)
	}
	return fmt.Sprintf("%s sends%s in the window %s", countText(v), units, from)
}

// JSON view of a check (docs/json.md). Times are integer nanoseconds;
// "window" is Go's time.Duration string. Only the top-level document
// carries the header, not each file's report under "per_file".
type checkJSON struct {
	*buildinfo.Header
	Files       []fileJSON      `json:"files"`
	Sends       int64           `json:"sends"`
	FirstNs     int64           `json:"first_ns"`
	LastNs      int64           `json:"last_ns"`
	Boundary    string          `json:"boundary"`
	Disorder    disorderJSON    `json:"out_of_order"`
	Rules       []ruleCheckJSON `json:"rules"`
	InFlight    *inFlightJSON   `json:"in_flight,omitempty"`
	NotChecked  []string        `json:"not_checked,omitempty"`
	Shard       *shardJSON      `json:"shard,omitempty"`
	Keys        []keyJSON       `json:"keys,omitempty"`
	Total       int64           `json:"violations"`
	KeysInTotal int             `json:"key_count,omitempty"`
}

type fileJSON struct {
	Name    string `json:"name"`
	Format  string `json:"input_format"`
	Column  string `json:"time_column,omitempty"`
	Times   string `json:"timestamps,omitempty"`
	Lines   int64  `json:"lines"`
	Sends   int64  `json:"sends"`
	Skipped int64  `json:"skipped_lines"`
}

type disorderJSON struct {
	Lines int64 `json:"lines"`
	MaxNs int64 `json:"max_ns"`
}

type keyJSON struct {
	Key        string          `json:"key"`
	Violations int64           `json:"violations"`
	Sends      int64           `json:"sends"`
	Rules      []ruleCheckJSON `json:"rules"`
	InFlight   *inFlightJSON   `json:"in_flight,omitempty"`
}

type ruleCheckJSON struct {
	Rule           string          `json:"rule"`
	Kind           string          `json:"kind,omitempty"` // absent for sliding rules
	Unit           string          `json:"unit,omitempty"` // absent for call rules
	Burst          int             `json:"burst,omitempty"`
	Limit          int             `json:"limit"`
	Window         string          `json:"window"`
	WindowNs       int64           `json:"window_ns"`
	Violations     int64           `json:"violations"`
	KeysViolating  *int            `json:"keys_with_violations,omitempty"`
	MaxInWindow    int64           `json:"max_in_window"`
	MaxSaturated   bool            `json:"max_in_window_is_lower_bound,omitempty"`
	MaxWindowStart *placeJSON      `json:"max_window_start,omitempty"`
	First          *violationJSON  `json:"first_violation"`
	Listed         []violationJSON `json:"violations_listed,omitempty"`
}

type placeJSON struct {
	AtNs int64  `json:"at_ns"`
	File string `json:"file,omitempty"`
	Line int64  `json:"line"`
}

type violationJSON struct {
	placeJSON
	Key            string      `json:"key,omitempty"`
	Index          int64       `json:"index"`
	WindowStart    placeJSON   `json:"window_start"`
	Count          int64       `json:"count"`
	CountSaturated bool        `json:"count_is_lower_bound,omitempty"`
	Window         []placeJSON `json:"window,omitempty"`
	Cost           int64       `json:"cost,omitempty"`
	Units          int64       `json:"units,omitempty"`
	Span           *spanJSON   `json:"fixed_window,omitempty"`
	Level          string      `json:"bucket_level,omitempty"`
}

// spanJSON is a fixed or first-call window [from, to).
type spanJSON struct {
	FromNs int64 `json:"from_ns"`
	ToNs   int64 `json:"to_ns"`
}

type inFlightJSON struct {
	Max        int        `json:"max_in_flight"`
	Violations int64      `json:"violations"`
	Peak       int64      `json:"peak"`
	PeakAt     placeJSON  `json:"peak_at"`
	First      *placeJSON `json:"first_violation"`
	AtFrom     int64      `json:"in_flight_at_from,omitempty"`
	AfterTo    []Call     `json:"in_flight_after_to,omitempty"`
}

// shardJSON is a shard's bounds, an open end absent, and what merge needs
// to see whether the shards tile the log.
type shardJSON struct {
	From     *int64 `json:"from_ns,omitempty"`
	To       *int64 `json:"to_ns,omitempty"`
	LogStart bool   `json:"log_start,omitempty"`
	Context  int64  `json:"context_sends"`
	PastTo   bool   `json:"sends_after_to,omitempty"`
}

// jsonView builds the JSON document for one result.
type jsonView struct{ res *Result }

func (j jsonView) place(s checker.Send) placeJSON {
	r := Ref(s.Ref)
	p := placeJSON{AtNs: s.At, Line: r.Line()}
	if len(j.res.Files) > 1 {
		p.File = j.res.Files[r.File()].Name
	}
	return p
}

func (j jsonView) violation(v checker.Violation, key string) violationJSON {
	out := violationJSON{
		placeJSON: j.place(v.Send), Key: key, Index: v.Index, WindowStart: j.place(v.WindowStart),
		Count: v.Count, CountSaturated: v.CountSaturated, Cost: v.Cost, Units: v.Units, Level: v.Level,
	}
	if v.Span != nil {
		out.Span = &spanJSON{FromNs: v.Span.From, ToNs: v.Span.To}
	}
	for _, s := range v.Window {
		out.Window = append(out.Window, j.place(s))
	}
	return out
}

func (j jsonView) rule(r checker.RuleReport, key string) ruleCheckJSON {
	start := j.place(r.MaxWindowStart)
	out := ruleCheckJSON{
		Rule: r.Rule.String(), Kind: kindJSON(r.Rule), Unit: r.Rule.Unit, Burst: r.Rule.Burst, Limit: r.Rule.Limit,
		Window: r.Rule.Window.String(), WindowNs: int64(r.Rule.Window),
		Violations: r.Violations, MaxInWindow: r.MaxInWindow, MaxSaturated: r.MaxSaturated,
		MaxWindowStart: &start,
	}
	if r.First != nil {
		v := j.violation(*r.First, key)
		out.First = &v
	}
	for _, v := range r.Listed {
		out.Listed = append(out.Listed, j.violation(v, key))
	}
	return out
}

// kindJSON names a rule's kind, or nothing for the default, sliding.
func kindJSON(r rule.Rule) string {
	if r.Kind == rule.Sliding {
		return ""
	}
	return r.Kind.String()
}

func (j jsonView) inFlight(f *checker.InFlightReport) *inFlightJSON {
	if f == nil {
		return nil
	}
	out := &inFlightJSON{Max: f.Max, Violations: f.Violations, Peak: f.Peak, PeakAt: j.place(f.PeakAt)}
	if f.First != nil {
		p := j.place(*f.First)
		out.First = &p
	}
	return out
}

// overlap adds a shard's calls across its bounds to its in-flight report.
func (j jsonView) overlap(f *inFlightJSON, o *Overlap) {
	if f != nil && o != nil {
		f.AtFrom, f.AfterTo = o.AtFrom, o.AfterTo
	}
}

func (j jsonView) doc() checkJSON {
	res := j.res
	out := checkJSON{
		Sends: res.Sends, FirstNs: res.First, LastNs: res.Last, Boundary: res.Boundary.String(),
		Disorder: disorderJSON{Lines: res.Disorder.Lines, MaxNs: int64(res.Disorder.Max)},
		Rules:    []ruleCheckJSON{}, InFlight: j.inFlight(res.InFlight), Total: res.Violations(),
		NotChecked: res.NotChecked,
	}
	if sh := res.Shard; sh != nil {
		out.Shard = &shardJSON{LogStart: sh.LogStart, Context: res.ShardContext, PastTo: res.ShardPastTo}
		if sh.HasFrom {
			out.Shard.From = &sh.From
		}
		if sh.HasTo {
			out.Shard.To = &sh.To
		}
	}
	for _, f := range res.Files {
		out.Files = append(out.Files, fileJSON{Name: f.Name, Format: f.Format, Column: f.Column,
			Times: f.Detected, Lines: f.Lines, Sends: f.Sends, Skipped: f.Skipped})
	}
	if !res.PerKey {
		for _, r := range res.Groups[0].Report.Rules {
			out.Rules = append(out.Rules, j.rule(r, ""))
		}
		j.overlap(out.InFlight, res.Groups[0].Overlap)
		return out
	}
	// Per key: the top-level rules are totals over every key.
	out.KeysInTotal = len(res.Groups)
	for i, t := range res.Totals {
		tot := ruleCheckJSON{Rule: t.Rule.String(), Kind: kindJSON(t.Rule), Unit: t.Rule.Unit, Burst: t.Rule.Burst, Limit: t.Rule.Limit, Window: t.Rule.Window.String(),
			WindowNs: int64(t.Rule.Window), Violations: t.Violations}
		groups := t.Groups
		tot.KeysViolating = &groups
		for _, g := range res.Groups {
			r := g.Report.Rules[i]
			if r.MaxInWindow > tot.MaxInWindow {
				tot.MaxInWindow, tot.MaxSaturated = r.MaxInWindow, r.MaxSaturated
			}
			if r.First != nil && (tot.First == nil || r.First.Send.At < tot.First.AtNs) {
				v := j.violation(*r.First, keytext.Show(g.Key))
				tot.First = &v
			}
		}
		out.Rules = append(out.Rules, tot)
	}
	for _, g := range res.Groups {
		k := keyJSON{Key: keytext.Show(g.Key), Violations: g.Violations(), Sends: g.Report.Sends, InFlight: j.inFlight(g.InFlight)}
		j.overlap(k.InFlight, g.Overlap)
		for _, r := range g.Report.Rules {
			k.Rules = append(k.Rules, j.rule(r, ""))
		}
		out.Keys = append(out.Keys, k)
	}
	return out
}

// WriteJSON writes the results as one JSON document (docs/json.md); with
// perFile, a document holding each file's report under "per_file".
func WriteJSON(w io.Writer, results []*Result, perFile bool) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	h := buildinfo.NewHeader()
	if !perFile {
		doc := jsonView{results[0]}.doc()
		doc.Header = &h
		return enc.Encode(doc)
	}
	var docs []checkJSON
	for _, r := range results {
		docs = append(docs, jsonView{r}.doc())
	}
	return enc.Encode(struct {
		buildinfo.Header
		PerFile []checkJSON `json:"per_file"`
	}{h, docs})
}

// Formats are the report formats Write takes.
var Formats = []string{"text", "json", "junit", "github"}

// ReportOptions says how Write reports results.
type ReportOptions struct {
	Format string // one of Formats; "" is text
	// MaxKeys caps the keys the text report lists, worst first (0: all).
	MaxKeys int
	// PerFile: the results are one per input file, not one merged stream.
	PerFile bool
	// StepSummary, with the github format, is a file the Markdown summary is
	// appended to ($GITHUB_STEP_SUMMARY); "" writes none.
	StepSummary string
}

// Write writes results in the chosen format; several results (one per file)
// are written one after another, or as one JSON document holding them all.
func Write(w io.Writer, results []*Result, o ReportOptions) error {
	if o.Format == "json" {
		return WriteJSON(w, results, o.PerFile)
	}
	for i, res := range results {
		var err error
		switch o.Format {
		case "junit":
			err = WriteJUnit(w, res)
		case "github":
			err = WriteGitHub(w, res)
			if err == nil && o.StepSummary != "" {
				err = appendStepSummary(o.StepSummary, res)
			}
		case "text", "":
			if i > 0 {
				io.WriteString(w, "\n")
			}
			err = WriteText(w, res, o.MaxKeys)
		default:
			err = fmt.Errorf("logcheck: format %q: want one of %v", o.Format, Formats)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// appendStepSummary adds the Markdown summary to the file GitHub Actions
// shows on the run's page.
func appendStepSummary(path string, res *Result) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := WriteStepSummary(f, res); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
