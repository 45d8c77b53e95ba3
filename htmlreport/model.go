package htmlreport

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/plots"
	"github.com/rlcheck/rlcheck/rule"
)

// Limits on what one report holds, so that its size follows the number of
// panels and rules rather than the length of the log.
const (
	// Columns is how many pixel columns the overview of a timeline is
	// reduced to (plots.TimelineSeries: exact min and max per column).
	Columns = 1000
	// FullDetail is the most sends a timeline inlines in full; a longer one
	// inlines only the sends around its first violations.
	FullDetail = 20_000
	// DetailAround is how many sends before and after a violation the
	// detail of a long timeline keeps, and DetailViolations how many
	// violations per rule get such an excerpt.
	DetailAround     = 250
	DetailViolations = 8
	// Listed is how many violations per rule and panel the table lists
	// with the sends of their window, and WindowSends the newest sends
	// listed per violation.
	Listed      = 50
	WindowSends = 200
	// MaxPanels is how many keys (the worst) a check report draws.
	MaxPanels = 10
)

// page is the data the browser script draws, serialised as JSON, gzipped
// and inlined. Instants are integer nanoseconds from the panel's From;
// arrays named with a D are delta-encoded (each element the difference from
// the previous, the first from zero).
type page struct {
	Kind   string   `json:"kind"` // check, simulate or run
	Title  string   `json:"title"`
	Panels []*panel `json:"panels"`
	// Dist is the distribution of violations per run across seeds
	// (simulate with several runs): per strategy, total violations per run.
	Dist []distSeries `json:"dist,omitempty"`
}

type distSeries struct {
	Name   string  `json:"name"`
	PerRun []int64 `json:"perRun"`
}

type panel struct {
	Name string `json:"name"`
	From int64  `json:"from"` // Unix ns (Wall) or ns from the run's start
	// FromStr is From in decimal: JSON numbers in the browser are doubles.
	FromStr string `json:"fromStr"`
	Wall    bool   `json:"wall"`
	Sends   int    `json:"sends"`
	// Color is the strategy's colour in the PNG charts, or "" for logs.
	Color  string       `json:"color,omitempty"`
	Rules  []*panelRule `json:"rules"`
	Chunks []*chunk     `json:"chunks"`
	// Records says the panel has a record-side layer (admissions).
	Records bool `json:"records"`
}

type panelRule struct {
	Rule string `json:"rule"`
	// What the window holds: "sends", or a cost rule's unit; Line names
	// the drawn line ("sends in window", a bucket's "tokens short of
	// full") and Cap the capacity it is drawn against: "limit", or a
	// bucket's "burst".
	What string `json:"what"`
	Line string `json:"line"`
	Cap  string `json:"cap"`
	// Bucket marks a bucket rule: its violations count the sends since
	// the bucket was last full, not a window's.
	Bucket     bool  `json:"bucket,omitempty"`
	Limit      int64 `json:"limit"`
	Window     int64 `json:"window"`
	Violations int64 `json:"violations"`
	Peak       int64 `json:"peak"`
	// Overview: the occupancy reduced per pixel column and the markers.
	Over series `json:"over"`
	// Record-side layer: the admissions' occupancy and violations.
	RecordViolations int64   `json:"recordViolations"`
	RecOver          *series `json:"recOver,omitempty"`
	Rows             []row   `json:"rows"`
}

// series is a step line (XD, YD) and violation markers (MXD, MY).
type series struct {
	XD  []int64 `json:"xd"`
	YD  []int64 `json:"yd"`
	MXD []int64 `json:"mxd"`
	MY  []int64 `json:"my"`
}

// row is one violation in the table.
type row struct {
	At     int64   `json:"at"`
	Where  string  `json:"where"`
	Count  int64   `json:"count"`
	Units  int64   `json:"units,omitempty"` // a cost rule's units in the window
	Start  int64   `json:"start"`           // the window's earliest send
	Window []wsend `json:"window"`
	Sat    bool    `json:"sat,omitempty"`
	Shown  int     `json:"shown"` // sends listed (the newest of Count)
}

type wsend struct {
	At    int64  `json:"at"`
	Where string `json:"where"`
}

// chunk is the exact occupancy over [A, B] of every rule, for zooming.
type chunk struct {
	A    int64     `json:"a"`
	B    int64     `json:"b"`
	Rule []series  `json:"rule"`
	Rec  []*series `json:"rec,omitempty"`
}

