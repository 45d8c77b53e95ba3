package audit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rlcheck/rlcheck/buildinfo"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// writeText writes the audit as two tables: each strategy as configured,
// workload by workload, then the suggested safe settings.
func writeText(w io.Writer, r *Report) error {
	fmt.Fprintf(w, "audit of %s (%s windows), seeds %d..%d, lateness %v, op cost %v%s\n\n",
		ruleList(r.Rules), boundaryName(r.Boundary), r.Seed, r.Seed+uint64(r.Seeds)-1, r.Lateness, r.OpCost, costText(r.Rules, "; each call costs "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "strategy\tsetting\tworkload\truns violating\tviolations\tmax in window / limit\tanalytic worst")
	for _, sa := range r.Strategies {
		for i, o := range sa.Outcomes {
			name, set, bound := "", "", ""
			if i == 0 {
				name, set, bound = sa.Name, settingWords(sa.design, sa.Config), boundList(sa.Bounds)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", name, set, o.Workload, o.RunsWithViolations, o.Runs,
				violations(o), windows(o.Rules), bound)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Skipped) > 0 {
		why := "a weighted contract: they meter no costs"
		if !weighted(r.Rules) {
			why = "a contract of calls only: their costs are known after the call"
		}
		fmt.Fprintln(w, "\nleft out ("+why+"):"+skippedText(r.Skipped))
	}
	if !slidingOnly(r.Rules) {
		fmt.Fprintln(w, "\nthe provider counts these rules as written; the libraries are set from their N/W (and unit) as users write them; analytic worst cases are for sliding rules only")
	}
	if r.ProviderKinds {
		if err := writeKinds(w, r); err != nil {
			return err
		}
	}
	if r.Searched {
		if err := writeSafe(w, r); err != nil {
			return err
		}
	}
	if len(r.Worst) > 0 {
		fmt.Fprintf(w, "\nworst schedules found (seed %d), each a scenario for rlcheck simulate:\n\n", r.Seed)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "strategy\tsetting\ttried\tcalls\tmax in window / limit\tscenario")
		for _, wo := range r.Worst {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", wo.Strategy, settingWords(wo.design, wo.Config), wo.Tried, len(wo.Times), windows(wo.Rules), wo.File)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	sat := fmt.Sprintf("; saturate-RULE (calls spaced so that the setting's analytic worst case for RULE fits in one of its windows, for two windows, no faster than the setting sustains when it can, and one window's worth and one more when faster; over %d calls, on seed %d only)", longSaturation, r.Seed)
	switch {
	case weighted(r.Rules) && r.Searched:
		sat = "; a weighted contract has no saturation workloads (calls of random cost cannot be paced to fill a window): its rules rest on the analysis"
	case weighted(r.Rules):
		sat = ""
	}
	if ran(r, settleCrowdName) {
		sat += settleText
	}
	if ran(r, edgeCrowdName) {
		sat += "; edge-crowd (chained fixed windows: one call, then 2N calls of the rule asked last at the pace of the others, ending before its first window closes, so N + 1 wait for its next window)"
	}
	units := ""
	if weighted(r.Rules) {
		units = " (for a cost rule, the most units)"
	}
	_, err := fmt.Fprintln(w, "\nworkloads: "+workloadDocs(r.Workloads)+sat+
		"\nviolations are counted by the checker, per rule, summed over the seeds; the analytic worst case is the most sends the design can put in one window"+units+" (docs/audit.md)")
	return err
}

// settleText describes the reserved costs of the designs that settle.
const settleText = "; post-call, reserve and redis-reserve (costs known after the call) reserve each call's estimate, uniform(⌈M/2⌉, M) for M the largest cost above, and the provider settles it to an actual cost uniform(1, ⌈M/2⌉) after uniform(W/60, W/6) of the shortest cost rule's window; their settle-crowd is the callers their analytic worst case needs at one instant, each estimating M, in flight for the longest window"

// ran reports whether a design of r ran the workload name.
func ran(r *Report, name string) bool {
	for _, sa := range r.Strategies {
		for _, o := range sa.Outcomes {
			if o.Workload == name {
				return true
			}
		}
	}
	return false
}

// writeSafe writes the suggested settings: each rule's most sends in one
// window over every workload beside its analytic worst case, and how it
// stands (reached, at its bound, proved).
func writeSafe(w io.Writer, r *Report) error {
	sat := ", and on the setting's saturation workloads"
	if weighted(r.Rules) {
		sat = ", no call refused"
	}
	fmt.Fprintf(w, "\nsuggested safe settings (analytic worst case within every limit, 0 violations on every workload, seeds %d..%d%s), each design's best by what it lets through (the time 3N callers arriving together take, then the long-run rate):\n",
		r.Seed, r.Seed+uint64(r.Verify)-1, sat)
	for _, k := range r.KeptAs {
		fmt.Fprintln(w, "  "+k)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	ks := crowdSizes(r.Sliding)
	fmt.Fprintf(tw, "strategy\tsetting\ttried\tmax in window / limit\tanalytic worst\trules\t%d, %d callers take\tlong run\trate kept\tassumes\tGo\n", ks[0], ks[1])
	by := func(i int) string { return r.Rules[i].String() }
	for _, sa := range r.Strategies {
		if sa.Safe == nil {
			why := sa.design.Tuning().noSetting
			switch {
			case sa.design.Tuning().family == designWindows && len(r.Rules) > 1:
				why = "chained windows: every caller that waited for the last rule's next window goes at its start, so the earlier rules hold only that rule's N"
			case sa.design.Tuning().family == designBuckets && len(rule.Units(r.Rules)) > 0 && len(rule.Units(r.Rules)) < len(unitsOrCalls(r.Rules)):
				why = chainedUnits
			case why != "":
			case sa.Rejected != "":
				why = "not safe: " + sa.Rejected
			default:
				why = "no margin tried was enough"
			}
			fmt.Fprintf(tw, "%s\tnone found\t%d\t\t\t\t\t\t\t\t%s\n", sa.Name, sa.Tried, why)
			continue
		}
		worst := make([]RuleOutcome, len(sa.SafeVerdicts))
		bounds := make([]Bound, len(sa.SafeVerdicts))
		for k, v := range sa.SafeVerdicts {
			worst[k] = RuleOutcome{Rule: v.Rule, MaxInWindow: v.Measured}
			bounds[k] = v.Bound
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%.1f%%\t%.1f%%\t%s\t%s\n", sa.Name, settingWords(sa.design, *sa.Safe), sa.Tried, windows(worst),
			boundList(bounds), verdictText(sa.SafeVerdicts, by), crowdText(sa.Crowds), 100*longRun(sa.design, *sa.Safe, r.Sliding),
			100*rateKept(*sa.Safe, r.Sliding), assumes(r), code(sa.design, *sa.Safe, r.Sliding))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeSlow(w, r)
}

// assumes is what every suggestion of r rests on besides its runs: the
// longest a send lags its decision, and the most callers at once.
func assumes(r *Report) string {
	callers := 0
	for _, wl := range r.Workloads {
		callers = max(callers, wl.Callers, len(wl.Arrivals.Times)-1)
	}
	return fmt.Sprintf("delay ≤ %v, ≤ %d callers", r.Delay, callers)
}

func crowdText(cs []Crowd) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.Took.Round(time.Millisecond).String()
	}
	return strings.Join(s, ", ")
}

// writeSlow says which suggestions keep the contract only by making
// crowds wait (3N callers over ten times as long as the fastest
// suggestion), and names the designs that let them through sooner.
func writeSlow(w io.Writer, r *Report) error {
	var fast []StrategyAudit
	for _, sa := range r.Strategies {
		if len(sa.Crowds) > 1 {
			fast = append(fast, sa)
		}
	}
	if len(fast) == 0 {
		return nil
	}
	took := func(sa StrategyAudit) time.Duration { return sa.Crowds[1].Took }
	slices.SortStableFunc(fast, func(a, b StrategyAudit) int { return cmp.Compare(took(a), took(b)) })
	best := took(fast[0])
	var sooner []string
	for _, sa := range fast[:min(len(fast), 3)] {
		if took(sa) <= 10*best {
			sooner = append(sooner, fmt.Sprintf("%s %v", sa.Name, took(sa).Round(time.Millisecond)))
		}
	}
	var lines []string
	for _, sa := range r.Strategies {
		if len(sa.Crowds) < 2 || took(sa) <= 10*best {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s: one burst (or slack) for all its limiters; the setting that keeps every rule (%s) makes %d callers arriving together take %v; these keep every rule and let them through sooner: %s",
			sa.Name, settingWords(sa.design, *sa.Safe), sa.Crowds[1].Callers, took(sa).Round(time.Millisecond), strings.Join(sooner, ", ")))
	}
	if len(lines) == 0 {
		return nil
	}
	_, err := fmt.Fprintln(w, "\n"+strings.Join(lines, "\n"))
	return err
}

func violations(o Outcome) string {
	s := make([]string, len(o.Rules))
	for i, r := range o.Rules {
		s[i] = strconv.FormatInt(r.Violations, 10)
	}
	return strings.Join(s, ", ")
}

func windows(rs []RuleOutcome) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprintf("%d/%d", r.MaxInWindow, r.Rule.Limit)
		if r.Rule.Kind == rule.Bucket {
			s[i] = "-" // a bucket has no window
		}
	}
	return strings.Join(s, ", ")
}

