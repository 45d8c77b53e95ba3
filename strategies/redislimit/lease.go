package redislimit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rlcheck/rlcheck/strategies"
)

// Leases: a call that takes one is recorded in the windows and, in the
// same script run, in the key's lease set, scored with the end of its
// lease; Settle or Release removes it. The lease set is the fleet's
// calls in flight (Options.MaxInFlight caps them) and the reservations
// still open to a settlement (admit.lua, "Leases and settlements").

// DefaultLeaseTime is Options.LeaseTime when it is 0: long enough for a
// slow model's answer.
const DefaultLeaseTime = 10 * time.Minute

// DefaultLeasePoll is Options.LeasePoll when it is 0.
const DefaultLeasePoll = 10 * time.Millisecond

var _ strategies.Reserver = (*Limiter)(nil)

// checkLeaseOptions refuses a negative cap, lease or poll, and a lease
// beyond the script's exact integers.
func checkLeaseOptions(opts Options) error {
	switch {
	case opts.MaxInFlight < 0:
		return fmt.Errorf("redislimit: MaxInFlight %d is negative", opts.MaxInFlight)
	case opts.LeaseTime < 0 || opts.LeaseTime > 100*365*24*time.Hour:
		return fmt.Errorf("redislimit: LeaseTime %v is negative or longer than a century", opts.LeaseTime)
	case opts.LeasePoll < 0:
		return fmt.Errorf("redislimit: LeasePoll %v is negative", opts.LeasePoll)
	}
	return nil
}

// leaseArg returns what follows 'L' and the sweep flag in ARGV[2] of a
// call that takes a lease: the cap, the lease and the poll, in µs.
func leaseArg(opts Options) string {
	return fmt.Sprintf(",%d,%d,%d", opts.MaxInFlight, ceilMicros(cmp.Or(opts.LeaseTime, DefaultLeaseTime)),
		max(ceilMicros(cmp.Or(opts.LeasePoll, DefaultLeasePoll)), 1))
}

// Reserve waits until every rule admits a call of the estimated costs
// (in the units of AcquireCost; nil for a limiter without cost rules) and
// the in-flight cap a lease, then records the estimates and the lease in
// one script run. Settle the reservation with the call's actual costs
// when its answer reports them, or with nil when it has none: one script
// run that corrects every rule and frees the lease, and changes nothing
// when run again. A reservation never settled keeps its estimates for
// good, and its lease frees its place under the cap after
// Options.LeaseTime; a settlement after that changes nothing. The
// reservation's Settle bounds its run by Options.CallTimeout.
func (l *Limiter) Reserve(ctx context.Context, estimates []int64) (*strategies.Reservation, error) {
	if estimates == nil {
		estimates = l.ones
	}
	if err := l.checkCosts(estimates); err != nil {
		return nil, err
	}
	a, err := l.acquire(ctx, estimates, true)
	if err != nil {
		return nil, err
	}
	return strategies.NewReservation(a.at, a.costs, func(actual []int64) error {
		ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(l.callTimeout, DefaultCallTimeout))
		defer cancel()
		return l.settle(ctx, a, actual)
	}), nil
}

// Release frees the lease of a call recorded under an in-flight cap
// (Options.MaxInFlight), the oldest this limiter holds: leases are alike.
// Without a cap it does nothing. A lease Redis fails to free ends at its
// lease time.
func (l *Limiter) Release() {
	l.held.Lock()
	if len(l.leased) == 0 {
		l.held.Unlock()
		return
	}
	a := l.leased[0]
	l.leased = l.leased[1:]
	l.held.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(l.callTimeout, DefaultCallTimeout))
	defer cancel()
	_ = l.settle(ctx, a, a.costs)
}

// settle runs the settlement of a with actual costs.
func (l *Limiter) settle(ctx context.Context, a recorded, actual []int64) error {
	_, err := l.settleRun(ctx, a, actual)
	return err
}

// settleRun runs the settlement of a with actual costs and reports
// whether it took effect: true when it freed a live lease and corrected
// the rules, false when the lease was already gone (settled before, or
// ended).
func (l *Limiter) settleRun(ctx context.Context, a recorded, actual []int64) (bool, error) {
	args, _ := l.scriptArgs(a.member, false, l.rt.Now())
	settled := a.member
	if len(l.units) > 0 {
		settled, _ = l.costArgs(a.id, actual)
	}
	args[1] = "S" + strconv.FormatInt(a.check, 10) + "," + strconv.FormatInt(a.at/1000, 10) + " " + settled
	for i := range l.rules {
		d := int64(0)
		if u := l.unitOf[i]; u > 0 {
			d = actual[u-1] - a.costs[u-1]
		}
		args = append(args, strconv.FormatInt(d, 10), strconv.Itoa(l.unitOf[i]))
	}
	l.runs.Add(1)
	res, err := l.run(ctx, l.leasedKeys, args)
	if err != nil {
		return false, l.scriptError(ctx, err)
	}
	ints := replyInts(res)
	if len(ints) != 1 && (len(ints) != 2 || ints[0] != 1) {
		return false, errors.New("redislimit: unexpected settlement reply")
	}
	if ints[0] == 1 && l.settledAt != nil {
		l.settledAt(a.member, ints[1]*1000)
	}
	return ints[0] == 1, nil
}
