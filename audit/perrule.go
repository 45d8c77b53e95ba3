package audit

import (
	"cmp"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// perRuleTries caps the per-rule settings run, best ranked first.
const perRuleTries = 4

// maxCrowd caps the crowds, each refused caller of a retrying design
// asking again until it passes.
const maxCrowd = 100

// crowdSizes are the crowds a suggestion is costed on: the shortest
// rule's N callers arriving together (of mean cost for a cost rule), and
// three times as many, at most maxCrowd.
func crowdSizes(rules []rule.Rule) []int {
	n := shortest(callEquivalent(rules)).Limit
	return []int{min(n, maxCrowd), min(3*n, maxCrowd)}
}

func shortest(rules []rule.Rule) rule.Rule {
	s := rules[0]
	for _, r := range rules {
		if r.Window < s.Window {
			s = r
		}
	}
	return s
}

// perRuleCandidates returns settings of design d at base's margin in
// which each rule's limiter has its own burst (1, the shortest rule's N or
// three times it, below the rule's own N) and the largest rate that keeps
// every analytic worst case within its limit, for every order a chain may
// ask them in (askOrders), best ranked first (rank).
func perRuleCandidates(opt *Options, d design, base catalog.LibConfig) []catalog.LibConfig {
	n := shortest(opt.Rules).Limit
	ladders := make([][]int, len(opt.Rules))
	for i, r := range opt.Rules {
		for _, b := range []int{1, n, 3 * n} {
			if b < r.Limit && !slices.Contains(ladders[i], b) {
				ladders[i] = append(ladders[i], b)
			}
		}
		if len(ladders[i]) == 0 {
			ladders[i] = []int{1}
		}
	}
	var out []catalog.LibConfig
	for _, order := range askOrders(opt, d, base) {
		for _, bursts := range product(ladders) {
			c := base
			c.Burst, c.Order = 0, order
			c.PerRule = make([]libs.RuleLimit, len(bursts))
			for i, b := range bursts {
				c.PerRule[i].Burst = b
			}
			if fitRates(opt, d, &c) {
				out = append(out, c)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b catalog.LibConfig) int { return rank(opt, d, a, b) })
	return out
}

// maxOrdered caps the rules whose every order a chained design's search
// tries (4! = 24 orders).
const maxOrdered = 4

// askOrders are the orders the search tries for design d: for a chain of
// at most maxOrdered limiters that pass calls on as tokens come, every
// order (nil first: the rules' order), since the limiters after a rule's
// widen its window by their delays; otherwise base's alone.
func askOrders(opt *Options, d design, base catalog.LibConfig) [][]int {
	out := [][]int{base.Order}
	n := len(opt.Rules)
	if m := d.Model(base, opt); !m.chained || !m.passes || n < 2 || n > maxOrdered {
		return out
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	for _, p := range permutations(idx) {
		if !slices.Equal(p, idx) {
			out = append(out, p)
		}
	}
	return out
}

// permutations lists every order of xs, in lexicographic order of
// positions.
func permutations(xs []int) [][]int {
	if len(xs) <= 1 {
		return [][]int{slices.Clone(xs)}
	}
	var out [][]int
	for i, x := range xs {
		rest := append(slices.Clone(xs[:i]), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]int{x}, p...))
		}
	}
	return out
}

// product lists every choice of one value from each ladder.
func product(ladders [][]int) [][]int {
	out := [][]int{nil}
	for _, l := range ladders {
		var next [][]int
		for _, p := range out {
			for _, v := range l {
				next = append(next, append(slices.Clone(p), v))
			}
		}
		out = next
	}
	return out
}

