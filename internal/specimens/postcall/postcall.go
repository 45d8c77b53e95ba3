package postcall

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// Limiter admits a call while each rule has room for one more unit, counts
// the call itself in call rules at once, and records its actual costs in
// cost rules at the settlement's instant, whatever the windows then hold:
// a gateway's pre-call check and post-call charge. It is safe for
// concurrent use on its runtime.
type Limiter struct {
	rt    clock.Runtime
	mu    clock.Mutex // the admission queue, held while sleeping
	bk    sync.Mutex  // the books, held for one check or record, never across a park
	books []strategies.CostBook
	unit  []int // per rule: its unit's index in a call's costs, -1 for a call rule
	units int
}

// New returns a post-call limiter over rules, kept as strategies.NewCombined
// keeps them: exact sliding logs up to strategies.ExactInMemoryUpTo.
func New(rt clock.Runtime, rules ...rule.Rule) *Limiter {
	units := rule.Units(rules)
	l := &Limiter{rt: rt, mu: rt.NewMutex(), units: len(units)}
	for _, r := range rules {
		var b strategies.CostBook = strategies.NewSlidingLog(r)
		if r.Kind != rule.Sliding || r.Buckets > 0 || r.Buckets == 0 && r.Limit > strategies.ExactInMemoryUpTo {
			b = strategies.NewBook(r).(strategies.CostBook)
		}
		l.books = append(l.books, b)
		l.unit = append(l.unit, slices.Index(units, r.Unit))
	}
	return l
}

// Acquire admits a call and charges it nothing in cost rules: a call
// without a settlement costs nothing there.
func (l *Limiter) Acquire(ctx context.Context) error {
	_, err := l.Reserve(ctx, nil)
	return err
}

// AcquireCost is Acquire; costs known up front are charged at once.
func (l *Limiter) AcquireCost(ctx context.Context, costs []int64) error {
	r, err := l.Reserve(ctx, costs)
	if err != nil {
		return err
	}
	return r.Settle(nil)
}

// Reserve waits until every rule has room for one more unit, counts the
// call in the call rules, and returns a reservation whose settlement
// records the actual costs (nil: the estimates) at its own instant.
func (l *Limiter) Reserve(ctx context.Context, estimates []int64) (*strategies.Reservation, error) {
	if estimates != nil && len(estimates) != l.units {
		return nil, &strategies.CostError{Msg: fmt.Sprintf("%d costs for %d units", len(estimates), l.units)}
	}
	if estimates == nil {
		estimates = make([]int64, l.units)
	}
	if err := l.mu.Lock(ctx); err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	for {
		wait, now := l.tryAdmit()
		if wait <= 0 {
			return strategies.NewReservation(now, estimates, l.charge), nil
		}
		if err := strategies.Within(ctx, l.rt, wait); err != nil {
			return nil, err
		}
		if err := l.rt.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// tryAdmit counts the call in the call rules when every rule has room
// now, and otherwise returns the longest wait.
func (l *Limiter) tryAdmit() (time.Duration, int64) {
	l.bk.Lock()
	defer l.bk.Unlock()
	now := l.rt.Now()
	var wait time.Duration
	for _, b := range l.books {
		wait = max(wait, b.WaitTimeCost(now, 1))
	}
	if wait > 0 {
		return wait, now
	}
	for i, b := range l.books {
		if l.unit[i] < 0 {
			b.RecordCost(now, 1)
		}
	}
	return 0, now
}

// charge records actual in the cost rules at now, without waiting: the
// call has been made.
func (l *Limiter) charge(actual []int64) error {
	l.bk.Lock()
	defer l.bk.Unlock()
	now := l.rt.Now()
	for i, b := range l.books {
		if u := l.unit[i]; u >= 0 {
			b.RecordCost(now, actual[u])
		}
	}
	return nil
}

// Release does nothing: the limiter caps no concurrency.
func (l *Limiter) Release() {}

var _ strategies.Reserver = (*Limiter)(nil)