// timeline is what a panel is built from.
type timeline struct {
	name     string
	times    []int64
	records  []int64            // admissions, nil when they are the sends
	costs    map[string][]int64 // the sends' costs by unit, for cost rules
	recCosts map[string][]int64 // the records' costs by unit
	rules    []rule.Rule
	boundary rule.Boundary
	wall     bool
	color    string
	// where names a send by its Ref for the table.
	where func(ref int64) string
	// listed are the checker's listed violations per rule, or nil to have
	// them computed with refs equal to the send index.
	listed [][]checker.Violation
}

func deltas(xs []int64) []int64 {
	out := make([]int64, len(xs))
	var prev int64
	for i, x := range xs {
		out[i] = x - prev
		prev = x
	}
	return out
}

// overview reduces a whole timeline per pixel column.
func overview(times []int64, costs map[string][]int64, rules []rule.Rule, b rule.Boundary, from int64) ([]series, []plots.RuleSeries, error) {
	s, err := plots.TimelineSeries(plots.TimelineInput{Times: times, Costs: costs, Rules: rules, Boundary: b}, Columns)
	if err != nil {
		return nil, nil, fmt.Errorf("htmlreport: %w", err)
	}
	out := make([]series, len(rules))
	for i, rs := range s.Rules {
		xs := make([]int64, len(rs.Steps))
		ys := make([]int64, len(rs.Steps))
		for j, st := range rs.Steps {
			xs[j], ys[j] = st.At-from, st.Count
		}
		mx := make([]int64, len(rs.Markers))
		my := make([]int64, len(rs.Markers))
		for j, m := range rs.Markers {
			mx[j], my[j] = m.At-from, m.Count
		}
		out[i] = series{XD: deltas(xs), YD: deltas(ys), MXD: deltas(mx), MY: my}
	}
	return out, s.Rules, nil
}

// exact gives the exact occupancy of every rule over [a, b], starting at
// the first send at or after a, with the span's violations: the sends whose
// step is over the limit, as in plots.TimelineSeries.
func exact(times []int64, costs map[string][]int64, rules []rule.Rule, bd rule.Boundary, from, a, b int64) []series {
	lo := sort.Search(len(times), func(i int) bool { return times[i] >= a })
	hi := sort.Search(len(times), func(i int) bool { return times[i] > b })
	out := make([]series, len(rules))
	for i, r := range rules {
		limit := plots.Capacity(r)
		xs, ys, mx, my := []int64{}, []int64{}, []int64{}, []int64{}
		var cs []int64
		if r.Unit != "" {
			cs = costs[r.Unit][:hi]
		}
		for st := range plots.RuleOccupancyFrom(times[:hi], cs, r, bd, lo) {
			xs, ys = append(xs, st.At-from), append(ys, st.Count)
			if st.Send >= 0 && st.Count > limit {
				mx, my = append(mx, st.At-from), append(my, st.Count)
			}
		}
		out[i] = series{XD: deltas(xs), YD: deltas(ys), MXD: deltas(mx), MY: my}
	}
	return out
}

// spans picks the ranges whose detail is inlined: the whole timeline when it
// is short, else DetailAround sends either side of the first violations of
// each rule, merged where they overlap.
func spans(times []int64, firsts [][]int64) [][2]int64 {
	if len(times) <= FullDetail {
		return [][2]int64{{times[0], times[len(times)-1]}}
	}
	var idx [][2]int
	for _, f := range firsts {
		for _, i := range f[:min(len(f), DetailViolations)] {
			idx = append(idx, [2]int{max(0, int(i)-DetailAround), min(len(times)-1, int(i)+DetailAround)})
		}
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i][0] < idx[j][0] })
	var out [][2]int64
	for _, s := range idx {
		a, b := times[s[0]], times[s[1]]
		if n := len(out); n > 0 && a <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], b)
			continue
		}
		out = append(out, [2]int64{a, b})
	}
	return out
}

