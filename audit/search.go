package audit

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// candidates lists the settings the search tries for design d, most
// generous first: the smallest margin, then the largest burst or slack.
// Margin costs throughput all day; burst and slack only matter after idle.
func candidates(opt *Options, d design) []catalog.LibConfig {
	tune := d.Tuning()
	minN, minW := opt.Rules[0].Limit, opt.Rules[0].Window
	for _, r := range opt.Rules {
		minN, minW = min(minN, r.Limit), min(minW, r.Window)
	}
	margins := []time.Duration{0}
	for _, div := range []time.Duration{1000, 500, 200, 100, 50, 20, 10, 5, 2, 1} {
		if m := minW / div; m > margins[len(margins)-1] {
			margins = append(margins, m)
		}
	}
	if weighted(opt.Rules) && tune.family == designBuckets {
		return unitCandidates(opt, d, margins)
	}
	var out []catalog.LibConfig
	switch tune.family {
	case designWindows:
		// With the full N no fixed window keeps a sliding one (N calls
		// before an edge and N after it), so only ⌊N/2⌋ is tried.
		for _, m := range margins {
			c := opt.Config
			c.Margin, c.Half = m, true
			out = append(out, c)
		}
		return out
	case designLogs, designExec:
		if tune.marginFirst {
			margins = margins[1:]
		}
		for _, m := range margins {
			c := opt.Config
			c.Margin = m
			out = append(out, c)
		}
		return out
	}
	for _, m := range margins {
		c := opt.Config
		c.Margin = m
		if tune.family == designSlack {
			for s := opt.Config.Slack; s >= 0; s-- {
				c.Slack = s
				out = append(out, c)
			}
			continue
		}
		c.Burst = opt.Config.Burst
		out = append(out, c)
		out = appendBursts(out, c, minN, opt.Config.Burst)
	}
	return out
}

// appendBursts appends c with each burst below the given one (its default
// when 0) and below the smallest limit n, largest first.
func appendBursts(out []catalog.LibConfig, c catalog.LibConfig, n, burst int) []catalog.LibConfig {
	top := n - 1
	if burst > 0 {
		top = min(top, burst-1)
	}
	for b := top; b >= 1; b-- {
		c.Burst = b
		out = append(out, c)
	}
	return out
}

// rateKept is the share of each rule's sustained rate that cfg keeps, for the
// rule that loses most: ⌊N/2⌋/N with Half, times W/(W+margin).
func rateKept(cfg catalog.LibConfig, rules []rule.Rule) float64 {
	kept := 1.0
	for i, r := range rules {
		k := float64(r.Window) / float64(r.Window+cfg.Margin)
		k *= float64(cfg.LimitFor(cfg.RuleLimitAt(i, r).Limit)) / float64(r.Limit)
		kept = min(kept, k)
	}
	return kept
}