func workloadDocs(wls []Workload) string {
	s := make([]string, len(wls))
	for i, wl := range wls {
		s[i] = wl.Name + " (" + wl.Doc + ")"
	}
	return strings.Join(s, "; ")
}

func ruleList(rules []rule.Rule) string {
	s := make([]string, len(rules))
	for i, r := range rules {
		s[i] = r.String()
	}
	return strings.Join(s, ", ")
}

func boundaryName(b rule.Boundary) string {
	if b == rule.Closed {
		return "closed"
	}
	return "half-open"
}

type jsonReport struct {
	buildinfo.Header
	Rules      []string       `json:"rules"`
	Boundary   string         `json:"boundary"`
	Seed       uint64         `json:"seed"`
	Seeds      int            `json:"seeds"`
	Verify     int            `json:"verify_seeds"`
	Lateness   string         `json:"lateness"`
	OpCost     string         `json:"op_cost"`
	Costs      string         `json:"costs,omitempty"`
	KeptAs     []string       `json:"kept_as,omitempty"`
	Strategies []jsonStrategy `json:"strategies"`
	Skipped    []jsonSkipped  `json:"skipped,omitempty"`
}

type jsonSkipped struct {
	Name string `json:"name"`
	Why  string `json:"why"`
}

type jsonStrategy struct {
	Name     string        `json:"name"`
	Setting  jsonSetting   `json:"setting"`
	Outcomes []jsonOutcome `json:"workloads"`
	// AnalyticWorst is per rule; -1 when the design has no bound.
	AnalyticWorst []int64   `json:"analytic_worst"`
	Tried         int       `json:"tried,omitempty"`
	Refuted       int       `json:"refuted,omitempty"`
	Rejected      string    `json:"rejected,omitempty"`
	Safe          *jsonSafe `json:"safe,omitempty"`
}