// build turns a timeline into a panel.
func build(t timeline) (*panel, error) {
	from := t.times[0]
	if err := t.checkSpan(); err != nil {
		return nil, err
	}
	p := &panel{Name: t.name, From: from, FromStr: strconv.FormatInt(from, 10), Wall: t.wall, Sends: len(t.times),
		Color: t.color, Records: t.records != nil}
	listed := t.listed
	if listed == nil {
		var err error
		if listed, err = t.listViolations(); err != nil {
			return nil, err
		}
	}
	firsts := make([][]int64, len(t.rules))
	for i := range t.rules {
		for _, v := range listed[i] {
			firsts[i] = append(firsts[i], v.Index)
		}
	}
	sp := spans(t.times, firsts)
	over, rss, err := overview(t.times, t.costs, t.rules, t.boundary, from)
	if err != nil {
		return nil, err
	}
	var recOver []series
	var recSeries []plots.RuleSeries
	if len(t.records) > 0 {
		if recOver, recSeries, err = overview(t.records, t.recCosts, t.rules, t.boundary, from); err != nil {
			return nil, err
		}
	}
	for i, r := range t.rules {
		pr := &panelRule{
			Rule: r.String(), What: plots.Measure(r), Line: plots.Measure(r) + " in window", Cap: "limit",
			Limit: plots.Capacity(r), Window: int64(r.Window),
			Violations: rss[i].Violations, Peak: rss[i].Peak, Over: over[i], Rows: []row{},
		}
		if r.Kind == rule.Bucket {
			pr.Line, pr.Cap, pr.Bucket = pr.What+" short of full", "burst", true
		}
		if recOver != nil {
			pr.RecOver = &recOver[i]
			pr.RecordViolations = recSeries[i].Violations
		}
		for _, v := range listed[i][:min(len(listed[i]), Listed)] {
			w := v.Window[max(0, len(v.Window)-WindowSends):]
			rw := row{At: v.Send.At - from, Where: t.where(v.Send.Ref), Count: v.Count, Units: v.Units, Start: v.WindowStart.At - from,
				Sat: v.CountSaturated, Shown: len(w)}
			for _, s := range w {
				rw.Window = append(rw.Window, wsend{At: s.At - from, Where: t.where(s.Ref)})
			}
			pr.Rows = append(pr.Rows, rw)
		}
		p.Rules = append(p.Rules, pr)
	}
	for _, s := range sp {
		c := &chunk{A: s[0] - from, B: s[1] - from, Rule: exact(t.times, t.costs, t.rules, t.boundary, from, s[0], s[1])}
		if recOver != nil {
			for _, rs := range exact(t.records, t.recCosts, t.rules, t.boundary, from, s[0], s[1]) {
				c.Rec = append(c.Rec, &rs)
			}
		}
		p.Chunks = append(p.Chunks, c)
	}
	return p, nil
}

// listViolations judges the sends, with their costs, and returns each
// rule's first Listed violations, refs being send indexes.
func (t timeline) listViolations() ([][]checker.Violation, error) {
	units := rule.Units(t.rules)
	c := checker.New(checker.Config{Rules: t.rules, Boundary: t.boundary, List: Listed, Units: units})
	refs := make([]int64, len(t.times))
	for i := range refs {
		refs[i] = int64(i)
	}
	var cols [][]int64
	for _, u := range units {
		if len(t.costs[u]) != len(t.times) {
			return nil, fmt.Errorf("htmlreport: %s: no %s cost for each send", t.name, u)
		}
		cols = append(cols, t.costs[u])
	}
	if err := c.ObserveCostBatch(t.times, refs, cols); err != nil {
		return nil, fmt.Errorf("htmlreport: %w", err)
	}
	var listed [][]checker.Violation
	for _, rr := range c.Report().Rules {
		listed = append(listed, rr.Listed)
	}
	return listed, nil
}

// checkSpan refuses sends spanning more than an int64 of nanoseconds: the
// page holds offsets from the first send in int64.
func (t timeline) checkSpan() error {
	from, last := t.times[0], t.times[len(t.times)-1]
	if last >= from && uint64(last-from) > math.MaxInt64 {
		return fmt.Errorf("htmlreport: %s: the sends span %s to %s, more than the 292 years a report can draw",
			t.name, offsetTime(from, t.wall), offsetTime(last, t.wall))
	}
	return nil
}

// offsetTime names an instant in an error: UTC for Unix times, else
// nanoseconds.
func offsetTime(t int64, wall bool) string {
	if wall {
		return time.Unix(0, t).UTC().Format(time.RFC3339Nano)
	}
	return strconv.FormatInt(t, 10) + " ns"
}
