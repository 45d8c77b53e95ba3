package merge

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/buildinfo"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

// Options adjusts Merge.
type Options struct {
	// List is the List the shards were checked with: the merged report
	// keeps the first List of their listed violations.
	List int
	// Subset accepts shards that leave parts of the log out (a deliberate
	// subset): the merged report then speaks of the shards' sends only.
	// Overlapping and duplicated shards are refused all the same.
	Subset bool
}

// Error is Merge's refusal of a set of reports: the report it
// concerns, as named to Merge, and why.
type Error struct {
	Name   string // "" when no single report is at fault
	Reason string
	// Gap says that the shards leave sends out, which Options.Subset
	// would accept.
	Gap bool
}

func (e *Error) Error() string {
	if e.Name == "" {
		return "merge: " + e.Reason
	}
	return "merge: " + e.Name + ": " + e.Reason
}

func mergeErr(name, format string, args ...any) error {
	return &Error{Name: name, Reason: fmt.Sprintf(format, args...)}
}

// span is the part of the log a report judges, [lo, hi); an open end is
// math.MinInt64 or math.MaxInt64.
type span struct {
	lo, hi int64
	name   string
	doc    report.Doc
}

func spanOf(name string, d report.Doc) span {
	s := span{lo: math.MinInt64, hi: math.MaxInt64, name: name, doc: d}
	if sh := d.Shard; sh != nil {
		// An input that starts the log and holds nothing before From judges
		// every send from the log's first.
		if sh.From != nil && !(sh.LogStart && sh.Context == 0) {
			s.lo = *sh.From
		}
		if sh.To != nil {
			s.hi = *sh.To
		}
	}
	return s
}

// tile orders the reports by the part of the log each judges and checks
// that they judge every send once: no report twice, no overlap, and,
// unless subset, no gap, at either end or between shards.
func tile(spans []span, subset bool) error {
	slices.SortStableFunc(spans, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.lo, b.lo), cmp.Compare(a.hi, b.hi), cmp.Compare(a.doc.FirstNs, b.doc.FirstNs))
	})
	at := report.InstantFormatter(spans[0].doc.FirstNs)
	bound := func(t int64) string {
		switch t {
		case math.MinInt64:
			return "the log's start"
		case math.MaxInt64:
			return "its end"
		}
		return at(t)
	}
	judges := func(s span) string { return fmt.Sprintf("judges [%s, %s)", bound(s.lo), bound(s.hi)) }
	gap := func(name, format string, args ...any) error {
		return &Error{Name: name, Reason: fmt.Sprintf(format, args...) + "; merge the shard that judges them, or merge the shards as a deliberate subset", Gap: true}
	}
	if first := spans[0]; first.lo != math.MinInt64 && !subset {
		return gap(first.name, "the first shard %s: the sends before %s are in no report", judges(first), bound(first.lo))
	}
	for i := 1; i < len(spans); i++ {
		a, b := spans[i-1], spans[i]
		switch {
		case a.lo == b.lo && a.hi == b.hi:
			return mergeErr(b.name, "a duplicate of %s: both %s, so its sends would count twice", a.name, judges(a))
		case a.hi > b.lo:
			return mergeErr(b.name, "overlaps %s: it %s and %s %s, so the sends in [%s, %s) would count twice",
				a.name, judges(b), a.name, judges(a), bound(b.lo), bound(min(a.hi, b.hi)))
		case a.hi < b.lo && !subset:
			return gap(b.name, "it %s and %s, before it, ends at %s: the sends in [%s, %s) are in no report",
				judges(b), a.name, bound(a.hi), bound(a.hi), bound(b.lo))
		}
	}
	// A last shard whose input ended before its end judged the log's last
	// send; one whose input went on did not.
	if last := spans[len(spans)-1]; last.hi != math.MaxInt64 && last.doc.Shard.PastTo && !subset {
		return gap(last.name, "the last shard %s, and its input went on: the sends from %s on are in no report", judges(last), bound(last.hi))
	}
	return nil
}

