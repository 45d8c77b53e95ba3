package strategies

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/rlcheck/rlcheck/clock"
)

// Reserver is a CostLimiter that admits a call at an estimate of its
// costs and settles it later to the actual costs, as a provider that
// meters tokens does (docs/semantics.md, "Reserved costs").
//
// Reserve waits, as AcquireCost does, until every rule admits the
// estimates, and records them in every rule at one instant: one decision.
// The call is then sent at once; when its answer reports the usage, the
// caller settles the Reservation, which corrects every rule in one step.
// AcquireCost is a reservation settled at once to its estimates.
type Reserver interface {
	CostLimiter
	Reserve(ctx context.Context, estimates []int64) (*Reservation, error)
}

// settler is the limiter side of a Reservation.
type settler interface {
	settle(r *Reservation, actual []int64) error
	units() int
}

// funcSettler settles a reservation of a limiter outside this package.
type funcSettler struct {
	n int
	f func(actual []int64) error
}

func (s funcSettler) settle(_ *Reservation, actual []int64) error { return s.f(actual) }
func (s funcSettler) units() int                                  { return s.n }

// NewReservation returns a reservation admitted at at for estimates, for a
// limiter outside this package: Settle checks the actual costs, then calls
// settle with them until one call succeeds; a failed call leaves the
// reservation unsettled, for a retry.
func NewReservation(at int64, estimates []int64, settle func(actual []int64) error) *Reservation {
	est := append([]int64(nil), estimates...)
	return &Reservation{lim: funcSettler{n: len(est), f: settle}, at: at, est: est}
}

// Reservation is a call admitted at its estimated costs, to be settled to
// its actual ones. Each rule that meters a unit is charged the estimate
// from the admission and the actual cost from the settlement on; call
// rules count the call once whatever its costs. A limiter keeps what a
// settlement needs while the call lies in a window it could change, so a
// settlement after the call has left every window changes nothing, and a
// reservation never settled stands at its estimates for good: it holds
// no memory beyond the Reservation itself. A limiter with a concurrency
// cap holds the call's slot until the settlement: a reservation is settled
// in place of Release. It is safe for concurrent use.
type Reservation struct {
	lim   settler
	at    int64
	est   []int64
	marks []int64 // per rule of the limiter, what its book needs to find the call
	done  atomic.Bool
}

// At returns the admission instant, in nanoseconds of the limiter's
// runtime.
func (r *Reservation) At() int64 { return r.at }

// Estimates returns the costs the call was admitted at.
func (r *Reservation) Estimates() []int64 { return append([]int64(nil), r.est...) }

// Settled reports whether Settle has taken effect.
func (r *Reservation) Settled() bool { return r.done.Load() }

// Settle replaces the call's estimates with its actual costs, in every
// rule at once, at the limiter's now; any actual cost of 0 or more is
// taken, above the estimate or a rule's limit too (the provider charges
// it); nil settles to the estimates. Settling again changes nothing and
// returns nil: a retry is safe. Actual costs of the wrong number or
// negative are refused with a *CostError, and the reservation is left
// unsettled, as it is when the limiter fails to settle (Redis down).
func (r *Reservation) Settle(actual []int64) error {
	if actual == nil {
		actual = r.est
	}
	if len(actual) != r.lim.units() {
		return &CostError{Msg: fmt.Sprintf("%d actual costs for %d units", len(actual), r.lim.units())}
	}
	for _, c := range actual {
		if c < 0 {
			return &CostError{Cost: c, Msg: fmt.Sprintf("a negative actual cost (%d)", c)}
		}
	}
	if !r.done.CompareAndSwap(false, true) {
		return nil
	}
	if err := r.lim.settle(r, actual); err != nil {
		r.done.Store(false)
		return err
	}
	return nil
}

// settleBooks corrects each book's record of r from its estimates to
// actual at now; call rules and costs that did not change are left alone.
func settleBooks(books []Book, ch *charges, r *Reservation, actual []int64, now int64) {
	for i, b := range books {
		if i >= len(ch.idx) || ch.idx[i] < 0 {
			continue
		}
		e, a := r.est[ch.idx[i]], actual[ch.idx[i]]
		if e != a {
			b.(SettleBook).SettleCost(now, r.marks[i], e, a)
		}
	}
}

// settleUnder settles r in books under mu, at rt's now: the lock is the
// books' own, never held while sleeping, so the settlement takes effect
// at once.
func settleUnder(mu clock.Mutex, rt clock.Runtime, books []Book, ch *charges, r *Reservation, actual []int64) error {
	if err := mu.Lock(context.Background()); err != nil {
		return err
	}
	defer mu.Unlock()
	settleBooks(books, ch, r, actual, rt.Now())
	return nil
}

// reserveBook records a call of cost c at now in b and returns its mark.
func reserveBook(b Book, now, c int64) int64 {
	if sb, ok := b.(SettleBook); ok {
		return sb.ReserveCost(now, c)
	}
	recordCost(b, now, c)
	return 0
}

// newReservation checks estimates (nil: 1 in every unit) as AcquireCost
// does and returns an unsettled reservation of them.
func newReservation(lim settler, ch *charges, nbooks int, estimates []int64) (*Reservation, error) {
	if err := ch.check(estimates); err != nil {
		return nil, err
	}
	est := make([]int64, ch.units)
	for u := range est {
		est[u] = 1
	}
	if estimates != nil {
		copy(est, estimates)
	}
	return &Reservation{lim: lim, est: est, marks: make([]int64, nbooks)}, nil
}

var (
	_ Reserver = (*Combined)(nil)
	_ Reserver = (*Gated)(nil)
	_ Reserver = (*GatedRatesFirst)(nil)
	_ Reserver = (*Sequential)(nil)
)
