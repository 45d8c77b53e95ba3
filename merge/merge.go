package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

func Files(paths []string, opt Options) (*report.Result, error) {
	docs := make([][]byte, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		docs[i] = b
	}
	return Reports(paths, docs, opt)
}

// Merge adds the JSON reports of checks on time shards of one log (check
// --from/--to --format json, one document each, in any order) into the
// report of the whole: violations and sends add up, the largest count in
// one window is the largest of the shards' (with the earliest such
// window), and the first violation is the earliest, its index counted over
// the shards before it. The listed violations are the first opt.List of
// the shards' lists (which must be the shards' own List): a shard lists
// its first judged violations.
//
// Merge refuses, with a *Error naming the report and the reason,
// reports that do not add up to one log's: made by another rlcheck, of
// other rules or inputs, judging a part of the log twice (duplicates,
// overlaps) or, unless opt.Subset, leaving one out (gaps), and reports
// whose counts contradict one another.
func Reports(names []string, docs [][]byte, opt Options) (*report.Result, error) {
	if len(docs) == 0 {
		return nil, errors.New("merge: no reports")
	}
	var spans []span
	for i, d := range docs {
		var doc report.Doc
		if err := json.Unmarshal(d, &doc); err != nil {
			return nil, mergeErr(names[i], "not a check report in JSON: %v", err)
		}
		if doc.Rules == nil || doc.Boundary == "" {
			return nil, mergeErr(names[i], "not a check report in JSON (rlcheck check --format json, without --per-file)")
		}
		if err := validate(names[i], doc); err != nil {
			return nil, err
		}
		if i > 0 {
			if err := sameRun(names[i], doc, names[0], spans[0].doc); err != nil {
				return nil, err
			}
		}
		spans = append(spans, spanOf(names[i], doc))
	}
	if err := tile(spans, opt.Subset); err != nil {
		return nil, err
	}
	res, err := mergeSpans(spans, opt.List)
	if err != nil {
		return nil, err
	}
	if opt.Subset {
		lo, hi := spans[0].lo, spans[len(spans)-1].hi
		res.Shard = &report.Shard{From: lo, HasFrom: lo != math.MinInt64, To: hi, HasTo: hi != math.MaxInt64}
	}
	return res, nil
}

// shardMerger adds up reports that tile the log, in time order.
type shardMerger struct {
	res   *report.Result
	list  int
	files map[string]int
	byKey map[string]int
	// The calls of earlier shards still in flight at their ends, per key.
	overhang map[string][]report.Call
	// The grand totals so far: every count the merged report adds up, per
	// file, key or rule, is at most one of them, so that none can wrap
	// while they stay within int64.
	sends, lines, skipped, disorder, violations int64
}

// total adds n, a count of report name, to *sum, refusing a sum past
// int64: a wrapped sum would turn the shards' violations into a small or
// negative count, and the verdict into OK.
func total(name, field string, sum *int64, n int64) error {
	if n > math.MaxInt64-*sum {
		return mergeErr(name, "its %s, %d, carry the shards' sum past %d", field, n, int64(math.MaxInt64))
	}
	*sum += n
	return nil
}

// totals adds a report's counts to the grand totals.
func (m *shardMerger) totals(name string, doc report.Doc) error {
	var lines, skipped int64
	for _, f := range doc.Files {
		if err := total(name, "lines", &lines, f.Lines); err != nil {
			return err
		}
		if err := total(name, "skipped lines", &skipped, f.Skipped); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		field string
		sum   *int64
		n     int64
	}{{"sends", &m.sends, doc.Sends}, {"lines", &m.lines, lines}, {"skipped lines", &m.skipped, skipped},
		{"out-of-order lines", &m.disorder, doc.Disorder.Lines}, {"violations", &m.violations, doc.Total}} {
		if err := total(name, c.field, c.sum, c.n); err != nil {
			return err
		}
	}
	return nil
}

// mergeSpans adds up reports that tile the log, in time order.
func mergeSpans(spans []span, list int) (*report.Result, error) {
	base := spans[0].doc
	res := &report.Result{PerKey: perKey(base)}
	var err error
	if res.Boundary, err = rule.ParseBoundary(base.Boundary); err != nil {
		return nil, mergeErr(spans[0].name, "%v", err)
	}
	for _, r := range base.Rules {
		parsed, err := ruleOf(r)
		if err != nil {
			return nil, mergeErr(spans[0].name, "rule %s: %v", r.Rule, err)
		}
		res.Rules = append(res.Rules, parsed)
	}
	if base.InFlight != nil {
		res.MaxInFlight = base.InFlight.Max
	}
	m := &shardMerger{res: res, list: list, files: map[string]int{}, byKey: map[string]int{}, overhang: map[string][]report.Call{}}
	first := true
	for _, s := range spans {
		doc := s.doc
		if doc.Sends > 0 {
			if first || doc.FirstNs < res.First {
				res.First = doc.FirstNs
			}
			if first || doc.LastNs > res.Last {
				res.Last = doc.LastNs
			}
			first = false
		}
		if err := m.totals(s.name, doc); err != nil {
			return nil, err
		}
		if err := m.add(s.name, doc); err != nil {
			return nil, err
		}
	}
	lo, hi := res.First, res.Last
	res = report.New(*res, res.Groups)
	res.First, res.Last = lo, hi // keys' reports carry no times
	if len(res.Files) == 1 {
		res.Files[0].Sends = res.Sends
	}
	return res, nil
}

