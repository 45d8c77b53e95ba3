package report

import (
	"encoding/json"
	"io"
	"math"

	"github.com/rlcheck/rlcheck/buildinfo"
	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/keytext"
	"github.com/rlcheck/rlcheck/rule"
)

// JSON view of a check (docs/json.md). Times are integer nanoseconds;
// "window" is Go's time.Duration string. Only the top-level document
// carries the header, not each file's report under "per_file".
type Doc struct {
	*buildinfo.Header
	Files       []FileDoc    `json:"files"`
	Sends       int64        `json:"sends"`
	FirstNs     int64        `json:"first_ns"`
	LastNs      int64        `json:"last_ns"`
	Boundary    string       `json:"boundary"`
	Disorder    DisorderDoc  `json:"out_of_order"`
	Rules       []RuleDoc    `json:"rules"`
	InFlight    *InFlightDoc `json:"in_flight,omitempty"`
	NotChecked  []string     `json:"not_checked,omitempty"`
	Shard       *ShardDoc    `json:"shard,omitempty"`
	Keys        []KeyDoc     `json:"keys,omitempty"`
	Total       int64        `json:"violations"`
	KeysInTotal int          `json:"key_count,omitempty"`
	// KeysListed, when set, says Keys lists only the worst of KeysInTotal.
	KeysListed *int `json:"keys_listed,omitempty"`
	// Statuses, for a log judged by its calls' statuses.
	Statuses *StatusesDoc `json:"statuses,omitempty"`
}

// StatusesDoc says what a log's statuses made of its calls.
type StatusesDoc struct {
	Reading string `json:"reading"` // count or free
	Refused int64  `json:"refused"`
	LeftOut int64  `json:"other_status"`
	// Unexplained: refused calls no rule would have refused (reading
	// count only).
	Unexplained int64 `json:"refusals_unexplained"`
}

type FileDoc struct {
	Name    string `json:"name"`
	Format  string `json:"input_format"`
	Column  string `json:"time_column,omitempty"`
	Times   string `json:"timestamps,omitempty"`
	Lines   int64  `json:"lines"`
	Sends   int64  `json:"sends"`
	Skipped int64  `json:"skipped_lines"`
	// SkippedFirst are the first few lines skipped, each with its error.
	SkippedFirst []SkipDoc `json:"skipped_first,omitempty"`
}

// SkipDoc is one line --skip-invalid passed over.
type SkipDoc struct {
	Line  int64  `json:"line"`
	Error string `json:"error"`
}

// skipDocs lists the skipped lines a file report keeps.
func skipDocs(skips []error) []SkipDoc {
	var out []SkipDoc
	for _, e := range skips {
		d := SkipDoc{Error: e.Error()}
		if l, ok := e.(interface{ LineNumber() int64 }); ok {
			d.Line = l.LineNumber()
		}
		out = append(out, d)
	}
	return out
}

type DisorderDoc struct {
	Lines int64 `json:"lines"`
	MaxNs int64 `json:"max_ns"`
}

type KeyDoc struct {
	Key        string       `json:"key"`
	Violations int64        `json:"violations"`
	Sends      int64        `json:"sends"`
	Rules      []RuleDoc    `json:"rules"`
	InFlight   *InFlightDoc `json:"in_flight,omitempty"`
}

type RuleDoc struct {
	Rule           string    `json:"rule"`
	Kind           string    `json:"kind,omitempty"` // absent for sliding rules
	Unit           string    `json:"unit,omitempty"` // absent for call rules
	Burst          int       `json:"burst,omitempty"`
	Limit          int       `json:"limit"`
	Window         string    `json:"window"`
	WindowNs       int64     `json:"window_ns"`
	Violations     int64     `json:"violations"`
	KeysViolating  *int      `json:"keys_with_violations,omitempty"`
	MaxInWindow    int64     `json:"max_in_window"`
	MaxSaturated   bool      `json:"max_in_window_is_lower_bound,omitempty"`
	MaxWindowStart *PlaceDoc `json:"max_window_start,omitempty"`
	// Usage is MaxInWindow as a share of Limit (1: a window held the
	// limit exactly); absent for a bucket, which has no window.
	Usage *float64 `json:"usage,omitempty"`
	// Explained counts the refused calls the rule would have refused too,
	// in a log judged by its statuses.
	Explained int64          `json:"refusals_explained,omitempty"`
	First     *ViolationDoc  `json:"first_violation"`
	Listed    []ViolationDoc `json:"violations_listed,omitempty"`
}