// fitRates gives each rule's limiter in c the most tokens per window that
// keep the rule's analytic worst case within its limit (bisection: the
// bound grows with the rate), and reports whether every rule then holds.
func fitRates(opt *Options, d design, c *catalog.LibConfig) bool {
	for i, r := range opt.Rules {
		lo, hi := 1, r.Limit
		for lo < hi {
			mid := (lo + hi + 1) / 2
			c.PerRule[i].Limit = mid
			if b := boundsOf(d, *c, opt)[i]; b.Worst != Unbounded && b.Worst <= int64(r.Limit) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		c.PerRule[i].Limit = lo
	}
	return analyticSafe(boundsOf(d, *c, opt))
}

// crowdBound is the analytic time k callers arriving together at full
// buckets take through design d's limiters with cfg: the slowest
// limiter's, (k − burst) tokens at its rate; late wake-ups not counted.
func crowdBound(ds design, cfg catalog.LibConfig, rules []rule.Rule, k int) time.Duration {
	var d time.Duration
	for i, r := range rules {
		l := limiterAt(ds, cfg, i, r)
		if ds.Tuning().family == designSlack {
			l.Burst = cfg.Slack + 1
		}
		if need := int64(k - l.Burst); need > 0 {
			per := int64(r.Window + cfg.Margin)
			d = max(d, time.Duration(ceilDiv(need*per, int64(l.Limit))))
		}
	}
	return d
}

// longRun is the share of the contract's long-run rate (its slowest
// rule's N/W) that design d with cfg sustains.
func longRun(d design, cfg catalog.LibConfig, rules []rule.Rule) float64 {
	contract, kept := 0.0, 0.0
	for i, r := range rules {
		c := float64(r.Limit) / float64(r.Window)
		k := float64(limiterAt(d, cfg, i, r).Limit) / float64(r.Window+cfg.Margin)
		if i == 0 || c < contract {
			contract = c
		}
		if i == 0 || k < kept {
			kept = k
		}
	}
	return min(kept/contract, 1)
}

// rank orders two settings by what they let through: the time 3N callers
// arriving together take, then the long-run rate, then the rate kept on
// the rule that loses most.
func rank(opt *Options, d design, a, b catalog.LibConfig) int {
	k := crowdSizes(opt.Rules)[1]
	if ta, tb := crowdBound(d, a, opt.Rules, k), crowdBound(d, b, opt.Rules, k); ta != tb {
		return cmp.Compare(ta, tb)
	}
	if la, lb := longRun(d, a, opt.Rules), longRun(d, b, opt.Rules); la != lb {
		return cmp.Compare(lb, la)
	}
	return cmp.Compare(rateKept(b, opt.Rules), rateKept(a, opt.Rules))
}

// searchPerRule tries, for a design whose limiters take a burst and rate
// per rule, the per-rule settings at the safe setting's margin that rank
// above it, best first, and keeps the first that is safe (confirm).
func searchPerRule(opt *Options, wls []Workload, sa *StrategyAudit) error {
	if sa.Safe == nil || !sa.design.Tuning().perRule || weighted(opt.Rules) {
		return nil
	}
	base, rejected := *sa.Safe, sa.Rejected
	clean := cleanRun(opt, wls, sa)
	tries := 0
	for _, c := range perRuleCandidates(opt, sa.design, base) {
		if rank(opt, sa.design, c, base) >= 0 || tries == perRuleTries {
			break
		}
		tries++
		sa.Tried++
		ok, err := confirm(opt, sa, c, clean)
		if err != nil {
			return ignoreDisagrees(err)
		}
		if ok {
			return nil
		}
	}
	sa.Rejected = rejected
	return nil
}

// Crowd is how long k callers arriving together after an idle spell took
// through a setting, on the first seed: from their arrival to the last
// send, late wake-ups included.
type Crowd struct {
	Callers int
	Took    time.Duration
}

// crowds measures the setting cfg of design d on each crowd size.
func crowds(opt *Options, d design, cfg catalog.LibConfig) ([]Crowd, error) {
	var out []Crowd
	run, err := d.Construct(cfg)
	if err != nil {
		return nil, err
	}
	for _, k := range crowdSizes(opt.Rules) {
		wl := crowdWorkload(opt.Rules, k)
		res, err := runSeeds(wl.Scenario(opt, d.Name()), run, opt.Seed, 1, false)
		if err != nil {
			return nil, err
		}
		at := wl.Arrivals.Times[1]
		out = append(out, Crowd{Callers: k, Took: time.Duration(slices.Max(res[0].Sends) - at)})
	}
	return out, nil
}

// crowdWorkload is one call, an idle spell of twice the longest window,
// then k callers at once: the burst-after-idle workload of k callers.
func crowdWorkload(rules []rule.Rule, k int) Workload {
	var maxW time.Duration
	for _, r := range rules {
		maxW = max(maxW, r.Window)
	}
	times := make([]int64, 1+k)
	for i := 1; i < len(times); i++ {
		times[i] = int64(2 * maxW)
	}
	return Workload{Name: "crowd", Arrivals: workload.Arrivals{Kind: workload.Replay, Times: times}}
}