// sameRun checks that d was made by the same rlcheck as base, over the same
// kind of input, with the same rules.
func sameRun(name string, d report.Doc, baseName string, base report.Doc) error {
	if d.SchemaVersion != base.SchemaVersion || d.Version != base.Version {
		return mergeErr(name, "made by rlcheck %s (schema %d), but %s by rlcheck %s (schema %d)",
			d.Version, d.SchemaVersion, baseName, base.Version, base.SchemaVersion)
	}
	if d.Boundary != base.Boundary {
		return mergeErr(name, "checks %s windows, but %s checks %s windows", d.Boundary, baseName, base.Boundary)
	}
	if rulesText(d.Rules) != rulesText(base.Rules) {
		return mergeErr(name, "checks %s, but %s checks %s", rulesText(d.Rules), baseName, rulesText(base.Rules))
	}
	capOf := func(d report.Doc) int {
		if d.InFlight == nil {
			return 0
		}
		return d.InFlight.Max
	}
	if capOf(d) != capOf(base) {
		return mergeErr(name, "checks an in-flight cap of %d, but %s of %d (0: none)", capOf(d), baseName, capOf(base))
	}
	if perKey(d) != perKey(base) {
		return mergeErr(name, "split per key: %v, but %s: %v", perKey(d), baseName, perKey(base))
	}
	named := func(d report.Doc) bool {
		for _, f := range d.Files {
			if f.Name == "-" || f.Name == "" || f.Name[0] == '<' {
				return false
			}
		}
		return true
	}
	if len(d.Files) != len(base.Files) {
		return mergeErr(name, "read %d inputs, but %s read %d", len(d.Files), baseName, len(base.Files))
	}
	for i, f := range d.Files {
		b := base.Files[i]
		if named(d) && named(base) && f.Name != b.Name {
			return mergeErr(name, "read %s, but %s read %s: shards of one log read the same files", f.Name, baseName, b.Name)
		}
		if f.Format != b.Format || f.Column != b.Column || f.Times != b.Times {
			return mergeErr(name, "read %s as %s (time column %q, %s), but %s read %s as %s (time column %q, %s)",
				f.Name, f.Format, f.Column, f.Times, baseName, b.Name, b.Format, b.Column, b.Times)
		}
	}
	return nil
}

// perKey reports whether d was split per key: it names keys, or, a shard
// that judged no send, its rules are per-key totals, which alone carry
// keys_with_violations.
func perKey(d report.Doc) bool {
	return d.KeysInTotal > 0 || len(d.Keys) > 0 || len(d.Rules) > 0 && d.Rules[0].KeysViolating != nil
}

// ruleOf reads a report's rule from its text, which must agree with the
// limit, window, unit, kind and burst the report gives beside it.
func ruleOf(r report.RuleDoc) (rule.Rule, error) {
	parsed, err := rule.Parse(r.Rule)
	kind := ""
	if parsed.Kind != rule.Sliding {
		kind = parsed.Kind.String()
	}
	if err != nil || parsed.Limit != r.Limit || parsed.Window != time.Duration(r.WindowNs) ||
		parsed.Unit != r.Unit || kind != r.Kind || parsed.Burst != r.Burst {
		return rule.Rule{}, fmt.Errorf("the rule's text does not match its limit %d, window_ns %d, unit %q, kind %q and burst %d",
			r.Limit, r.WindowNs, r.Unit, r.Kind, r.Burst)
	}
	return parsed, nil
}

// contractText is a rule's contract as text: its bookkeeping left out,
// its unit and kind kept.
func contractText(r report.RuleDoc) string {
	if parsed, err := rule.Parse(r.Rule); err == nil {
		return parsed.Contract().String()
	}
	return r.Rule
}

