package libs

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"golang.org/x/time/rate"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// NewRateLimiter returns the x/time/rate limiter users write for r:
// rate.NewLimiter(rate.Limit(N/(W+Margin)), cfg.BurstOf(r)).
func NewRateLimiter(r rule.Rule, cfg Config) *rate.Limiter {
	return newRateLimiter(cfg.RuleLimitAt(-1, r), r.Window+cfg.Margin)
}

func newRateLimiter(l RuleLimit, per time.Duration) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(float64(l.Limit)/per.Seconds()), l.Burst)
}

// newRateLimiters returns one limiter per rule, each with its own burst
// and rate when cfg.PerRule sets them.
func newRateLimiters(rules []rule.Rule, cfg Config) []*rate.Limiter {
	lims := make([]*rate.Limiter, len(rules))
	for i, r := range rules {
		lims[i] = newRateLimiter(cfg.RuleLimitAt(i, r), r.Window+cfg.Margin)
	}
	return lims
}

// XRateChained is one x/time/rate limiter per rule, waited on in turn, as
// in `for _, l := range limiters { l.Wait(ctx) }`. It drives each limiter
// through ReserveN and DelayFrom at the runtime's instants, and hands back
// the reservation it was waiting on when the wait is abandoned, as Wait
// does; tokens taken from the earlier limiters stay spent. It is safe for
// concurrent use on its runtime.
type XRateChained struct {
	rt    clock.Runtime
	rules []rule.Rule
	lims  []*rate.Limiter
	order []int
	stats *strategies.StatsKeeper
}

// NewXRateChained returns the chained x/time/rate limiter for rules, its
// limiters waited on in cfg.AskOrder.
func NewXRateChained(rt clock.Runtime, rules []rule.Rule, cfg Config) *XRateChained {
	return &XRateChained{rt: rt, rules: rules, lims: newRateLimiters(rules, cfg), order: cfg.AskOrder(len(rules)),
		stats: strategies.NewStatsKeeper(len(rules))}
}

// Acquire waits on each rule's limiter in turn.
func (x *XRateChained) Acquire(ctx context.Context) error { return x.AcquireCost(ctx, nil) }

// AcquireCost is the chain clients write for a metered API: Wait on the
// requests limiter, then WaitN(ctx, tokens) on the tokens limiter, each
// rule's limiter charged the call's cost in its unit (1 for a call rule;
// nil costs: 1 in every unit), in the order rule.Units names them.
// A cost above a limiter's burst is refused at once, as WaitN refuses it.
func (x *XRateChained) AcquireCost(ctx context.Context, costs []int64) error {
	n, err := Charges(x.rules, costs, func(i int) int64 { return int64(x.lims[i].Burst()) })
	if err != nil {
		return err
	}
	for _, i := range x.order {
		l := x.lims[i]
		now := x.rt.Now()
		r := l.ReserveN(timeAt(now), int(n[i]))
		x.stats.Record(i, 1)
		d := r.DelayFrom(timeAt(now))
		if d <= 0 {
			continue
		}
		err := x.rt.Sleep(ctx, d)
		x.stats.Bound(i, now)
		x.stats.Wait(i, time.Duration(x.rt.Now()-now))
		if err != nil {
			x.stats.Record(i, -cancel(l, r, x.rt.Now()))
			return err
		}
	}
	return nil
}

// Release does nothing: rate limiters cap rates, not concurrency.
func (x *XRateChained) Release() {}

// Stats returns the limiter's figures so far; Records counts the tokens
// each limiter kept (a cancelled reservation may not give its token back).
func (x *XRateChained) Stats() strategies.Stats { return x.stats.Stats() }

// XRateReserveAll reserves a token on every rule's limiter at the same
// instant, sleeps the longest delay, and cancels every reservation when the
// wait is abandoned, so a cancelled caller hands its tokens back. It is safe
// for concurrent use on its runtime.
type XRateReserveAll struct {
	rt    clock.Runtime
	lims  []*rate.Limiter
	stats *strategies.StatsKeeper
}

// NewXRateReserveAll returns the reserve-all x/time/rate limiter for rules.
func NewXRateReserveAll(rt clock.Runtime, rules []rule.Rule, cfg Config) *XRateReserveAll {
	return &XRateReserveAll{rt: rt, lims: newRateLimiters(rules, cfg), stats: strategies.NewStatsKeeper(len(rules))}
}

// Acquire reserves on every limiter, then sleeps the longest delay.
func (x *XRateReserveAll) Acquire(ctx context.Context) error {
	now := x.rt.Now()
	t := timeAt(now)
	res := make([]*rate.Reservation, len(x.lims))
	var wait time.Duration
	bind := -1
	for i, l := range x.lims {
		res[i] = l.ReserveN(t, 1)
		x.stats.Record(i, 1)
		if d := res[i].DelayFrom(t); d > wait {
			wait, bind = d, i
		}
	}
	if wait <= 0 {
		return nil
	}
	err := x.rt.Sleep(ctx, wait)
	x.stats.Bound(bind, now)
	x.stats.Wait(bind, time.Duration(x.rt.Now()-now))
	if err != nil {
		for i, r := range res {
			x.stats.Record(i, -cancel(x.lims[i], r, x.rt.Now()))
		}
	}
	return err
}

// Release does nothing: rate limiters cap rates, not concurrency.
func (x *XRateReserveAll) Release() {}

// Stats returns the limiter's figures so far; Records counts the tokens
// each limiter kept (a cancelled reservation may not give its token back).
func (x *XRateReserveAll) Stats() strategies.Stats { return x.stats.Stats() }

// cancel hands r back at now and returns the whole tokens l got back:
// CancelAt restores only what no later reservation has already counted on.
func cancel(l *rate.Limiter, r *rate.Reservation, now int64) int64 {
	at := timeAt(now)
	before := l.TokensAt(at)
	r.CancelAt(at)
	return int64(math.Round(l.TokensAt(at) - before))
}

// Charges returns what each rule's limiter is charged for a call of costs
// (one per unit, in the order rule.Units names them; nil: 1 in every
// unit): its cost in the rule's unit, 1 for a call rule. A cost above
// burst(i), which rule i's limiter never admits, is refused at once, as
// WaitN and AllowN refuse it, and so are malformed costs.
func Charges(rules []rule.Rule, costs []int64, burst func(i int) int64) ([]int64, error) {
	units := rule.Units(rules)
	if costs != nil && len(costs) != len(units) {
		return nil, &strategies.CostError{Msg: fmt.Sprintf("%d costs for %d units", len(costs), len(units))}
	}
	n := make([]int64, len(rules))
	for i, r := range rules {
		n[i] = 1
		if k := slices.Index(units, r.Unit); k >= 0 && costs != nil {
			if costs[k] < 0 {
				return nil, &strategies.CostError{Cost: costs[k], Msg: fmt.Sprintf("a negative cost (%d)", costs[k])}
			}
			n[i] = min(costs[k], math.MaxInt32)
		}
		if n[i] > burst(i) {
			return nil, &strategies.CostError{Rule: r, Cost: n[i]}
		}
	}
	return n, nil
}
