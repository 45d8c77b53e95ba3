package libs

import (
	"context"
	"time"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// Try asks rule i's limiter for one call at now: ok when it admitted the
// call, else how long it says to wait before asking again.
type Try func(ctx context.Context, i int, now int64) (ok bool, wait time.Duration, err error)

// minRetry is the shortest sleep between two refused tries, so a limiter
// that says "wait 0" while refusing cannot spin the virtual clock.
const minRetry = time.Microsecond

// Chain is the loop users write around a limiter that refuses instead of
// waiting: for each rule in turn, ask; when refused, sleep the wait it
// names and ask again. Admissions on earlier rules stay spent when a later
// one makes the caller give up. It is safe for concurrent use when try is.
type Chain struct {
	rt    clock.Runtime
	n     int
	all   bool // one step checks and records every rule
	try   Try
	stats *strategies.StatsKeeper
	// With costs (NewCostChain): the rules, each limiter's burst in its
	// unit, and the try that takes a call's charge.
	rules []rule.Rule
	burst []int64
	tryN  TryN
	// order is the order the rules' limiters are asked in (nil: 0 .. n−1).
	order []int
}

// InOrder makes c ask the rules' limiters in order (Config.AskOrder) and
// returns it.
func (c *Chain) InOrder(order []int) *Chain {
	if !c.all && len(order) == c.n {
		c.order = order
	}
	return c
}

// TryN is Try for a call charged n in rule i's unit (1 for a call rule).
type TryN func(ctx context.Context, i int, now int64, n int64) (ok bool, wait time.Duration, err error)

// NewCostChain returns the loop over rules' limiters for a library that
// takes a quantity (redis_rate's AllowN, throttled's RateLimit): each
// limiter is asked through try with the call's cost in its rule's unit.
// burst[i] is the most rule i's limiter admits at once: a larger cost is
// refused at once (Charges).
func NewCostChain(rt clock.Runtime, rules []rule.Rule, burst []int64, try TryN) *Chain {
	c := NewChain(rt, len(rules), func(ctx context.Context, i int, now int64) (bool, time.Duration, error) {
		return try(ctx, i, now, 1)
	})
	c.rules, c.burst, c.tryN = rules, burst, try
	return c
}

// AcquireCost is Acquire for a call of costs, one per unit the rules
// meter (strategies.CostLimiter), for a chain built by NewCostChain.
func (c *Chain) AcquireCost(ctx context.Context, costs []int64) error {
	if c.tryN == nil {
		return &strategies.CostError{Msg: "this limiter meters calls only"}
	}
	n, err := Charges(c.rules, costs, func(i int) int64 { return c.burst[i] })
	if err != nil {
		return err
	}
	return c.acquire(ctx, func(ctx context.Context, i int, now int64) (bool, time.Duration, error) {
		return c.tryN(ctx, i, now, n[i])
	})
}

// NewChain returns the loop over n rules' limiters, asked through try.
func NewChain(rt clock.Runtime, n int, try Try) *Chain {
	return &Chain{rt: rt, n: n, try: try, stats: strategies.NewStatsKeeper(n)}
}

// NewAtomic returns the loop around one step that checks and records all n
// rules at once (try is called with i = 0).
func NewAtomic(rt clock.Runtime, n int, try Try) *Chain {
	return &Chain{rt: rt, n: 1, all: true, try: try, stats: strategies.NewStatsKeeper(n)}
}

// Acquire asks each rule's limiter in turn until it admits the call.
func (c *Chain) Acquire(ctx context.Context) error { return c.acquire(ctx, c.try) }

func (c *Chain) acquire(ctx context.Context, try Try) error {
	for k := range c.n {
		i := k
		if c.order != nil {
			i = c.order[k]
		}
		start := c.rt.Now()
		for {
			ok, wait, err := try(ctx, i, c.rt.Now())
			if err != nil {
				return err
			}
			if ok {
				if c.all {
					c.stats.RecordAll()
				} else {
					c.stats.Record(i, 1)
				}
				break
			}
			err = c.rt.Sleep(ctx, max(wait, minRetry))
			c.stats.Bound(i, start)
			if err != nil {
				c.stats.Wait(i, time.Duration(c.rt.Now()-start))
				return err
			}
		}
		if d := time.Duration(c.rt.Now() - start); d > 0 {
			c.stats.Wait(i, d)
		}
	}
	return nil
}

// Release does nothing: rate limiters cap rates, not concurrency.
func (c *Chain) Release() {}

// Stats returns the figures so far; Records counts each rule's admissions.
func (c *Chain) Stats() strategies.Stats { return c.stats.Stats() }
