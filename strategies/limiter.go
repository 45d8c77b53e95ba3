package strategies

import (
	"context"
	"time"
)

// Limiter admits calls under a set of rules.
//
// Acquire waits until the call may be sent, or fails without admitting it
// when ctx ends first; a wait that would outlast ctx's deadline fails at
// once, with a *DeadlineError (context.DeadlineExceeded for errors.Is),
// rather than sleep until the deadline. After a nil error the caller sends at once and calls
// Release when the call has finished (strategies without a concurrency cap
// ignore Release). Implementations are safe for concurrent use on their
// runtime.
type Limiter interface {
	Acquire(ctx context.Context) error
	Release()
}

// Stats are the figures a limiter keeps about its own decisions. Slices are
// indexed like the limiter's rules.
type Stats struct {
	// Records counts the timestamps recorded in each rule's bookkeeping. A
	// record without a matching send is capacity leaked, for example by a
	// caller cancelled between two sequential stages.
	Records []int64
	// Waited is the time callers slept while each rule asked for the longest
	// wait (the binding rule), summed over callers.
	Waited []time.Duration
	// FirstBound is the instant each rule first made a caller wait, or -1.
	FirstBound []int64
}

// StatsReporter is implemented by limiters that keep Stats.
type StatsReporter interface {
	Stats() Stats
}