// add adds one report.
func (m *shardMerger) add(name string, doc report.Doc) error {
	res := m.res
	fileOf := func(p report.PlaceDoc) int {
		name := p.File
		if name == "" && len(doc.Files) == 1 {
			name = doc.Files[0].Name
		}
		if _, ok := m.files[name]; !ok {
			m.files[name] = len(res.Files)
			res.Files = append(res.Files, report.FileInfo{Name: name})
		}
		return m.files[name]
	}
	for _, f := range doc.Files {
		fi := &res.Files[fileOf(report.PlaceDoc{File: f.Name})]
		fi.Format, fi.Column, fi.Detected = f.Format, f.Column, f.Times
		fi.Lines += f.Lines
		fi.Skipped += f.Skipped
	}
	send := func(p report.PlaceDoc) checker.Send {
		return checker.Send{At: p.AtNs, Ref: int64(report.MakeRef(fileOf(p), p.Line))}
	}
	res.Disorder.Lines += doc.Disorder.Lines
	res.Disorder.Max = max(res.Disorder.Max, time.Duration(doc.Disorder.MaxNs))
	for _, n := range doc.NotChecked {
		if !slices.Contains(res.NotChecked, n) {
			res.NotChecked = append(res.NotChecked, n)
		}
	}
	keys := doc.Keys
	if !res.PerKey {
		keys = []report.KeyDoc{{Sends: doc.Sends, Rules: doc.Rules, InFlight: doc.InFlight}}
	}
	for _, k := range keys {
		gi, ok := m.byKey[k.Key]
		if !ok {
			gi = len(res.Groups)
			m.byKey[k.Key] = gi
			g := report.Group{Key: k.Key, Report: checker.Report{Boundary: res.Boundary}}
			for _, r := range res.Rules {
				g.Report.Rules = append(g.Report.Rules, checker.RuleReport{Rule: r})
			}
			res.Groups = append(res.Groups, g)
		}
		if f := k.InFlight; f != nil {
			if err := mergeInFlight(&res.Groups[gi], f, m.overhang, k.Key, doc, name, send); err != nil {
				return err
			}
		}
		g := &res.Groups[gi].Report
		if len(k.Rules) != len(g.Rules) {
			return mergeErr(name, "key %q has %d rules, want %d", k.Key, len(k.Rules), len(g.Rules))
		}
		for i, r := range k.Rules {
			if err := m.addRule(name, &g.Rules[i], r, g.Sends, send); err != nil {
				return err
			}
		}
		g.Sends += k.Sends
	}
	return nil
}

// addRule adds a report's rule report to m, the merged one, where before
// counts the sends of the earlier reports.
func (mg *shardMerger) addRule(name string, m *checker.RuleReport, r report.RuleDoc, before int64, send func(report.PlaceDoc) checker.Send) error {
	m.Violations += r.Violations
	var start checker.Send
	if r.MaxWindowStart != nil {
		start = send(*r.MaxWindowStart)
	}
	if r.MaxInWindow > m.MaxInWindow || (r.MaxInWindow == m.MaxInWindow && r.MaxInWindow > 0 && start.At < m.MaxWindowStart.At) {
		m.MaxInWindow, m.MaxWindowStart, m.MaxSaturated = r.MaxInWindow, start, r.MaxSaturated
	}
	violation := func(v report.ViolationDoc) checker.Violation {
		out := checker.Violation{Send: send(v.PlaceDoc), Index: v.Index + before,
			WindowStart: send(v.WindowStart), Count: v.Count, CountSaturated: v.CountSaturated,
			WindowCosts: v.WindowCosts, Cost: v.Cost, Units: v.Units, Level: v.Level}
		if v.Span != nil {
			out.Span = &checker.Span{From: v.Span.FromNs, To: v.Span.ToNs}
		}
		for _, p := range v.Window {
			out.Window = append(out.Window, send(p))
		}
		return out
	}
	if v := r.First; v != nil && m.First == nil {
		first := violation(*v)
		first.Window, first.WindowCosts = nil, nil
		m.First = &first
	}
	if len(r.Listed) > 0 && mg.list <= 0 {
		return fmt.Errorf("%s: the shards list violations: give merge the merge.Options.List they were checked with", name)
	}
	for _, v := range r.Listed {
		if len(m.Listed) < mg.list {
			m.Listed = append(m.Listed, violation(v))
		}
	}
	return nil
}

// mergeInFlight adds a shard's in-flight report of one key to the group's.
// The shard's verdict is exact only if its context held every call still
// in flight at its start: the calls of earlier shards that end after it,
// which their reports list (in_flight_after_to).
func mergeInFlight(g *report.Group, f *report.InFlightDoc, overhang map[string][]report.Call, key string, doc report.Doc, name string, send func(report.PlaceDoc) checker.Send) error {
	if doc.Shard != nil && doc.Shard.From != nil {
		from := *doc.Shard.From
		var want int64
		earliest := int64(math.MaxInt64)
		for _, c := range overhang[key] {
			if c.End > from {
				want++
				earliest = min(earliest, c.Start)
			}
		}
		if want != f.AtFrom {
			at := report.InstantFormatter(from)
			return fmt.Errorf("merge: %s (report.Shard.From %s): %d calls of key %q that started before report.Shard.From were still in flight at it, and its input held %d of them: "+
				"an in-flight cap needs its input to start at or before %s, the start of the earliest (%v before report.Shard.From), besides the longest window",
				name, at(from), want, key, f.AtFrom, at(earliest), time.Duration(from-earliest))
		}
	}
	overhang[key] = append(overhang[key], f.AfterTo...)
	if g.InFlight == nil {
		g.InFlight = &checker.InFlightReport{Max: f.Max}
	}
	m := g.InFlight
	m.Violations += f.Violations
	if f.Peak > m.Peak {
		m.Peak, m.PeakAt = f.Peak, send(f.PeakAt)
	}
	if f.First != nil && m.First == nil {
		first := send(*f.First)
		m.First = &first
	}
	return nil
}