func rulesText(rs []report.RuleDoc) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += ", "
		}
		s += contractText(r)
	}
	if s == "" {
		return "no rules"
	}
	return s
}

// validate checks that a report's counts agree with one another, so that a
// report edited by hand, or cut short, is refused rather than added up.
func validate(name string, d report.Doc) error {
	if d.Header == nil || d.SchemaVersion == 0 || d.Version == "" {
		return mergeErr(name, "no schema_version or version: not a report of rlcheck check --format json")
	}
	if d.SchemaVersion != buildinfo.SchemaVersion {
		return mergeErr(name, "schema_version %d: this rlcheck reads %d", d.SchemaVersion, buildinfo.SchemaVersion)
	}
	bad := func(format string, args ...any) error {
		return mergeErr(name, "the report contradicts itself: "+format, args...)
	}
	for _, c := range []struct {
		field string
		n     int64
	}{{"sends", d.Sends}, {"violations", d.Total}, {"key_count", int64(d.KeysInTotal)},
		{"out_of_order.lines", d.Disorder.Lines}, {"out_of_order.max_ns", d.Disorder.MaxNs}} {
		if c.n < 0 {
			return bad("%s is %d", c.field, c.n)
		}
	}
	for _, f := range d.Files {
		if f.Lines < 0 || f.Sends < 0 || f.Skipped < 0 {
			return bad("file %s: lines %d, sends %d, skipped_lines %d", f.Name, f.Lines, f.Sends, f.Skipped)
		}
	}
	in := func(int64) bool { return true }
	if sh := d.Shard; sh != nil {
		if sh.Context < 0 {
			return bad("shard.context_sends is %d", sh.Context)
		}
		if sh.From != nil && sh.To != nil && *sh.To <= *sh.From {
			return bad("shard.to_ns %d is not after from_ns %d", *sh.To, *sh.From)
		}
		if sh.PastTo && sh.To == nil {
			return bad("shard.sends_after_to without a to_ns")
		}
		in = func(t int64) bool { return (sh.From == nil || t >= *sh.From) && (sh.To == nil || t < *sh.To) }
	}
	if d.Sends > 0 && (d.FirstNs < 0 || d.FirstNs > d.LastNs || !in(d.FirstNs) || !in(d.LastNs)) {
		return bad("first_ns %d and last_ns %d: negative (check refuses such a time), not in order, or outside the shard", d.FirstNs, d.LastNs)
	}
	if d.Sends == 0 && d.Total > 0 {
		return bad("%d violations among no sends", d.Total)
	}
	seen := map[string]bool{}
	for _, r := range d.Rules {
		k := contractText(r)
		if seen[k] {
			return bad("rule %s is listed twice", r.Rule)
		}
		seen[k] = true
	}
	if !perKey(d) {
		n, err := scopeViolations(d.Rules, d.Sends, d.InFlight, in)
		if err != nil {
			return bad("%v", err)
		}
		if n != d.Total {
			return bad("violations is %d, but its rules and in-flight cap count %d", d.Total, n)
		}
		return nil
	}
	return validateKeys(d, in, bad)
}

