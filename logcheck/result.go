package logcheck

import (
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
	// Groups holds one verdict per key, worst first (most violations, then
	// key order); a single group when the logs are not split per key.
	Groups   []Group
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
}

// Violations returns every rate and in-flight violation in the result.
func (r *Result) Violations() int64 {
	var n int64
	for i := range r.Groups {
		n += r.Groups[i].Violations()
	}
	return n
}
