package strategies

import (
	"context"
	"time"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
)

// Sequential is the tempting but wrong composition: one sliding log per
// rule, acquired in turn, each recording the call as soon as it admits it,
// before the later rules have. Those early records expire early and let
// extra calls through, and a caller cancelled between two rules leaves
// records with no send. It exists to be measured. It is safe for concurrent
// use on its runtime.
type Sequential struct {
	rt      clock.Runtime
	guard   clock.Mutex // makes each check-and-record atomic, never held while sleeping
	books   []Book
	charges charges
	stats   *StatsKeeper
}

// NewSequential returns a sequential limiter over rules, in the given
// order: a sliding log per sliding rule, the exact book of the others.
func NewSequential(rt clock.Runtime, rules ...rule.Rule) *Sequential {
	books := make([]Book, len(rules))
	for i, r := range rules {
		if r.Kind != rule.Sliding {
			books[i] = NewBook(r)
			continue
		}
		books[i] = NewSlidingLog(r)
	}
	return &Sequential{rt: rt, guard: rt.NewMutex(), books: books, charges: newCharges(rules), stats: NewStatsKeeper(len(rules))}
}

// Acquire passes each rule in turn, recording in each as it admits.
func (s *Sequential) Acquire(ctx context.Context) error { return s.AcquireCost(ctx, nil) }

// AcquireCost passes each rule in turn with the call's cost in its unit
// (see CostLimiter), recording in each as it admits, as clients chain a
// requests limiter and a tokens limiter.
func (s *Sequential) AcquireCost(ctx context.Context, costs []int64) error {
	if err := s.charges.check(costs); err != nil {
		return err
	}
	return s.pass(ctx, costs, nil)
}

// Reserve passes each rule in turn with the call's estimates, recording
// them in each as it admits (see Reserver): the reservation has no single
// instant (At is the last rule's), and a caller cancelled between two
// rules leaves its estimates in the earlier ones, for good. Its
// settlement corrects every rule at once.
func (s *Sequential) Reserve(ctx context.Context, estimates []int64) (*Reservation, error) {
	res, err := newReservation(s, &s.charges, len(s.books), estimates)
	if err != nil {
		return nil, err
	}
	if err := s.pass(ctx, res.est, res); err != nil {
		return nil, err
	}
	return res, nil
}

// pass takes the rules in turn; res, when set, takes each rule's mark.
func (s *Sequential) pass(ctx context.Context, costs []int64, res *Reservation) error {
	for i, b := range s.books {
		c := s.charges.cost(i, costs)
		for {
			if err := s.guard.Lock(ctx); err != nil {
				return err
			}
			now := s.rt.Now()
			wait := waitCost(b, now, c)
			if wait <= 0 {
				if res != nil {
					res.marks[i], res.at = reserveBook(b, now, c), now
				} else {
					recordCost(b, now, c)
				}
				s.stats.Record(i, 1)
			}
			s.guard.Unlock()
			if wait <= 0 {
				break
			}
			if err := Within(ctx, s.rt, wait); err != nil {
				return err
			}
			s.stats.Bound(i, now)
			err := s.rt.Sleep(ctx, wait)
			s.stats.Wait(i, time.Duration(s.rt.Now()-now))
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Sequential) units() int { return s.charges.units }

func (s *Sequential) settle(r *Reservation, actual []int64) error {
	return settleUnder(s.guard, s.rt, s.books, &s.charges, r, actual)
}

// Release does nothing: Sequential caps rates, not concurrency.
func (s *Sequential) Release() {}

// Stats returns the limiter's figures so far.
func (s *Sequential) Stats() Stats { return s.stats.Stats() }
