package audit

import (
	"fmt"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// Names of the designs whose calls' costs are known only after the call.
const (
	postCallName     = catalog.PostCall
	reserveName      = "reserve"
	redisReserveName = "redis-reserve"
)

// Why the designs of reserved costs have no setting or no audit.
const (
	unseenInFlight = "charges a call only when its answer reports the cost: the calls in flight are unseen, and no margin or limit hides them"
	needsCostRule  = "no cost rule: nothing to reserve at admission or settle at the answer"
	noCallRule     = "no call rule: nothing bounds the calls in flight, each charged nothing until its answer"
)

// settleDesign is a design for costs known only after the call
// (docs/semantics.md, "Reserved costs"): the catalog's strategy of that
// name, which the simulator drives by Reserve at each call's estimates and
// Settle at its end with its actual costs. worst is the analytic worst
// case of one cost rule's window (postCallWorst, reserveWorst).
type settleDesign struct {
	name  string
	tune  tuning
	worst func(settleBound) int64
}

// settleDesigns are the designs of reserved costs audit knows, in table
// order, after the Go designs.
func settleDesigns() []design {
	return []design{
		&settleDesign{name: postCallName, tune: tuning{family: designLogs, noSetting: unseenInFlight}, worst: postCallWorst},
		&settleDesign{name: reserveName, tune: tuning{family: designLogs}, worst: reserveWorst},
		&settleDesign{name: redisReserveName, tune: tuning{family: designLogs}, worst: reserveWorst},
	}
}

func (s *settleDesign) Name() string      { return s.name }
func (s *settleDesign) NoCosts() string   { return "" }
func (s *settleDesign) CallsOnly() string { return needsCostRule }
func (s *settleDesign) Tuning() tuning    { return s.tune }

func (s *settleDesign) Code(cfg catalog.LibConfig, i int, r rule.Rule) string {
	if s.name != postCallName && r.Unit != "" {
		return perWindowCode(cfg, i, r) + ", reserved at the estimate"
	}
	return perWindowCode(cfg, i, r)
}

func (s *settleDesign) Validate(sc *workload.Scenario) error { return catalog.Validate(sc) }

// Construct runs the catalog's strategy on the scenario with cfg's margin
// and, where the workload gave none, the reserved costs settleCosts draws.
func (s *settleDesign) Construct(cfg catalog.LibConfig) (runner, error) {
	st, ok := catalog.Lookup(s.name)
	if !ok || !st.Settles {
		return nil, fmt.Errorf("audit: %q is not a strategy that settles", s.name)
	}
	run := strategyRunner(st)
	return func(sc *workload.Scenario, seed uint64) (simulate.StrategyResult, error) {
		c := *sc
		c.Margin = cfg.Margin
		if !c.Reserved() {
			settleCosts(&c)
		}
		return run(&c, seed)
	}, nil
}

// settleCosts makes sc's calls reserved ones: in each unit, whose costs
// the workload draws from uniform(1, M), the estimate E is drawn from
// uniform(⌈M/2⌉, M) and the actual cost A from uniform(1, ⌈M/2⌉), and
// each call stays in flight uniform(W/60, W/6) of the shortest cost
// rule's window before the provider settles it. A ≤ E always: a
// provider's usage never exceeds the prompt plus max_tokens, the estimate
// a gateway reserves, and A = E is drawn too (at ⌈M/2⌉). A > E is the
// estimate of a gateway that leaves max_tokens out; the semantics allow
// it and settleBound.over covers it, but these workloads do not draw it:
// they measure the designs as written for the provider's own estimate.
func settleCosts(sc *workload.Scenario) {
	var w time.Duration
	for _, r := range sc.Rules {
		if r.Unit != "" && (w == 0 || r.Window < w) {
			w = r.Window
		}
	}
	costs := make([]workload.UnitCost, len(sc.Costs))
	sc.Actual = make([]workload.UnitCost, len(sc.Costs))
	for u, c := range sc.Costs {
		m := c.Dist.B
		half := (m + 1) / 2
		costs[u] = workload.UnitCost{Unit: c.Unit, Dist: workload.Dist{Kind: workload.Uniform, A: half, B: m}}
		sc.Actual[u] = workload.UnitCost{Unit: c.Unit, Dist: workload.Dist{Kind: workload.Uniform, A: 1, B: half}}
	}
	sc.Costs = costs
	sc.CallDuration = workload.Dist{Kind: workload.Uniform, A: max(w/60, 1), B: max(w/6, 1)}
}

// Model: each rule's limiter bounds the windows of its own unit. The
// decision and the send are one step of the caller (the runtime's op
// costs fall between steps) and the audit's scenarios give the Redis
// script no round trip, so no send slack widens the windows; a settlement reaches the
// limiter after the provider applied it (the caller wakes late, or after
// a send at the same instant), so settleBound.lag holds.
func (s *settleDesign) Model(cfg catalog.LibConfig, opt *Options) analysis {
	calls := logPieces(s, cfg, opt.Rules, "")
	if len(calls) == 0 && s.name == postCallName {
		return analysis{why: noCallRule}
	}
	a := analysis{curves: make([]curve, len(opt.Rules))}
	for i, r := range opt.Rules {
		n, per := int64(limiterAt(s, cfg, i, r).Limit), r.Window+cfg.Margin
		if r.Unit == "" {
			a.curves[i] = func(t time.Duration) int64 { return logWorst(n, per, t) }
			continue
		}
		e := maxCost(opt.Rules, r.Unit)
		a.curves[i] = func(t time.Duration) int64 {
			kc, _ := logsWorst(calls, t)
			return s.worst(settleBound{n: n, per: per, t: t, calls: kc, e: e, a: (e + 1) / 2, lag: true})
		}
	}
	return a
}

// settleBound is what decides the analytic worst case of a cost rule's
// window of t under a design of reserved costs.
type settleBound struct {
	n   int64         // the rule's limit as its limiter keeps it, per per
	per time.Duration // the limiter's window (the rule's plus the margin)
	t   time.Duration // the window judged
	// calls is the most calls the call rules admit in a window of t
	// (logsWorst), Unbounded without a call rule.
	calls int64
	e, a  int64 // the largest estimate and the largest actual cost
	// lag: the limiter may learn a settlement after the provider applied
	// it; over: a call's actual cost may exceed its estimate.
	lag, over bool
}

// postCallWorst is the most units the post-call limiter (package
// postcall) lets the provider count in one window of t ≤ per of a cost
// rule.
//
// Proof. Take a send s and its window (s−t, s]. The provider counts each
// earlier send j of the window at E_j while it is unsettled at s, at A_j
// once settled, and s at E_s ≤ E. The limiter admitted s when the actual
// costs it had charged, each at the instant it learnt it, in (s−per, s],
// were at most N − 1 (room for one more unit). Sort the other sends of
// the window:
//   - settled at s and charged before s's decision: their settlements lie
//     in (s−t, s] ⊆ (s−per, s], so their actual costs sum to at most
//     N − 1, and each is at most A;
//   - unsettled at s: E each at most;
//   - settled at the provider but not yet charged (lag): A each at most.
//
// At most calls − 1 other sends lie in the window (the call rules). With
// lag the load is at most E + (calls − 1)·max(E, A); without it, at most
// the largest min(N − 1, m·A) + (calls − m)·E over m ≤ calls − 1 settled
// sends. When no actual cost exceeds its estimate (not over), A counts as
// at most E and both read calls·E: N does not enter. Each is reached
// (TestSettleWorstBruteForce): calls sends of estimate E at one instant,
// held in flight past the window's end, put calls·E in it, as the limiter
// charges none of them; with A > E, calls − 1 sends of actual A settle
// first and one more goes: with lag, before the limiter learns of them;
// without, m of them charged min(N − 1, m·A), leaving room for one unit.
// Without a call rule it is unbounded.
func postCallWorst(b settleBound) int64 {
	if b.calls == Unbounded {
		return Unbounded
	}
	if b.calls <= 0 {
		return 0
	}
	a := b.a
	if !b.over {
		a = min(a, b.e)
	}
	if b.lag || a <= b.e {
		return satAdd(b.e, mulClamp(b.calls-1, max(b.e, a)))
	}
	// Each settled send adds A − E until N − 1 is charged: the best m is
	// the last whole one under the cap or the one that reaches it.
	best := int64(0)
	for _, m := range []int64{min(b.calls-1, (b.n-1)/a), min(b.calls-1, (b.n-1)/a+1)} {
		best = max(best, satAdd(min(b.n-1, mulClamp(m, a)), mulClamp(b.calls-m, b.e)))
	}
	return best
}

// reserveWorst is the most units the reserve limiters (strategies.Reserver
// over combined, and the Redis script's reservation) let the provider count in one window of t of a cost
// rule.
//
// Proof. The limiter admits s only when the costs it holds in (s−per, s]
// plus E_s are at most N, each send held at E until the limiter learns its
// settlement and at its actual cost from then on; the provider counts E
// until its own settlement and the actual cost from then on. When no
// actual cost exceeds its estimate (not over), the limiter's figure for
// each send is at least the provider's, whether it learns later (lag) or
// at the same instant: the provider's load at s is at most N for t ≤ per;
// for longer windows, ⌈t/per⌉ pieces of per, each bounded at its last
// send (costs only fall after it), give N·⌈t/per⌉. The window holds at
// most calls sends of E each too (of max(E, A) but s when over, the
// settled ones counted at their actual cost by both). When over and with lag, a settlement
// the limiter has not learnt adds A_j − E_j ≤ A − 1 to the provider's
// count: with k such sends (each held at E_j ≥ 1 by the limiter) the load
// is at most k·A + min(N − k, (calls − 1 − k)·max(E, A) + E), the rest of
// the limiter's N filled by the other sends; over the k ≤ min(calls, N) −
// 1 this is the bound, on t ≤ per. Over with no lag, the two figures are
// equal at every decision and N stands. Each is reached
// (TestSettleWorstBruteForce): estimates summing to min(N, calls·E) at one
// instant (over, sends settled to A > E before the last); with lag, k sends of estimate 1 and actual A settle at
// the provider, unknown to the limiter, before the others fill its N.
func reserveWorst(b settleBound) int64 {
	if b.calls == 0 {
		return 0
	}
	pieces := ceilDiv(int64(b.t), int64(b.per))
	if !b.over || !b.lag {
		if b.over && pieces > 1 {
			return Unbounded // costs rise after a piece's last send
		}
		n := mulClamp(b.n, pieces)
		if b.calls != Unbounded {
			// A settled send counts its actual cost at the limiter too.
			a := b.e
			if b.over {
				a = max(a, b.a)
			}
			n = min(n, satAdd(b.e, mulClamp(b.calls-1, a)))
		}
		return n
	}
	if pieces > 1 {
		return Unbounded
	}
	kmax := b.n - 1
	if b.calls != Unbounded {
		kmax = min(kmax, b.calls-1)
	}
	load := func(k int64) int64 {
		rest := b.n - k
		if b.calls != Unbounded {
			rest = min(rest, satAdd(mulClamp(b.calls-1-k, max(b.e, b.a)), b.e))
		}
		return satAdd(mulClamp(k, b.a), rest)
	}
	// The least of two lines in k: its largest is at an end or where
	// they cross.
	best := max(load(0), load(kmax))
	if m := max(b.e, b.a); m > 1 && b.calls != Unbounded {
		x := satAdd(mulClamp(b.calls-1, m), b.e) - b.n // the lines cross at k = x/(m−1)
		for _, k := range []int64{x / (m - 1), x/(m-1) + 1} {
			if k > 0 && k < kmax {
				best = max(best, load(k))
			}
		}
	}
	return best
}

// settleCrowdName names settleCrowd's workload.
const settleCrowdName = "settle-crowd"

// Saturation is the crowd that drives the design to its analytic worst
// case on every cost rule: as many callers at one instant as the worst
// case needs (the call rules' most for post-call, ⌈N/E⌉ + 1 for reserve),
// each estimating E, the workloads' largest cost, settling to ⌈E/2⌉ after
// a call as long as the longest window: no call is settled within a
// window, so post-call charges none of them. It ends one window after it
// starts for post-call; reserve's waiting callers take a window each per
// N of estimates.
func (s *settleDesign) Saturation(cfg catalog.LibConfig, opt *Options) []Workload {
	bs := boundsOf(s, cfg, opt)
	var w time.Duration
	calls := int64(0)
	for k, r := range opt.Rules {
		w = max(w, r.Window)
		if r.Unit == "" || bs[k].Worst == Unbounded {
			continue
		}
		calls = max(calls, ceilDiv(bs[k].Worst, maxCost(opt.Rules, r.Unit))+1)
	}
	if kc, _ := logsWorst(logPieces(s, cfg, opt.Rules, ""), w); kc != Unbounded {
		calls = min(calls, kc)
	}
	calls = min(calls, maxSaturation)
	if calls < 1 {
		return nil
	}
	var costs, actual []workload.UnitCost
	for _, u := range rule.Units(opt.Rules) {
		e := time.Duration(maxCost(opt.Rules, u))
		costs = append(costs, workload.UnitCost{Unit: u, Dist: workload.Dist{Kind: workload.Fixed, A: e}})
		actual = append(actual, workload.UnitCost{Unit: u, Dist: workload.Dist{Kind: workload.Fixed, A: (e + 1) / 2}})
	}
	return []Workload{{
		Name:         settleCrowdName,
		Doc:          fmt.Sprintf("%d callers at once, each estimating the largest cost, settled to half of it after %v", calls, w),
		Arrivals:     workload.Arrivals{Kind: workload.Replay, Times: make([]int64, calls)},
		Costs:        costs,
		Actual:       actual,
		CallDuration: workload.Dist{Kind: workload.Fixed, A: w},
	}}
}
