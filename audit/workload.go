package audit

import (
	"fmt"
	"time"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// maxCallers caps each workload, so contracts with long windows stay quick
// to audit (their long windows are then not saturated).
const maxCallers = 30

// concurrentSkew is each worker's clock offset in the concurrent workload:
// hosts a few milliseconds apart, as NTP keeps them.
var concurrentSkew = []time.Duration{0, 3 * time.Millisecond, -2 * time.Millisecond, time.Millisecond}

// Workload is one adversarial traffic pattern for a contract.
type Workload struct {
	Name string
	Doc  string
	// Arrivals, Callers, Workers and Skew go into the simulated scenario
	// (Workers 0 means 1).
	Arrivals workload.Arrivals
	Callers  int
	Workers  int
	Skew     []time.Duration
	// Costs, Actual and CallDuration, when set, replace the audit's costs
	// (costDists) with reserved ones: estimates, actual costs and the time
	// in flight before the provider settles them (settleCrowd).
	Costs, Actual []workload.UnitCost
	CallDuration  workload.Dist
}

// workloadsFor returns the audit's traffic for rules: a burst after a long
// idle spell (every bucket full, every window empty), steady arrivals at
// twice the fastest rule's rate, and Poisson arrivals at the slowest rule's
// long-run rate, a burst on either side of the fastest rule's window edge,
// and callers spread over several workers whose clocks disagree.
func workloadsFor(rules []rule.Rule) []Workload {
	rules = callEquivalent(rules)
	var (
		maxN    int
		maxW    time.Duration
		fastest = rules[0]
		slowest = rules[0]
	)
	for _, r := range rules {
		maxN = max(maxN, r.Limit)
		maxW = max(maxW, r.Window)
		// Compare N1/W1 with N2/W2 in integers: N1*W2 against N2*W1.
		if int64(r.Limit)*int64(fastest.Window) > int64(fastest.Limit)*int64(r.Window) {
			fastest = r
		}
		if int64(r.Limit)*int64(slowest.Window) < int64(slowest.Limit)*int64(r.Window) {
			slowest = r
		}
	}
	times := crowdWorkload(rules, min(3*maxN, maxCallers)).Arrivals.Times
	// The straddle: one call opens a window (a fixed window started by its
	// first hit, or the epoch-aligned one: the same instant), then N calls
	// just before its end and N at its end.
	minW, minN := rules[0].Window, rules[0].Limit
	for _, r := range rules {
		if r.Window < minW {
			minW, minN = r.Window, r.Limit
		}
	}
	edge := (2*maxW/minW + 1) * minW
	straddle := []int64{int64(edge - minW)}
	for range min(minN, maxCallers/2) {
		straddle = append(straddle, int64(edge-max(minW/100, 1)))
	}
	for range min(minN, maxCallers/2) {
		straddle = append(straddle, int64(edge))
	}
	pace := workload.Arrivals{Kind: workload.Interval, Every: max(fastest.Window/time.Duration(2*fastest.Limit), 1)}
	steady := min(max(4*maxN, 2*int(int64(2*maxW)*int64(fastest.Limit)/int64(fastest.Window))), maxCallers)
	return []Workload{
		{
			Name: "burst-after-idle",
			Doc:  "one call, an idle spell of twice the longest window, then every caller at once",
			Arrivals: workload.Arrivals{
				Kind: workload.Replay, Times: times,
			},
		},
		{
			Name:     "steady",
			Doc:      "one caller every half of the fastest rule's spacing: saturation",
			Arrivals: pace,
			Callers:  steady,
		},
		{
			Name: "poisson",
			Doc:  "Poisson arrivals at the slowest rule's long-run rate",
			Arrivals: workload.Arrivals{
				Kind: workload.Poisson, Rate: float64(slowest.Limit) / slowest.Window.Seconds(),
			},
			Callers: min(4*maxN, maxCallers),
		},
		{
			Name: "straddle",
			Doc:  "one call opens a window of the fastest rule, then N calls 1% of it before its end and N at its end",
			Arrivals: workload.Arrivals{
				Kind: workload.Replay, Times: straddle,
			},
		},
		{
			Name:     "concurrent",
			Doc:      "callers at the steady pace dealt to 4 workers whose clocks are 0, +3, -2 and +1 ms off",
			Arrivals: pace,
			Callers:  steady,
			Workers:  len(concurrentSkew),
			Skew:     concurrentSkew,
		},
	}
}

// maxSaturation caps a saturation workload's calls (longSaturation for the
// sliding logs); a rule it cannot drive through two windows rests on its
// analytic bound.
const maxSaturation = 50_000

// longSaturation is the size above which a saturation workload runs on the
// first seed only: a day of calls at a daily quota's pace is 10,000 sends
// per window, each a Lua script or three on the embedded Redis.
const longSaturation = 2_000

// saturationWorkloads returns, per rule, the workload that drives the setting cfg
// of strategy name to that rule's analytic worst case k (its limit, or
// less where another rule's limiter binds): calls spaced so that k of them
// fit in one window of the rule, for two of its windows. When the
// setting's sustained rate (paceOf) allows, the spacing lies halfway between
// the two, so no call waits and none loses time to a late wake-up; a
// design whose bound comes from a burst (a sliding log under a daily
// quota) gets the calls faster, for those two windows only. Rules that
// give the same calls share one workload.
func saturationWorkloads(d design, cfg catalog.LibConfig, opt *Options) []Workload {
	if s, ok := d.(*settleDesign); ok {
		return s.Saturation(cfg, opt)
	}
	if weighted(opt.Rules) {
		// Calls of random cost cannot be paced to fill a window exactly:
		// a weighted contract's rules rest on the analysis.
		return nil
	}
	pace := paceOf(d, cfg, opt.Rules)
	var out []Workload
	seen := map[[2]int64]bool{}
	for k, b := range boundsOf(d, cfg, opt) {
		r := opt.Rules[k]
		every := pace
		a := b.Worst // within the limit for a safe setting; beyond it as configured
		if a == Unbounded || (d.Tuning().family == designWindows && a > int64(r.Limit)) {
			// Chained fixed windows reach theirs only with a crowd of
			// callers waiting at the last limiter's edge: edgeCrowd.
			a = int64(r.Limit)
		}
		if a > 1 {
			fit := (r.Window - 1) / time.Duration(a-1) // a calls this far apart fit in W
			if fit < pace {
				every = fit
			} else {
				every = pace + (fit-pace)/2
			}
		}
		calls := min(int(2*r.Window/every)+1, maxSaturation)
		if every < pace {
			// Faster than the setting sustains: one window's worth and one
			// more, so no crowd of refused callers piles up retrying.
			calls = min(calls, int(a)+1)
		}
		if d.Tuning().family == designLogs {
			// Each call costs a sorted-set scan in the embedded Redis that
			// grows with the entries held: a day of them is left to the
			// analysis.
			calls = min(calls, longSaturation)
		}
		if calls < 2 || seen[[2]int64{int64(calls), int64(every)}] {
			continue
		}
		seen[[2]int64{int64(calls), int64(every)}] = true
		out = append(out, Workload{
			Name:     "saturate-" + r.String(),
			Doc:      fmt.Sprintf("%d calls one every %v: two windows of %s", calls, every, r),
			Arrivals: workload.Arrivals{Kind: workload.Interval, Every: every},
			Callers:  calls,
		})
	}
	if wl, ok := edgeCrowd(d, cfg, opt); ok {
		out = append(out, wl)
	}
	return out
}

// calls is the number of calls wl makes.
func (wl Workload) calls() int {
	if wl.Arrivals.Kind == workload.Replay {
		return len(wl.Arrivals.Times)
	}
	return wl.Callers
}

// edgeCrowdName names edgeCrowd's workload.
const edgeCrowdName = "edge-crowd"

// edgeCrowd is the workload that drives chained fixed windows to their
// worst case (chainWindowsWorst): one call opens a window of the limiter
// asked last, then 2·N of its calls at the earlier limiters' pace, the
// last of them well before that window closes, so N fill it and N + 1
// wait; at the next window they go together (within one retry spacing
// for windows opened by their first call). ok is false for other designs,
// a single rule, or a window too short to gather the crowd in.
func edgeCrowd(d design, cfg catalog.LibConfig, opt *Options) (Workload, bool) {
	m := d.Model(cfg, opt)
	if len(m.windows) < 2 || weighted(opt.Rules) {
		return Workload{}, false
	}
	last := m.windows[len(m.windows)-1]
	var pace time.Duration
	for _, w := range m.windows[:len(m.windows)-1] {
		pace = max(pace, (w.per+time.Duration(w.n)-1)/time.Duration(w.n))
	}
	pace += pace/100 + 1 // the op costs and late wake-ups never make a call wait
	calls := 2 * last.n
	guard := 2*pace + time.Duration(len(opt.Rules)+1)*max(m.step, 0) + last.retry
	stream := time.Duration(calls-1) * pace
	if calls+1 > maxSaturation || stream+guard >= last.per {
		return Workload{}, false
	}
	end := last.per - guard // the first window, opened by the call at 0
	if !m.firstHit {
		// Windows aligned to the Unix epoch: the first edge after the
		// stream, which the libraries' instant 0 need not be.
		p := int64(last.per)
		off := libs.Epoch.UnixNano() % p
		edge := p - off
		for time.Duration(edge) < stream+guard {
			edge += p
		}
		end = time.Duration(edge) - guard
	}
	times := []int64{0}
	for i := range calls {
		times = append(times, int64(end-time.Duration(calls-1-i)*pace))
	}
	return Workload{
		Name:     edgeCrowdName,
		Doc:      fmt.Sprintf("one call, then %d calls one every %v, ending before the %v window closes: %d wait for the next", calls, pace, last.per, last.n+1),
		Arrivals: workload.Arrivals{Kind: workload.Replay, Times: times},
	}, true
}
