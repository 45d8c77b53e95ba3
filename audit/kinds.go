package audit

import (
	"time"

	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
)

// providerKinds are the ways of counting that Options.ProviderKinds judges
// every run against, for the rules' N/W: sliding, fixed windows aligned to
// the epoch (virtual instant 0), and a token bucket of burst N refilled N
// per W (GCRA with the same parameters).
var providerKinds = []rule.Kind{rule.Sliding, rule.Fixed, rule.Bucket}

// KindOutcome is one provider kind's judgement of a workload's runs: the
// same sends as the Outcome's, counted as that provider counts.
type KindOutcome struct {
	Kind               rule.Kind
	RunsWithViolations int
	// Rules are the rules' N/W as Kind; MaxInWindow is 0 for a bucket,
	// which has no window.
	Rules []RuleOutcome
}

// limiterRules returns rules as the libraries are configured from them:
// N/W and the unit as users write them, whatever kind the provider counts.
func limiterRules(rules []rule.Rule) []rule.Rule {
	out := make([]rule.Rule, len(rules))
	for i, r := range rules {
		out[i] = rule.Rule{Limit: r.Limit, Window: r.Window, Unit: r.Unit, Buckets: r.Buckets}
	}
	return out
}

// slidingOnly reports whether the provider counts every rule in sliding
// windows: the rules the analytic worst cases and the search are for.
func slidingOnly(rules []rule.Rule) bool {
	for _, r := range rules {
		if r.Kind != rule.Sliding {
			return false
		}
	}
	return true
}

// asKind returns the N/W of rules counted as kind k (a bucket of burst N).
func asKind(rules []rule.Rule, k rule.Kind) []rule.Rule {
	out := limiterRules(rules)
	for i := range out {
		out[i].Kind = k
		if k == rule.Bucket {
			out[i].Burst = out[i].Limit
		}
	}
	return out
}

// judge returns the checker's figures for a run's sends under rules.
func judge(res *simulate.StrategyResult, units []string, rules []rule.Rule, b rule.Boundary) ([]RuleOutcome, error) {
	cfg := checker.Config{Rules: rules, Boundary: b, Units: units}
	check := func() (checker.Report, error) { return checker.CheckCosts(res.Sends, res.SendCosts, cfg) }
	if res.SendSettled != nil {
		// Costs known after the call: the provider's reserved reading.
		check = func() (checker.Report, error) {
			return checker.CheckReserved(res.Sends, res.SendCosts, res.SendActuals, res.SendSettled, cfg)
		}
	}
	rep, err := check()
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	out := make([]RuleOutcome, len(rep.Rules))
	for k, rr := range rep.Rules {
		out[k] = RuleOutcome{Rule: rules[k], Violations: rr.Violations, MaxInWindow: rr.MaxInWindow}
	}
	return out, nil
}

// addRuns adds one run's figures to rs.
func addRuns(rs []RuleOutcome, run []RuleOutcome) (violated bool) {
	for k, rr := range run {
		rs[k].Violations += rr.Violations
		rs[k].MaxInWindow = max(rs[k].MaxInWindow, rr.MaxInWindow)
		violated = violated || rr.Violations > 0
	}
	return violated
}

// judgeKinds adds res, judged as each of providerKinds, to o.Kinds.
func judgeKinds(o *Outcome, res *simulate.StrategyResult, units []string, opt *Options) error {
	if o.Kinds == nil {
		for _, k := range providerKinds {
			o.Kinds = append(o.Kinds, KindOutcome{Kind: k, Rules: newRuleOutcomes(asKind(opt.Rules, k))})
		}
	}
	for i := range o.Kinds {
		ko := &o.Kinds[i]
		rs, err := judge(res, units, asKind(opt.Rules, ko.Kind), opt.Boundary)
		if err != nil {
			return err
		}
		if addRuns(ko.Rules, rs) {
			ko.RunsWithViolations++
		}
	}
	return nil
}

func newRuleOutcomes(rules []rule.Rule) []RuleOutcome {
	out := make([]RuleOutcome, len(rules))
	for k, r := range rules {
		out[k].Rule = r
	}
	return out
}

// checkKinds refuses what the kinds of opt's rules rule out: the provider
// kinds and the worst-case search are for sliding rules.
func checkKinds(opt *Options) error {
	if weighted(opt.Rules) && opt.SearchDir != "" {
		return fmt.Errorf("audit: the worst-case search is for call rules only so far")
	}
	if slidingOnly(opt.Rules) {
		return nil
	}
	if opt.ProviderKinds {
		return fmt.Errorf("audit: the provider kinds are judged for rules written N/W; give rules without a kind")
	}
	if opt.SearchDir != "" {
		return fmt.Errorf("audit: the worst-case search is for sliding rules only")
	}
	return nil
}