// search fills sa.Safe with the first candidate that the analysis keeps
// within every limit (boundsOf) and that is clean on every workload over
// opt.Seeds seeds, then over opt.Verify seeds, and then on its saturation
// workloads, with every rule reached, at its bound or proved (verdict).
// Among the bursts (or slacks) of one margin it assumes that a smaller one
// is never worse: when the smallest fails, the margin is passed over, and
// otherwise the largest clean one is found by bisection over opt.Seeds
// seeds, then verified (stepping down while verification fails).
func search(opt *Options, wls []Workload, sa *StrategyAudit) error {
	cands := provable(opt, sa)
	clean := cleanRun(opt, wls, sa)
	for i := 0; i < len(cands); {
		// cands[i:j] share a margin, most generous first.
		j := i + 1
		for j < len(cands) && cands[j].Margin == cands[i].Margin {
			j++
		}
		sa.Tried++
		o, err := clean(cands[j-1], opt.Seeds)
		if err != nil {
			return ignoreDisagrees(err)
		}
		if o == nil {
			i = j
			continue
		}
		// cands[hi] is clean; find the first clean one in cands[i:hi].
		lo, hi := i, j-1
		for lo < hi {
			mid := (lo + hi) / 2
			sa.Tried++
			o, err := clean(cands[mid], opt.Seeds)
			if err != nil {
				return ignoreDisagrees(err)
			}
			if o != nil {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		for ; hi < j; hi++ {
			ok, err := confirm(opt, sa, cands[hi], clean)
			if err != nil || ok {
				return ignoreDisagrees(err)
			}
		}
		i = j
	}
	return nil
}

// cleanRun returns the run of a setting over every workload on seeds
// seeds that search and confirm judge by: nil outcomes at the first
// violation, errDisagrees when a rule measured over its analytic worst case.
func cleanRun(opt *Options, wls []Workload, sa *StrategyAudit) func(catalog.LibConfig, int) ([]Outcome, error) {
	// The most adversarial workloads first, so a setting that fails fails
	// fast; outcomes are then put back in the report's order.
	order := slices.Clone(wls)
	slices.Reverse(order)
	return func(c catalog.LibConfig, seeds int) ([]Outcome, error) {
		o, err := run(opt, order, sa.design, c, seeds, true)
		if o != nil {
			slices.Reverse(o)
			if v := disagreement(o, boundsOf(sa.design, c, opt)); v != nil {
				sa.Rejected = fmt.Sprintf("%s: %v %s", settingWords(sa.design, c), v.Rule, verdictText([]RuleVerdict{*v}, ruleName(opt)))
				return nil, errDisagrees
			}
		}
		return o, err
	}
}

// provable returns the candidates whose analytic worst case is within
// every limit, and counts the others in sa.Refuted.
func provable(opt *Options, sa *StrategyAudit) []catalog.LibConfig {
	var out []catalog.LibConfig
	for _, c := range candidates(opt, sa.design) {
		if analyticSafe(boundsOf(sa.design, c, opt)) {
			out = append(out, c)
		} else {
			sa.Refuted++
		}
	}
	return out
}

// confirm runs c over opt.Verify seeds of every workload and on its
// saturation workloads, and keeps it in sa when all are clean and every
// rule stands (allSafe); otherwise it notes in sa why not.
func confirm(opt *Options, sa *StrategyAudit, c catalog.LibConfig, clean func(catalog.LibConfig, int) ([]Outcome, error)) (bool, error) {
	o, err := clean(c, opt.Verify)
	if err != nil || o == nil {
		return false, err
	}
	for _, wl := range saturationWorkloads(sa.design, c, opt) {
		so, err := runSaturation(opt, wl, sa.design, c, opt.Verify, true)
		if err != nil || so == nil {
			return false, err
		}
		o = append(o, so...)
		if v := disagreement(o, boundsOf(sa.design, c, opt)); v != nil {
			sa.Rejected = fmt.Sprintf("%s: %v %s on %s", settingWords(sa.design, c), v.Rule, verdictText([]RuleVerdict{*v}, ruleName(opt)), wl.Name)
			return false, errDisagrees
		}
	}
	if n := refused(o); n > 0 {
		sa.Rejected = fmt.Sprintf("%s: refuses %d calls whose cost is above a burst", settingWords(sa.design, c), n)
		return false, nil
	}
	vs := verdict(o, boundsOf(sa.design, c, opt))
	if !allSafe(vs) {
		sa.Rejected = fmt.Sprintf("%s: %s", settingWords(sa.design, c), verdictText(vs, ruleName(opt)))
		return false, nil
	}
	sa.Safe, sa.SafeOutcomes, sa.SafeVerdicts = &c, o, vs
	return true, nil
}

// runSaturation runs the saturation workload wl with cfg on seeds seeds,
// or on the first only when it is over longSaturation calls.
func runSaturation(opt *Options, wl Workload, d design, cfg catalog.LibConfig, seeds int, stopEarly bool) ([]Outcome, error) {
	if wl.calls() > longSaturation {
		seeds = 1
	}
	return run(opt, []Workload{wl}, d, cfg, seeds, stopEarly)
}

// errDisagrees ends a search: a workload put more sends in one window than
// the design's analytic worst case allows, so its model does not describe
// it and no setting can be proved.
var errDisagrees = errors.New("audit: measured over the analytic worst case")

// ignoreDisagrees ends a search without an error when the design let more
// through than its model (sa.Rejected says so): nothing is left to prove.
func ignoreDisagrees(err error) error {
	if errors.Is(err, errDisagrees) {
		return nil
	}
	return err
}

// disagreement returns the first rule whose measured count exceeds its
// analytic worst case, or nil.
func disagreement(o []Outcome, bounds []Bound) *RuleVerdict {
	for _, v := range verdict(o, bounds) {
		if v.Status == Disagrees {
			return &v
		}
	}
	return nil
}

func ruleName(opt *Options) func(int) string {
	return func(i int) string { return opt.Rules[i].String() }
}
