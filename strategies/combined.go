package strategies

import (
	"context"
	"sync"
	"time"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
)

// Books is the check-every-rule, record-once decision over a set of rules.
// It is pure: it takes now and owns no clock.
type Books []Book

// WaitTime returns the longest wait any rule asks for at now, and the index
// of that (binding) rule; ties go to the earlier rule. It returns (0, -1)
// when every rule admits the call.
func (b Books) WaitTime(now int64) (time.Duration, int) {
	var wait time.Duration
	bind := -1
	for i, bk := range b {
		if w := bk.WaitTime(now); w > wait {
			wait, bind = w, i
		}
	}
	return wait, bind
}

// Record records the same instant in every rule.
func (b Books) Record(now int64) {
	for _, bk := range b {
		bk.Record(now)
	}
}

// waitCost is WaitTime for a call charged ch.cost(i, costs) in rule i.
func (b Books) waitCost(now int64, ch *charges, costs []int64) (time.Duration, int) {
	var wait time.Duration
	bind := -1
	for i, bk := range b {
		if w := waitCost(bk, now, ch.cost(i, costs)); w > wait {
			wait, bind = w, i
		}
	}
	return wait, bind
}

// recordCost is Record for a call charged ch.cost(i, costs) in rule i;
// with a reservation, each book's mark goes to res.marks.
func (b Books) recordCost(now int64, ch *charges, costs []int64, res *Reservation) {
	for i, bk := range b {
		if res != nil {
			res.marks[i] = reserveBook(bk, now, ch.cost(i, costs))
			continue
		}
		recordCost(bk, now, ch.cost(i, costs))
	}
}

// Combined checks every rule, sleeps the longest wait, re-checks, and records
// the call in every rule at once, all under one FIFO lock so callers are
// admitted in arrival order. A cancelled caller records nothing. A
// settlement (Reserve) takes only the books' own lock, a sync.Mutex held
// for no park or sleep (so it costs the virtual clock no step), and takes
// effect at once. It is safe for concurrent use on
// its runtime.
type Combined struct {
	rt      clock.Runtime
	mu      clock.Mutex // the FIFO queue, held while sleeping
	bk      sync.Mutex  // the books, held for one check-and-record or settlement, never across a park
	books   Books
	charges charges
	stats   *StatsKeeper
	onAdmit func(at int64)
}

// ExactInMemoryUpTo is the largest limit NewCombined keeps as an exact
// sliding log when a rule leaves its bookkeeping open. A log holds up to
// Limit instants of 8 bytes, 512 KB at this limit; a larger one gets the
// default policy's rule.DefaultBuckets buckets. (In Redis an entry costs
// about 129 bytes, so the Redis limiter buckets from rule.ExactUpTo on.)
const ExactInMemoryUpTo = 1 << 16

// NewCombined returns a combined limiter over exact sliding logs, except
// for rules that ask for buckets (rule.Rule.Buckets > 0) and rules that
// leave it open with a limit above ExactInMemoryUpTo, which are bucketed
// by the default policy. Rules of the other kinds get their exact books
// (NewBook).
func NewCombined(rt clock.Runtime, rules ...rule.Rule) *Combined {
	books := make(Books, len(rules))
	for i, r := range rules {
		if r.Kind != rule.Sliding || r.Buckets > 0 || r.Buckets == 0 && r.Limit > ExactInMemoryUpTo {
			books[i] = NewBook(r)
			continue
		}
		books[i] = NewSlidingLog(r)
	}
	return newCombined(rt, books, rules)
}

// NewCombinedBounded returns a combined limiter that keeps each rule as it
// asks (rule.Rule.Keeping): exact sliding logs for small limits and
// bucketed windows for large ones unless a rule says otherwise. Its memory
// stays bounded whatever the limits, and it never overfills a window.
func NewCombinedBounded(rt clock.Runtime, rules ...rule.Rule) *Combined {
	books := make(Books, len(rules))
	for i, r := range rules {
		books[i] = NewBook(r)
	}
	return newCombined(rt, books, rules)
}

