package report

import (
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

// Ref packs where a send came from into the checker's opaque Ref: the input's
// index in the top 16 bits and its 1-based line number below.
type Ref int64

// MakeRef returns the Ref of line in input file.
func MakeRef(file int, line int64) Ref { return Ref(int64(file)<<48 | line) }

// File is the input index, Line the 1-based line number.
func (r Ref) File() int   { return int(int64(r) >> 48) }
func (r Ref) Line() int64 { return int64(r) & (1<<48 - 1) }

// FileInfo is what was learnt about one input while reading it.
type FileInfo struct {
	Name     string
	Format   string // plain, csv, jsonl, nginx, apache
	Column   string // the time column or field, when there is one
	Detected string // how timestamps were read
	Lines    int64
	Sends    int64
	Skipped  int64
	Skips    []error // the first few skipped lines
	Filtered int64   // access-log lines left out by path, method or status filters

	// Chosen says which time column and unit were taken from their names,
	// if any (sendlog.Reader.Chosen).
	Chosen string
	// LineFormat is how a send's line is shown in the text report, a
	// format with one %d; "" is "line %d". A table checked in SQL has no
	// lines: its sends are named by their tiebreak or their rank.
	LineFormat string
}

// Disorder says how far out of time order the input arrived.
type Disorder struct {
	Lines int64         // sends earlier than one read before them
	Max   time.Duration // the largest such lateness
}

// Group is the verdict for one key (Key is "" when the logs are not split
// per key).
type Group struct {
	Key      string
	Report   checker.Report
	InFlight *checker.InFlightReport // nil without a cap
	// Overlap is, in a time shard with an in-flight cap, what Merge needs
	// to know that the shard saw every call in flight at its start.
	Overlap *Overlap
	// Times are the group's send times in time order, with Config.KeepTimes.
	Times []int64
	// Costs are the sends' costs by unit, each aligned with Times, with
	// Config.KeepTimes when the rules meter units.
	Costs map[string][]int64
}

// Overlap is what a time shard knows of calls that cross its bounds.
type Overlap struct {
	// AtFrom counts the calls of the context in flight at From.
	AtFrom int64
	// AfterTo are the judged calls still in flight at To, in start order.
	AfterTo []Call
}

// Call is one call's span, [Start, End) in ns.
type Call struct {
	Start int64 `json:"start_ns"`
	End   int64 `json:"end_ns"`
}

// Violations returns the group's rate and in-flight violations.
func (g *Group) Violations() int64 {
	n := g.Report.Violations()
	if g.InFlight != nil {
		n += g.InFlight.Violations
	}
	return n
}

// RuleTotal sums one rule over every group.
type RuleTotal struct {
	Rule       rule.Rule
	Violations int64
	Groups     int // groups with at least one violation
	// MaxInWindow is the fullest window of any group (MaxSaturated: a
	// lower bound), and First the earliest violation of any group, of key
	// FirstKey.
	MaxInWindow  int64
	MaxSaturated bool
	First        *checker.Violation
	FirstKey     string
	// Explained counts the refused calls (429) the rule would have
	// refused too, in a log judged by its statuses (see Statuses).
	Explained int64
}

// add folds one group's report of the rule in.
func (t *RuleTotal) add(r *checker.RuleReport, key string) {
	t.Explained += r.Explained
	if r.Violations > 0 {
		t.Violations += r.Violations
		t.Groups++
	}
	if r.MaxInWindow > t.MaxInWindow {
		t.MaxInWindow, t.MaxSaturated = r.MaxInWindow, r.MaxSaturated
	}
	if r.First != nil && (t.First == nil || r.First.Send.At < t.First.Send.At) {
		t.First, t.FirstKey = r.First, key
	}
}

// merge folds in another total of the same rule, whose groups come after
// t's.
func (t *RuleTotal) merge(o RuleTotal) {
	t.Explained += o.Explained
	t.Violations += o.Violations
	t.Groups += o.Groups
	if o.MaxInWindow > t.MaxInWindow {
		t.MaxInWindow, t.MaxSaturated = o.MaxInWindow, o.MaxSaturated
	}
	if o.First != nil && (t.First == nil || o.First.Send.At < t.First.Send.At) {
		t.First, t.FirstKey = o.First, o.FirstKey
	}
}

// Unlisted sums up the groups a result leaves out of Groups so that its
// memory follows the keys it lists, not every key in the log: every count
// of the result covers them, but their own verdicts are not kept.
type Unlisted struct {
	Keys        int
	Sends       int64
	First, Last int64
	Totals      []RuleTotal             // per rule, over the unlisted groups
	InFlight    *checker.InFlightReport // nil without a cap
	// InFlightKeys counts the groups that broke the in-flight cap.
	InFlightKeys int
	Violations   int64 // every rate and in-flight violation
}

// Add folds group g in.
func (u *Unlisted) Add(g *Group) {
	r := &g.Report
	if r.Sends > 0 {
		if u.Sends == 0 || r.First < u.First {
			u.First = r.First
		}
		u.Last = max(u.Last, r.Last)
		u.Sends += r.Sends
	}
	u.Keys++
	u.Violations += g.Violations()
	if u.Totals == nil {
		for _, rr := range r.Rules {
			u.Totals = append(u.Totals, RuleTotal{Rule: rr.Rule})
		}
	}
	for i := range r.Rules {
		u.Totals[i].add(&r.Rules[i], g.Key)
	}
	if f := g.InFlight; f != nil {
		if u.InFlight == nil {
			u.InFlight = &checker.InFlightReport{Max: f.Max}
		}
		addInFlight(u.InFlight, f)
		if f.Violations > 0 {
			u.InFlightKeys++
		}
	}
}

// Result is the verdict over a set of inputs checked as one stream.
type Result struct {
	Files       []FileInfo
	Rules       []rule.Rule
	Boundary    rule.Boundary
	MaxInFlight int // 0 when no cap was checked
	// Shard is the time shard checked (check --from/--to), nil for all.
	Shard *Shard
	// ShardContext is, with a Shard, how many sends were read before its
	// From as context only.
	ShardContext int64
	// ShardPastTo says that the input went on past the shard's To: the
	// log has sends after it.
	ShardPastTo bool
	Sends       int64
	First, Last int64
	Disorder    Disorder
	// PeakBuffered is the most entries held at once to put late lines in
	// place (a run of sends at one instant counts once). Config.MaxBuffered
	// bounds it, give or take the batch of lines just read.
	PeakBuffered int
	// Groups holds one verdict per key, worst first (see Before); a single
	// group when the logs are not split per key.
	Groups []Group
	// Unlisted, when set, sums up the keys judged but not kept in Groups
	// (logcheck.Config.ListKeys): Keys, Violations and Totals count them.
	Unlisted *Unlisted
	PerKey   bool
	Totals   []RuleTotal
	InFlight *checker.InFlightReport // the sum over groups' in-flight violations; nil without a cap
	// NotChecked names limits that were asked for but cannot be checked on
	// this input, each with the reason (see InFlightCap); reports list them.
	NotChecked []string
	// NoMaxInWindow says the largest count in one window was not computed
	// (rlcheck sql without its largest-window pass): the text report shows
	// "-" for it, and NotChecked says why.
	NoMaxInWindow bool
	// Statuses, for a log that gives each call's HTTP status, says what
	// the statuses made of the calls; nil otherwise.
	Statuses *Statuses
}

// Statuses sums up a log judged by its calls' statuses: 2xx calls are
// judged; refused ones (429) are not, and count toward later windows
// under Refusals' reading; calls of any other status are left out.
type Statuses struct {
	Refusals rule.Refusals
	Refused  int64 // calls refused with a 429
	LeftOut  int64 // calls of a status neither 2xx nor 429
	// Unexplained counts, under rule.RefusedCount, the refused calls no
	// rule would have refused: the provider refused more than the rules
	// say (a tighter limit, or a rule the contract lacks).
	Unexplained int64
}

// Broken reports whether any of results has a violation.
func Broken(results []*Result) bool {
	for _, r := range results {
		if r.Violations() > 0 {
			return true
		}
	}
	return false
}

// Violations returns every rate and in-flight violation in the result.
func (r *Result) Violations() int64 {
	var n int64
	for i := range r.Groups {
		n += r.Groups[i].Violations()
	}
	if r.Unlisted != nil {
		n += r.Unlisted.Violations
	}
	return n
}

// Keys returns how many groups the result judged, listed or not.
func (r *Result) Keys() int {
	n := len(r.Groups)
	if r.Unlisted != nil {
		n += r.Unlisted.Keys
	}
	return n
}

// Shard limits a check to the sends in [From, To): earlier sends are read
// as context, so that the windows of the first judged sends are whole, and
// reading stops at the first send at or after To. The reports of shards
// that tile a log add up, with Merge, to the report of the whole.
type Shard struct {
	// HasFrom and HasTo say which ends are set; an unset end is open.
	From, To       int64
	HasFrom, HasTo bool
	// LineOffset is added to every line number the report names: the
	// lines of the whole log that precede this input.
	LineOffset int64
	// LogStart states that the input is the log from its first line:
	// nothing before it is missing, so the context before From is complete
	// however short it is (a log shorter than its longest window can then
	// be cut into shards).
	LogStart bool
}

// New returns the result of groups judged as base says. base carries what
// the caller knows: the rules, boundary and in-flight cap, the inputs, the
// shard and what could not be checked. New orders the groups worst first
// (Before), and sums from the groups' reports the
// sends, the first and last instants, each rule's totals and the in-flight
// sum (base's own values of those are not read).
func New(base Result, groups []Group) *Result {
	res := base
	res.Groups = groups
	sortGroups(res.Groups)
	res.Sends, res.First, res.Last = 0, 0, 0
	span := func(sends, first, last int64) {
		if sends == 0 {
			return
		}
		if res.Sends == 0 || first < res.First {
			res.First = first
		}
		if res.Sends == 0 || last > res.Last {
			res.Last = last
		}
		res.Sends += sends
	}
	for _, g := range res.Groups {
		span(g.Report.Sends, g.Report.First, g.Report.Last)
	}
	res.Totals = ruleTotals(res.Rules, res.Groups)
	res.InFlight = inFlightSum(res.MaxInFlight, res.Groups)
	if u := res.Unlisted; u != nil {
		span(u.Sends, u.First, u.Last)
		for i := range res.Totals {
			if i < len(u.Totals) {
				res.Totals[i].merge(u.Totals[i])
			}
		}
		if res.InFlight != nil && u.InFlight != nil {
			addInFlight(res.InFlight, u.InFlight)
		}
	}
	return &res
}

// inFlightSum adds the groups' in-flight reports: nil without a cap.
func inFlightSum(cap int, groups []Group) *checker.InFlightReport {
	if cap <= 0 {
		return nil
	}
	sum := checker.InFlightReport{Max: cap}
	for _, g := range groups {
		if g.InFlight != nil {
			addInFlight(&sum, g.InFlight)
		}
	}
	return &sum
}

// addInFlight folds in-flight report f into sum.
func addInFlight(sum, f *checker.InFlightReport) {
	sum.Violations += f.Violations
	if f.Peak > sum.Peak {
		sum.Peak, sum.PeakAt = f.Peak, f.PeakAt
	}
	if f.First != nil && (sum.First == nil || f.First.At < sum.First.At) {
		first := *f.First
		sum.First = &first
	}
}

// sortGroups orders groups worst first (see Before).
func sortGroups(groups []Group) {
	slices.SortStableFunc(groups, func(a, b Group) int {
		switch {
		case Before(&a, &b):
			return -1
		case Before(&b, &a):
			return 1
		}
		return 0
	})
}

// Before reports whether group a comes before b in a report: the one with
// more violations, then the one closer to a limit (the higher Usage), then
// by key, so that a clean key one bad hour from failing is listed before
// a quiet one.
func Before(a, b *Group) bool {
	if va, vb := a.Violations(), b.Violations(); va != vb {
		return va > vb
	}
	if ua, ub := a.Usage(), b.Usage(); ua != ub {
		return ua > ub
	}
	return a.Key < b.Key
}

// Usage is the group's closest approach to a limit: the largest share of a
// rule's limit its fullest window held, over the rules with windows (a
// bucket has none).
func (g *Group) Usage() float64 {
	u := 0.0
	for _, r := range g.Report.Rules {
		if r.Rule.Kind != rule.Bucket && r.Rule.Limit > 0 {
			u = max(u, float64(r.MaxInWindow)/float64(r.Rule.Limit))
		}
	}
	return u
}

// ruleTotals sums each rule's violations over the groups, and counts the
// groups that broke it.
func ruleTotals(rules []rule.Rule, groups []Group) []RuleTotal {
	var out []RuleTotal
	for i, r := range rules {
		tot := RuleTotal{Rule: r}
		for gi := range groups {
			tot.add(&groups[gi].Report.Rules[i], groups[gi].Key)
		}
		out = append(out, tot)
	}
	return out
}