// kindTotals sums a strategy's outcomes per provider kind: runs with
// violations, and per rule the violations and the most in one window.
func kindTotals(os []Outcome) (runs int, out []KindOutcome) {
	for _, o := range os {
		runs += o.Runs
		for i, ko := range o.Kinds {
			if len(out) <= i {
				out = append(out, KindOutcome{Kind: ko.Kind, Rules: newRuleOutcomes(ruleOf(ko.Rules))})
			}
			out[i].RunsWithViolations += ko.RunsWithViolations
			for k, rr := range ko.Rules {
				out[i].Rules[k].Violations += rr.Violations
				out[i].Rules[k].MaxInWindow = max(out[i].Rules[k].MaxInWindow, rr.MaxInWindow)
			}
		}
	}
	return runs, out
}

func ruleOf(rs []RuleOutcome) []rule.Rule {
	out := make([]rule.Rule, len(rs))
	for i, r := range rs {
		out[i] = r.Rule
	}
	return out
}

// writeKinds writes each strategy against each provider kind, over every
// workload and seed.
func writeKinds(w io.Writer, r *Report) error {
	fmt.Fprintf(w, "\nagainst each provider kind (the same sends judged three ways, every workload, seeds %d..%d):\n\n", r.Seed, r.Seed+uint64(r.Seeds)-1)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"strategy"}
	for _, k := range providerKinds {
		name := kindName(k)
		head = append(head, name+": runs violating", "violations")
		if k != rule.Bucket {
			head = append(head, "max in window / limit")
		}
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, sa := range r.Strategies {
		runs, kos := kindTotals(sa.Outcomes)
		row := []string{sa.Name}
		for _, ko := range kos {
			row = append(row, fmt.Sprintf("%d/%d", ko.RunsWithViolations, runs), violations(Outcome{Rules: ko.Rules}))
			if ko.Kind != rule.Bucket {
				row = append(row, windows(ko.Rules))
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nsliding: every window [t, t+W); fixed: windows [kW, (k+1)W) from the epoch (virtual instant 0); bucket: a token bucket of burst N refilled N per W (GCRA with the same parameters), full at the first send"+
		"\nthe analytic worst cases and the safe-setting search are for the sliding provider only")
	return err
}

func kindName(k rule.Kind) string {
	if k == rule.Bucket {
		return "bucket (burst N)"
	}
	return k.String()
}

// longestDay is the longest local day of a time zone (a day the clocks go
// back an hour): a sliding window this long holds every local day.
const longestDay = 25 * time.Hour

// slidingEquivalent returns a sliding rule whose every keeping log keeps
// r as its provider counts it, and why (empty for a sliding rule):
//   - fixed and first-call windows of W are each one of the sliding windows
//     of W (local days in a zone: of their longest, 25 h);
//   - a bucket of burst B refilled N per W admits B + N·d/W in any span d,
//     and sliding b per T with b = min(B, N) and T = ⌈W·b/N⌉ lets through at
//     most b·(⌊d/T⌋ + 1) ≤ b + N·d/W there.
func slidingEquivalent(r rule.Rule) (rule.Rule, string) {
	out := rule.Rule{Limit: r.Limit, Window: r.Window, Unit: r.Unit, Buckets: r.Buckets}
	switch r.Kind {
	case rule.Fixed, rule.FirstCall:
		if r.Zone != "" {
			out.Window = longestDay
			return out, fmt.Sprintf("%v kept as %v: a local day is at most 25 h, one of the sliding windows of that length", r, out)
		}
		return out, fmt.Sprintf("%v kept as %v: each of its windows is one of the sliding windows of %v, whatever their offset", r, out, r.Window)
	case rule.Bucket:
		b := min(r.Burst, r.Limit)
		out.Limit = b
		// ⌈W·b/N⌉ in parts, so a day's nanoseconds times b never overflow.
		w, n := int64(r.Window), int64(r.Limit)
		out.Window = time.Duration(w/n*int64(b) + ceilDiv(w%n*int64(b), n))
		return out, fmt.Sprintf("%v kept as %v: %d per %v sliding lets through at most %d + %d·d/%v in any span d, what the bucket admits", r, out, b, out.Window, b, r.Limit, r.Window)
	}
	return out, ""
}

// slidingOptions returns opt with each rule read as its sliding
// equivalent (slidingEquivalent), the rules the search keeps, and the
// reasons for those it changed.
func slidingOptions(opt *Options) (*Options, []string) {
	so := *opt
	so.Rules = make([]rule.Rule, len(opt.Rules))
	var why []string
	for i, r := range opt.Rules {
		var w string
		if so.Rules[i], w = slidingEquivalent(r); w != "" {
			why = append(why, w)
		}
	}
	return &so, why
}
