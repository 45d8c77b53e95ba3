package strategies

import (
	"context"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
)

// NewRealCombined returns a Combined limiter on the wall clock: the very
// code the simulator runs, driven by real timers and goroutines.
func NewRealCombined(rules ...rule.Rule) *Combined {
	return NewCombined(clock.NewReal(), rules...)
}

// NewRealGated returns a Gated limiter on the wall clock, with at most
// maxInFlight calls between Acquire and Release.
func NewRealGated(maxInFlight int, rules ...rule.Rule) *Gated {
	return NewGated(clock.NewReal(), maxInFlight, rules...)
}

// Do runs f once g admits it and holds the call's slot until f returns, so
// a slot can never leak on an early return or a panic. It returns ctx's
// error, without running f or spending capacity, when ctx ends first.
func (g *Gated) Do(ctx context.Context, f func() error) error {
	return Do(ctx, g, f)
}

// Do runs f once lim admits it and releases lim when f returns. A context
// that has already ended is refused before lim is asked, because Acquire
// may admit a call without looking at ctx when capacity is free.
func Do(ctx context.Context, lim Limiter, f func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := lim.Acquire(ctx); err != nil {
		return err
	}
	defer lim.Release()
	return f()
}