// validateKeys checks a per-key report: each key on its own, and the
// totals against the keys.
func validateKeys(d report.Doc, in func(int64) bool, bad func(string, ...any) error) error {
	if d.KeysInTotal != len(d.Keys) {
		return bad("key_count is %d, but %d keys are listed", d.KeysInTotal, len(d.Keys))
	}
	var sends, total, inFlight int64
	ruleSums := make([]int64, len(d.Rules))
	add := func(sum *int64, n int64, what string) error { return addKeys(sum, n, what, bad) }
	for _, k := range d.Keys {
		if len(k.Rules) != len(d.Rules) {
			return bad("key %q has %d rules, the report %d", k.Key, len(k.Rules), len(d.Rules))
		}
		if k.Sends <= 0 {
			return bad("key %q has %d sends", k.Key, k.Sends)
		}
		if (k.InFlight == nil) != (d.InFlight == nil) {
			return bad("key %q and the report disagree on the in-flight cap", k.Key)
		}
		n, err := scopeViolations(k.Rules, k.Sends, k.InFlight, in)
		if err != nil {
			return bad("key %q: %v", k.Key, err)
		}
		if n != k.Violations {
			return bad("key %q: violations is %d, but its rules and in-flight cap count %d", k.Key, k.Violations, n)
		}
		for i, r := range k.Rules {
			if contractText(r) != contractText(d.Rules[i]) {
				return bad("key %q checks %s where the report checks %s", k.Key, r.Rule, d.Rules[i].Rule)
			}
			if err := add(&ruleSums[i], r.Violations, "violations of "+r.Rule); err != nil {
				return err
			}
		}
		if k.InFlight != nil {
			if err := add(&inFlight, k.InFlight.Violations, "in-flight violations"); err != nil {
				return err
			}
		}
		if err := add(&sends, k.Sends, "sends"); err != nil {
			return err
		}
		if err := add(&total, k.Violations, "violations"); err != nil {
			return err
		}
	}
	if sends != d.Sends || total != d.Total {
		return bad("sends %d and violations %d, but its keys add up to %d and %d", d.Sends, d.Total, sends, total)
	}
	for i, r := range d.Rules {
		if _, err := scopeViolations([]report.RuleDoc{r}, d.Sends, nil, in); err != nil {
			return bad("%v", err)
		}
		if r.Violations != ruleSums[i] {
			return bad("rule %s: violations is %d, but its keys add up to %d", r.Rule, r.Violations, ruleSums[i])
		}
	}
	if d.InFlight != nil && d.InFlight.Violations != inFlight {
		return bad("in_flight.violations is %d, but its keys add up to %d", d.InFlight.Violations, inFlight)
	}
	return nil
}

// addKeys adds a key's count n of what to *sum, refusing a negative count
// or a sum past int64, which could wrap into agreeing with a forged total.
func addKeys(sum *int64, n int64, what string, bad func(string, ...any) error) error {
	if n < 0 || n > math.MaxInt64-*sum {
		return bad("its keys' %s add up past %d, or one is negative (%d)", what, int64(math.MaxInt64), n)
	}
	*sum += n
	return nil
}

// scopeViolations checks the rule reports and in-flight report of one
// stream of sends (the whole, or one key's) and returns their violations.
func scopeViolations(rules []report.RuleDoc, sends int64, f *report.InFlightDoc, in func(int64) bool) (int64, error) {
	var n int64
	for _, r := range rules {
		if err := checkRule(r, sends, in); err != nil {
			return 0, fmt.Errorf("rule %s: %w", r.Rule, err)
		}
		if r.Violations > math.MaxInt64-n {
			return 0, fmt.Errorf("the rules' violations add up past %d", int64(math.MaxInt64))
		}
		n += r.Violations
	}
	if f != nil {
		if f.Max <= 0 || f.Violations < 0 || f.Peak < 0 || f.AtFrom < 0 || f.Violations > sends {
			return 0, fmt.Errorf("in flight: max_in_flight %d, violations %d, peak %d, in_flight_at_from %d among %d sends",
				f.Max, f.Violations, f.Peak, f.AtFrom, sends)
		}
		if !lineOK(f.PeakAt) || (f.First != nil && !lineOK(*f.First)) {
			return 0, fmt.Errorf("in flight: a place on line %d", f.PeakAt.Line)
		}
		if (f.Violations > 0) != (f.First != nil) || (f.Violations > 0 && f.Peak <= int64(f.Max)) {
			return 0, fmt.Errorf("in flight: %d violations, a peak of %d calls for a cap of %d, first_violation %v",
				f.Violations, f.Peak, f.Max, f.First != nil)
		}
		if f.Violations > math.MaxInt64-n {
			return 0, fmt.Errorf("the rules' and in-flight violations add up past %d", int64(math.MaxInt64))
		}
		n += f.Violations
	}
	return n, nil
}

