package strategies

import (
	"context"
	"fmt"
	"time"

	"github.com/rlcheck/rlcheck/clock"
)

// DeadlineError is a call refused at once, recording nothing, because the
// wait it needs ends after its context's deadline: sleeping first would
// only fail at the deadline, and hold the callers queued behind it until
// then (x/time/rate's Wait refuses the same way). It is
// context.DeadlineExceeded for errors.Is.
type DeadlineError struct {
	// Wait is the wait the call needed; Left the time its context had
	// before its deadline, on the limiter's clock.
	Wait, Left time.Duration
}

func (e *DeadlineError) Error() string {
	return fmt.Sprintf("strategies: the call needs a wait of %v and its context's deadline is %v away: %v",
		e.Wait, max(e.Left, 0), context.DeadlineExceeded)
}

// Unwrap makes a refusal match context.DeadlineExceeded, the error the
// caller would have had at its deadline.
func (e *DeadlineError) Unwrap() error { return context.DeadlineExceeded }

// Within returns nil when a wait ends by ctx's deadline on rt (or ctx has
// none), and otherwise a *DeadlineError, so that every limiter, Redis's
// too, refuses a hopeless wait before it sleeps.
func Within(ctx context.Context, rt clock.Runtime, wait time.Duration) error {
	if wait <= 0 {
		return nil
	}
	if left, ok := clock.Left(ctx, rt); ok && wait > left {
		return &DeadlineError{Wait: wait, Left: left}
	}
	return nil
}