type PlaceDoc struct {
	AtNs int64  `json:"at_ns"`
	File string `json:"file,omitempty"`
	Line int64  `json:"line"`
}

type ViolationDoc struct {
	PlaceDoc
	Key            string     `json:"key,omitempty"`
	Index          int64      `json:"index"`
	WindowStart    PlaceDoc   `json:"window_start"`
	Count          int64      `json:"count"`
	CountSaturated bool       `json:"count_is_lower_bound,omitempty"`
	Window         []PlaceDoc `json:"window,omitempty"`
	WindowCosts    []int64    `json:"window_costs,omitempty"` // cost rules: each window send's cost
	Cost           int64      `json:"cost,omitempty"`
	Units          int64      `json:"units,omitempty"`
	Span           *SpanDoc   `json:"fixed_window,omitempty"`
	Level          string     `json:"bucket_level,omitempty"`
}

// spanJSON is a fixed or first-call window [from, to).
type SpanDoc struct {
	FromNs int64 `json:"from_ns"`
	ToNs   int64 `json:"to_ns"`
}

type InFlightDoc struct {
	Max        int       `json:"max_in_flight"`
	Violations int64     `json:"violations"`
	Peak       int64     `json:"peak"`
	PeakAt     PlaceDoc  `json:"peak_at"`
	First      *PlaceDoc `json:"first_violation"`
	AtFrom     int64     `json:"in_flight_at_from,omitempty"`
	AfterTo    []Call    `json:"in_flight_after_to,omitempty"`
}

// shardJSON is a shard's bounds, an open end absent, and what merge needs
// to see whether the shards tile the log.
type ShardDoc struct {
	From     *int64 `json:"from_ns,omitempty"`
	To       *int64 `json:"to_ns,omitempty"`
	LogStart bool   `json:"log_start,omitempty"`
	Context  int64  `json:"context_sends"`
	PastTo   bool   `json:"sends_after_to,omitempty"`
}

// jsonView builds the JSON document for one result.
type jsonView struct{ res *Result }

func (j jsonView) place(s checker.Send) PlaceDoc {
	r := Ref(s.Ref)
	p := PlaceDoc{AtNs: s.At, Line: r.Line()}
	if len(j.res.Files) > 1 {
		p.File = j.res.Files[r.File()].Name
	}
	return p
}

func (j jsonView) violation(v checker.Violation, key string, costs bool) ViolationDoc {
	out := ViolationDoc{
		PlaceDoc: j.place(v.Send), Key: key, Index: v.Index, WindowStart: j.place(v.WindowStart),
		Count: v.Count, CountSaturated: v.CountSaturated, Cost: v.Cost, Units: v.Units, Level: v.Level,
	}
	if v.Span != nil {
		out.Span = &SpanDoc{FromNs: v.Span.From, ToNs: v.Span.To}
	}
	for _, s := range v.Window {
		out.Window = append(out.Window, j.place(s))
	}
	if costs {
		out.WindowCosts = v.WindowCosts
	}
	return out
}

func (j jsonView) rule(r checker.RuleReport, key string) RuleDoc {
	start := j.place(r.MaxWindowStart)
	out := RuleDoc{
		Rule: r.Rule.String(), Kind: kindJSON(r.Rule), Unit: r.Rule.Unit, Burst: r.Rule.Burst, Limit: r.Rule.Limit,
		Window: r.Rule.Window.String(), WindowNs: int64(r.Rule.Window),
		Violations: r.Violations, MaxInWindow: r.MaxInWindow, MaxSaturated: r.MaxSaturated,
		MaxWindowStart: &start, Usage: j.usage(r.Rule, r.MaxInWindow), Explained: r.Explained,
	}
	if r.First != nil {
		v := j.violation(*r.First, key, r.Rule.Unit != "")
		out.First = &v
	}
	for _, v := range r.Listed {
		out.Listed = append(out.Listed, j.violation(v, key, r.Rule.Unit != ""))
	}
	return out
}

// usage is the share of r's limit max sends (or units) fill, to four
// decimals; nil for a bucket, or when the fullest window was not computed.
func (j jsonView) usage(r rule.Rule, max int64) *float64 {
	if r.Kind == rule.Bucket || r.Limit <= 0 || j.res.NoMaxInWindow {
		return nil
	}
	u := math.Round(float64(max)/float64(r.Limit)*1e4) / 1e4
	return &u
}