// checkRule checks one rule report of a stream of sends.
func checkRule(r report.RuleDoc, sends int64, in func(int64) bool) error {
	if r.Limit <= 0 || r.WindowNs <= 0 {
		return fmt.Errorf("limit %d and window_ns %d: want both above 0", r.Limit, r.WindowNs)
	}
	if r.MaxWindowStart != nil && !lineOK(*r.MaxWindowStart) {
		return fmt.Errorf("max_window_start on line %d", r.MaxWindowStart.Line)
	}
	parsed, err := ruleOf(r)
	if err != nil {
		return err
	}
	bucket := parsed.Kind == rule.Bucket
	if r.Violations < 0 || r.MaxInWindow < 0 || r.Violations > sends || (bucket && r.MaxInWindow != 0) {
		return fmt.Errorf("%d violations and at most %d in one window, among %d sends", r.Violations, r.MaxInWindow, sends)
	}
	if r.Violations == 0 {
		if r.First != nil || len(r.Listed) > 0 {
			return fmt.Errorf("no violations, but a first or listed violation")
		}
		return nil
	}
	// A violation is a send that finds the window already full: that
	// window holds more than the limit (in the rule's unit). A bucket has
	// no window.
	if !bucket && !r.MaxSaturated && r.MaxInWindow <= int64(r.Limit) {
		return fmt.Errorf("%d violations, but at most %d in one window, within the limit of %d", r.Violations, r.MaxInWindow, r.Limit)
	}
	if r.First == nil {
		return fmt.Errorf("%d violations, but no first_violation", r.Violations)
	}
	if int64(len(r.Listed)) > r.Violations {
		return fmt.Errorf("%d violations, but %d listed", r.Violations, len(r.Listed))
	}
	if r.KeysViolating != nil && *r.KeysViolating < 0 {
		return fmt.Errorf("keys_with_violations is %d", *r.KeysViolating)
	}
	for _, v := range append([]report.ViolationDoc{*r.First}, r.Listed...) {
		if !lineOK(v.PlaceDoc) || !lineOK(v.WindowStart) || slices.ContainsFunc(v.Window, func(p report.PlaceDoc) bool { return !lineOK(p) }) {
			return fmt.Errorf("a violation on line %d, its window from line %d", v.Line, v.WindowStart.Line)
		}
		if v.Count < 1 || v.Cost < 0 || v.Units < 0 || slices.ContainsFunc(v.WindowCosts, func(c int64) bool { return c < 0 }) {
			return fmt.Errorf("a violation on line %d with a count of %d, a cost of %d, %d units, or a negative cost in its window", v.Line, v.Count, v.Cost, v.Units)
		}
		switch {
		case v.Index < 0 || v.Index >= sends:
			return fmt.Errorf("a violation at index %d among %d sends", v.Index, sends)
		case !bucket && parsed.Unit == "" && !v.CountSaturated && v.Count <= int64(r.Limit):
			return fmt.Errorf("a violation with %d sends in its window, within the limit of %d", v.Count, r.Limit)
		case !bucket && parsed.Unit != "" && v.Units <= int64(r.Limit):
			return fmt.Errorf("a violation with %d %s in its window, within the limit of %d", v.Units, parsed.Unit, r.Limit)
		case bucket && v.Level == "":
			return fmt.Errorf("a bucket's violation without the level it found")
		case !in(v.AtNs) || v.WindowStart.AtNs > v.AtNs:
			return fmt.Errorf("a violation at %d, outside the shard or before its window's start %d", v.AtNs, v.WindowStart.AtNs)
		}
	}
	return nil
}

// lineOK says whether a place's line is one a report can hold.
func lineOK(p report.PlaceDoc) bool { return p.Line >= 0 && p.Line < 1<<48 }