type jsonSetting struct {
	Burst     int  `json:"burst,omitempty"`
	UnitBurst int  `json:"unit_burst,omitempty"`
	Half      bool `json:"half,omitempty"`
	// Slack is uber's only: the other designs have none.
	Slack    *int            `json:"slack,omitempty"`
	PerRule  []jsonRuleLimit `json:"per_rule,omitempty"`
	Order    []int           `json:"order,omitempty"`
	MarginNs int64           `json:"margin_ns"`
	Go       string          `json:"go"`
}

type jsonRuleLimit struct {
	Burst int `json:"burst"`
	Limit int `json:"limit"`
}

type jsonSafe struct {
	Setting  jsonSetting   `json:"setting"`
	Outcomes []jsonOutcome `json:"workloads"`
	Verdicts []jsonVerdict `json:"verdicts"`
	Crowds   []jsonCrowd   `json:"crowds"`
	LongRun  float64       `json:"long_run"`
	RateKept float64       `json:"rate_kept"`
	Assumes  string        `json:"assumes"`
}

type jsonCrowd struct {
	Callers int   `json:"callers"`
	TookNs  int64 `json:"took_ns"`
}

type jsonVerdict struct {
	Rule          string `json:"rule"`
	MaxInWindow   int64  `json:"max_in_window"`
	AnalyticWorst int64  `json:"analytic_worst"`
	BoundBy       string `json:"bound_by"`
	Limit         int    `json:"limit"`
	Status        string `json:"status"`
}

type jsonOutcome struct {
	Workload           string     `json:"workload"`
	Runs               int        `json:"runs"`
	RunsWithViolations int        `json:"runs_with_violations"`
	Sends              int        `json:"sends_mean"`
	Refused            int        `json:"refused,omitempty"`
	Rules              []jsonRule `json:"rules"`
	Kinds              []jsonKind `json:"provider_kinds,omitempty"`
}

