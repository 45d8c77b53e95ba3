package strategies

import (
	"context"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
)

// Gated holds a concurrency slot for the whole call and, once it has one,
// waits for every rate rule as Combined does. Taking the slot first means
// rate capacity is only spent by callers that can send at once. It is safe
// for concurrent use on its runtime.
type Gated struct {
	slots clock.Semaphore
	rates *Combined
}

// NewGated returns a gated limiter: maxInFlight slots, then combined rates.
func NewGated(rt clock.Runtime, maxInFlight int, rules ...rule.Rule) *Gated {
	return &Gated{slots: rt.NewSemaphore(maxInFlight), rates: NewCombined(rt, rules...)}
}

// Acquire takes a slot, then waits for the rates; on failure it gives the
// slot back and has recorded nothing.
func (g *Gated) Acquire(ctx context.Context) error { return g.AcquireCost(ctx, nil) }

// AcquireCost is Acquire for a call of costs (see CostLimiter); a call no
// wait can admit fails before it takes a slot.
func (g *Gated) AcquireCost(ctx context.Context, costs []int64) error {
	if err := g.rates.charges.check(costs); err != nil {
		return err
	}
	if err := g.slots.Acquire(ctx); err != nil {
		return err
	}
	if err := g.rates.AcquireCost(ctx, costs); err != nil {
		g.slots.Release()
		return err
	}
	return nil
}

// Release frees the call's slot.
func (g *Gated) Release() { g.slots.Release() }

// Reserve takes a slot, then waits for the rates to admit the estimates
// (see Reserver); the reservation's settlement frees the slot, in place
// of Release. On failure it gives the slot back and has recorded nothing.
func (g *Gated) Reserve(ctx context.Context, estimates []int64) (*Reservation, error) {
	if err := g.rates.charges.check(estimates); err != nil {
		return nil, err
	}
	if err := g.slots.Acquire(ctx); err != nil {
		return nil, err
	}
	res, err := g.rates.reserve(ctx, slotted{g.slots, g.rates}, estimates)
	if err != nil {
		g.slots.Release()
		return nil, err
	}
	return res, nil
}

// slotted settles a gated call's rates, then frees its slot.
type slotted struct {
	slots clock.Semaphore
	rates *Combined
}

func (s slotted) units() int { return s.rates.units() }

func (s slotted) settle(r *Reservation, actual []int64) error {
	if err := s.rates.settle(r, actual); err != nil {
		return err
	}
	s.slots.Release()
	return nil
}

// OnAdmit is Combined.OnAdmit for the rate stage.
func (g *Gated) OnAdmit(f func(at int64)) { g.rates.OnAdmit(f) }

// Stats returns the rate stage's figures.
func (g *Gated) Stats() Stats { return g.rates.Stats() }

// GatedRatesFirst is Gated in the wrong order: rates first, then the slot.
// A caller admitted by the rates may then wait for a slot, so its recorded
// instant precedes its send, and a caller that gives up waiting for a slot
// has spent rate capacity with no send. It exists to be measured.
type GatedRatesFirst struct {
	slots clock.Semaphore
	rates *Combined
}

// NewGatedRatesFirst returns the rates-then-slot limiter.
func NewGatedRatesFirst(rt clock.Runtime, maxInFlight int, rules ...rule.Rule) *GatedRatesFirst {
	return &GatedRatesFirst{slots: rt.NewSemaphore(maxInFlight), rates: NewCombined(rt, rules...)}
}

// Acquire waits for the rates, then for a slot.
func (g *GatedRatesFirst) Acquire(ctx context.Context) error { return g.AcquireCost(ctx, nil) }

// AcquireCost is Acquire for a call of costs (see CostLimiter).
func (g *GatedRatesFirst) AcquireCost(ctx context.Context, costs []int64) error {
	if err := g.rates.AcquireCost(ctx, costs); err != nil {
		return err
	}
	return g.slots.Acquire(ctx)
}

// Release frees the call's slot.
func (g *GatedRatesFirst) Release() { g.slots.Release() }

// Reserve waits for the rates to admit the estimates, then for a slot
// (see Reserver); the settlement frees the slot. A caller that gives up
// waiting for the slot has spent its estimates, which stand.
func (g *GatedRatesFirst) Reserve(ctx context.Context, estimates []int64) (*Reservation, error) {
	res, err := g.rates.reserve(ctx, slotted{g.slots, g.rates}, estimates)
	if err != nil {
		return nil, err
	}
	if err := g.slots.Acquire(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

// OnAdmit is Combined.OnAdmit for the rate stage.
func (g *GatedRatesFirst) OnAdmit(f func(at int64)) { g.rates.OnAdmit(f) }

// Stats returns the rate stage's figures.
func (g *GatedRatesFirst) Stats() Stats { return g.rates.Stats() }
