package audit

import (
	"fmt"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// costParts sets the workloads' costs for a weighted contract: each call
// costs uniform(1, ⌊N/costParts⌋) in each unit, N the smallest limit of
// the rules that meter it (1 to 9000 tokens under 90000 tokens/1m): from
// a call that takes almost nothing to one that takes a tenth of the
// window, so a burst after idle is a few calls and a bucket's burst in
// units must hold the largest call.
const costParts = 10

// weighted reports whether any rule meters a cost.
func weighted(rules []rule.Rule) bool { return len(rule.Units(rules)) > 0 }

// maxCost is the most one call of the audit's workloads costs in unit.
func maxCost(rules []rule.Rule, unit string) int64 {
	n := 0
	for _, r := range rules {
		if r.Unit == unit && (n == 0 || r.Limit < n) {
			n = r.Limit
		}
	}
	return max(int64(n/costParts), 1)
}

// costDists returns the workloads' costs for rules, one distribution per
// unit they meter, in the order rule.Units names them (nil for none).
func costDists(rules []rule.Rule) []workload.UnitCost {
	var out []workload.UnitCost
	for _, u := range rule.Units(rules) {
		out = append(out, workload.UnitCost{Unit: u, Dist: workload.Dist{Kind: workload.Uniform, A: 1, B: time.Duration(maxCost(rules, u))}})
	}
	return out
}

// callEquivalent returns rules with each cost rule read as the calls of
// mean cost it holds, so that the workloads' pace and sizes follow the
// rule that binds.
func callEquivalent(rules []rule.Rule) []rule.Rule {
	out := make([]rule.Rule, len(rules))
	for i, r := range rules {
		out[i] = r
		if r.Unit != "" {
			mean := (1 + maxCost(rules, r.Unit)) / 2
			out[i] = rule.Rule{Limit: max(int(int64(r.Limit)/mean), 1), Window: r.Window}
		}
	}
	return out
}

// Skipped is a strategy left out of an audit, and why.
type Skipped struct {
	Name string
	Why  string
}

// costStrategies splits ds, for opt's rules, into those audited and
// those left out: for a weighted contract, those that meter no costs; for
// a contract of calls only, those whose costs are known after the call.
func costStrategies(rules []rule.Rule, ds []design) ([]design, []Skipped) {
	var keep []design
	var skip []Skipped
	for _, d := range ds {
		why := d.CallsOnly()
		if weighted(rules) {
			why = d.NoCosts()
		}
		if why != "" {
			skip = append(skip, Skipped{d.Name(), why})
			continue
		}
		keep = append(keep, d)
	}
	return keep, skip
}

// unitBurst returns the largest burst in units, halving from the smallest
// cost rule's limit, that keeps every cost rule's analytic worst case
// within its limit with c's margin and still admits the largest call; ok
// is false when none does.
func unitBurst(opt *Options, d design, c catalog.LibConfig) (int, bool) {
	n, most := 0, int64(1)
	for _, r := range opt.Rules {
		if r.Unit != "" {
			if n == 0 || r.Limit < n {
				n = r.Limit
			}
			most = max(most, maxCost(opt.Rules, r.Unit))
		}
	}
	for b := n; int64(b) >= most; b /= 2 {
		c.UnitBurst = b
		ok := true
		for _, bd := range boundsOf(d, c, opt) {
			if bd.Rule.Unit != "" && (bd.Worst == Unbounded || bd.Worst > int64(bd.Rule.Limit)) {
				ok = false
			}
		}
		if ok {
			return b, true
		}
	}
	return 0, false
}

func skippedText(sk []Skipped) string {
	s := ""
	for _, k := range sk {
		s += fmt.Sprintf("\n  %s: %s", k.Name, k.Why)
	}
	return s
}

// unitCandidates are candidates for a bucket design under a weighted
// contract: per margin, the burst in units that unitBurst finds (margins
// where none holds the largest call are passed over), with the call
// rules' bursts from the largest down, as for a contract of calls.
func unitCandidates(opt *Options, d design, margins []time.Duration) []catalog.LibConfig {
	minCallN := 0
	for _, r := range opt.Rules {
		if r.Unit == "" && (minCallN == 0 || r.Limit < minCallN) {
			minCallN = r.Limit
		}
	}
	var out []catalog.LibConfig
	for _, m := range margins {
		c := opt.Config
		c.Margin = m
		ub, ok := unitBurst(opt, d, c)
		if !ok {
			continue
		}
		c.UnitBurst = ub
		out = append(out, c)
		out = appendBursts(out, c, minCallN, opt.Config.Burst)
	}
	return out
}

// refused counts the calls refused at once over outcomes.
func refused(os []Outcome) int {
	n := 0
	for _, o := range os {
		n += o.Refused
	}
	return n
}

// costText describes the workloads' costs after prefix ("" without).
func costText(rules []rule.Rule, prefix string) string {
	s := ""
	for i, u := range rule.Units(rules) {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s uniform(1, %d)", u, maxCost(rules, u))
	}
	if s == "" {
		return ""
	}
	return prefix + s
}

// unitsOrCalls names the units rules meter, "" for calls among them.
func unitsOrCalls(rules []rule.Rule) []string {
	var out []string
	for _, r := range rules {
		if !slices.Contains(out, r.Unit) {
			out = append(out, r.Unit)
		}
	}
	return out
}