type jsonKind struct {
	Kind               string     `json:"kind"`
	RunsWithViolations int        `json:"runs_with_violations"`
	Rules              []jsonRule `json:"rules"`
}

type jsonRule struct {
	Rule        string `json:"rule"`
	Violations  int64  `json:"violations"`
	MaxInWindow int64  `json:"max_in_window"`
	Limit       int    `json:"limit"`
}

// writeJSON writes the audit as one JSON document (docs/json.md).
func writeJSON(w io.Writer, r *Report) error {
	out := jsonReport{Header: buildinfo.NewHeader(), Boundary: boundaryName(r.Boundary), Seed: r.Seed, Seeds: r.Seeds, Verify: r.Verify,
		Lateness: r.Lateness.String(), OpCost: r.OpCost.String(), Strategies: []jsonStrategy{}}
	for _, ru := range r.Rules {
		out.Rules = append(out.Rules, ru.String())
	}
	out.Costs = costText(r.Rules, "")
	out.KeptAs = r.KeptAs
	for _, sk := range r.Skipped {
		out.Skipped = append(out.Skipped, jsonSkipped(sk))
	}
	for _, sa := range r.Strategies {
		js := jsonStrategy{Name: sa.Name, Setting: setting(sa.design, sa.Config, r.Rules), Outcomes: outcomes(sa.Outcomes),
			Tried: sa.Tried, Refuted: sa.Refuted, Rejected: sa.Rejected}
		for _, b := range sa.Bounds {
			js.AnalyticWorst = append(js.AnalyticWorst, b.Worst)
		}
		if sa.Safe != nil {
			js.Safe = &jsonSafe{Setting: setting(sa.design, *sa.Safe, r.Sliding), Outcomes: outcomes(sa.SafeOutcomes),
				LongRun: longRun(sa.design, *sa.Safe, r.Sliding), RateKept: rateKept(*sa.Safe, r.Sliding), Assumes: assumes(r)}
			for _, c := range sa.Crowds {
				js.Safe.Crowds = append(js.Safe.Crowds, jsonCrowd{Callers: c.Callers, TookNs: int64(c.Took)})
			}
			for _, v := range sa.SafeVerdicts {
				js.Safe.Verdicts = append(js.Safe.Verdicts, jsonVerdict{Rule: v.Rule.String(), MaxInWindow: v.Measured,
					AnalyticWorst: v.Worst, BoundBy: r.Rules[v.By].String(), Limit: v.Rule.Limit, Status: v.Status})
			}
		}
		out.Strategies = append(out.Strategies, js)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func setting(d design, c catalog.LibConfig, rules []rule.Rule) jsonSetting {
	js := jsonSetting{Burst: c.Burst, UnitBurst: c.UnitBurst, Half: c.Half, MarginNs: int64(c.Margin), Go: code(d, c, rules)}
	if d.Tuning().family == designSlack {
		js.Slack = &c.Slack
	}
	for _, l := range c.PerRule {
		js.PerRule = append(js.PerRule, jsonRuleLimit(l))
	}
	if !slices.IsSorted(c.Order) {
		js.Order = c.Order
	}
	return js
}

func outcomes(os []Outcome) []jsonOutcome {
	out := make([]jsonOutcome, len(os))
	for i, o := range os {
		jo := jsonOutcome{Workload: o.Workload, Runs: o.Runs, RunsWithViolations: o.RunsWithViolations, Sends: o.Sends,
			Refused: o.Refused, Rules: jsonRules(o.Rules)}
		for _, ko := range o.Kinds {
			jo.Kinds = append(jo.Kinds, jsonKind{Kind: ko.Kind.String(), RunsWithViolations: ko.RunsWithViolations, Rules: jsonRules(ko.Rules)})
		}
		out[i] = jo
	}
	return out
}

func jsonRules(rs []RuleOutcome) []jsonRule {
	out := make([]jsonRule, len(rs))
	for i, r := range rs {
		out[i] = jsonRule{Rule: r.Rule.String(), Violations: r.Violations, MaxInWindow: r.MaxInWindow, Limit: r.Rule.Limit}
	}
	return out
}

// Write writes the report as text, or as JSON when format is "json".
func Write(w io.Writer, r *Report, format string) error {
	if format == "json" {
		return writeJSON(w, r)
	}
	return writeText(w, r)
}