// NewCombinedCounter returns a combined limiter over sliding-window
// counters: constant memory per rule, at the price of approximate windows.
// The counters approximate sliding rules only: the other kinds get their
// exact books.
func NewCombinedCounter(rt clock.Runtime, rules ...rule.Rule) *Combined {
	books := make(Books, len(rules))
	for i, r := range rules {
		if r.Kind != rule.Sliding {
			books[i] = NewBook(r)
			continue
		}
		books[i] = NewWindowCounter(r)
	}
	return newCombined(rt, books, rules)
}

// newCombined returns a combined limiter over books, rule i kept in
// books[i] (rules nil: call rules only).
func newCombined(rt clock.Runtime, books Books, rules []rule.Rule) *Combined {
	return &Combined{rt: rt, mu: rt.NewMutex(), books: books, charges: newCharges(rules), stats: NewStatsKeeper(len(books))}
}

// OnAdmit sets a function called, under the limiter's lock and in admission
// order, with the instant each call is recorded; it lets tests and metrics
// see admissions without racing the caller. Set it before first use.
func (c *Combined) OnAdmit(f func(at int64)) { c.onAdmit = f }

// Acquire waits until every rule admits the call, then records it in all.
func (c *Combined) Acquire(ctx context.Context) error { return c.AcquireCost(ctx, nil) }

// AcquireCost waits until every rule admits the call's costs (see
// CostLimiter), then records them in all at one instant.
func (c *Combined) AcquireCost(ctx context.Context, costs []int64) error {
	if err := c.charges.check(costs); err != nil {
		return err
	}
	return c.admit(ctx, costs, nil)
}

// Reserve waits until every rule admits the call's estimates, then
// records them in all at one instant (see Reserver).
func (c *Combined) Reserve(ctx context.Context, estimates []int64) (*Reservation, error) {
	return c.reserve(ctx, c, estimates)
}

// reserve is Reserve for a reservation that owner settles.
func (c *Combined) reserve(ctx context.Context, owner settler, estimates []int64) (*Reservation, error) {
	res, err := newReservation(owner, &c.charges, len(c.books), estimates)
	if err != nil {
		return nil, err
	}
	if err := c.admit(ctx, res.est, res); err != nil {
		return nil, err
	}
	return res, nil
}

// admit is the queue's wait-and-record loop; res, when set, takes the
// admission's instant and marks.
func (c *Combined) admit(ctx context.Context, costs []int64, res *Reservation) error {
	if err := c.mu.Lock(ctx); err != nil {
		return err
	}
	defer c.mu.Unlock()
	for {
		wait, bind, now := c.tryAdmit(costs, res)
		if wait <= 0 {
			if c.onAdmit != nil {
				c.onAdmit(now)
			}
			return nil
		}
		if err := Within(ctx, c.rt, wait); err != nil {
			return err
		}
		c.stats.Bound(bind, now)
		err := c.rt.Sleep(ctx, wait)
		c.stats.Wait(bind, time.Duration(c.rt.Now()-now))
		if err != nil {
			return err
		}
	}
}

// tryAdmit records the call when every rule admits it now, and otherwise
// returns the longest wait and its rule.
func (c *Combined) tryAdmit(costs []int64, res *Reservation) (time.Duration, int, int64) {
	c.bk.Lock()
	defer c.bk.Unlock()
	now := c.rt.Now()
	wait, bind := c.books.waitCost(now, &c.charges, costs)
	if wait > 0 {
		return wait, bind, now
	}
	c.books.recordCost(now, &c.charges, costs, res)
	for i := range c.books {
		c.stats.Record(i, 1)
	}
	if res != nil {
		res.at = now
	}
	return 0, -1, now
}

func (c *Combined) units() int { return c.charges.units }

// settle corrects every book at once, under the books' lock alone.
func (c *Combined) settle(r *Reservation, actual []int64) error {
	c.bk.Lock()
	defer c.bk.Unlock()
	settleBooks(c.books, &c.charges, r, actual, c.rt.Now())
	return nil
}

// Release does nothing: Combined caps rates, not concurrency.
func (c *Combined) Release() {}

// Stats returns the limiter's figures so far.
func (c *Combined) Stats() Stats { return c.stats.Stats() }