// kindJSON names a rule's kind, or nothing for the default, sliding.
func kindJSON(r rule.Rule) string {
	if r.Kind == rule.Sliding {
		return ""
	}
	return r.Kind.String()
}

func (j jsonView) inFlight(f *checker.InFlightReport) *InFlightDoc {
	if f == nil {
		return nil
	}
	out := &InFlightDoc{Max: f.Max, Violations: f.Violations, Peak: f.Peak, PeakAt: j.place(f.PeakAt)}
	if f.First != nil {
		p := j.place(*f.First)
		out.First = &p
	}
	return out
}

// overlap adds a shard's calls across its bounds to its in-flight report.
func (j jsonView) overlap(f *InFlightDoc, o *Overlap) {
	if f != nil && o != nil {
		f.AtFrom, f.AfterTo = o.AtFrom, o.AfterTo
	}
}

func (j jsonView) doc() Doc {
	res := j.res
	out := Doc{
		Sends: res.Sends, FirstNs: res.First, LastNs: res.Last, Boundary: res.Boundary.String(),
		Disorder: DisorderDoc{Lines: res.Disorder.Lines, MaxNs: int64(res.Disorder.Max)},
		Rules:    []RuleDoc{}, InFlight: j.inFlight(res.InFlight), Total: res.Violations(),
		NotChecked: res.NotChecked,
	}
	if st := res.Statuses; st != nil {
		out.Statuses = &StatusesDoc{Reading: st.Refusals.Word(), Refused: st.Refused, LeftOut: st.LeftOut, Unexplained: st.Unexplained}
	}
	if sh := res.Shard; sh != nil {
		out.Shard = &ShardDoc{LogStart: sh.LogStart, Context: res.ShardContext, PastTo: res.ShardPastTo}
		if sh.HasFrom {
			out.Shard.From = &sh.From
		}
		if sh.HasTo {
			out.Shard.To = &sh.To
		}
	}
	for _, f := range res.Files {
		out.Files = append(out.Files, FileDoc{Name: f.Name, Format: f.Format, Column: f.Column,
			Times: f.Detected, Lines: f.Lines, Sends: f.Sends, Skipped: f.Skipped, SkippedFirst: skipDocs(f.Skips)})
	}
	if !res.PerKey {
		for _, r := range res.Groups[0].Report.Rules {
			out.Rules = append(out.Rules, j.rule(r, ""))
		}
		j.overlap(out.InFlight, res.Groups[0].Overlap)
		return out
	}
	// Per key: the top-level rules are totals over every key.
	out.KeysInTotal = res.Keys()
	if res.Unlisted != nil {
		listed := len(res.Groups)
		out.KeysListed = &listed
	}
	for _, t := range res.Totals {
		tot := RuleDoc{Rule: t.Rule.String(), Kind: kindJSON(t.Rule), Unit: t.Rule.Unit, Burst: t.Rule.Burst, Limit: t.Rule.Limit, Window: t.Rule.Window.String(),
			WindowNs: int64(t.Rule.Window), Violations: t.Violations, MaxInWindow: t.MaxInWindow, MaxSaturated: t.MaxSaturated,
			Usage: j.usage(t.Rule, t.MaxInWindow), Explained: t.Explained}
		groups := t.Groups
		tot.KeysViolating = &groups
		if t.First != nil {
			v := j.violation(*t.First, keytext.Show(t.FirstKey), false)
			tot.First = &v
		}
		out.Rules = append(out.Rules, tot)
	}
	for _, g := range res.Groups {
		k := KeyDoc{Key: keytext.Show(g.Key), Violations: g.Violations(), Sends: g.Report.Sends, InFlight: j.inFlight(g.InFlight)}
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
func writeJSON(w io.Writer, results []*Result, perFile bool) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	h := buildinfo.NewHeader()
	if !perFile {
		doc := jsonView{results[0]}.doc()
		doc.Header = &h
		return enc.Encode(doc)
	}
	var docs []Doc
	for _, r := range results {
		docs = append(docs, jsonView{r}.doc())
	}
	return enc.Encode(struct {
		buildinfo.Header
		PerFile []Doc `json:"per_file"`
	}{h, docs})
}
