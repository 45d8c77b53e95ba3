package clock

import (
	"context"
	"time"
)

// Runtime is what a strategy may use to tell the time and to wait.
// Instants are integer nanoseconds; only differences between them matter.
type Runtime interface {
	// Now returns the current instant in nanoseconds.
	Now() int64
	// Sleep waits for d, or less when ctx ends first, in which case it
	// returns a non-nil error. A runtime may wake a sleeper late, never early.
	Sleep(ctx context.Context, d time.Duration) error
	// NewMutex returns a mutex whose waiters are served in arrival order.
	NewMutex() Mutex
	// NewSemaphore returns a counting semaphore with n slots, served in
	// arrival order.
	NewSemaphore(n int) Semaphore
}

// Mutex is a FIFO lock that parks on its Runtime.
type Mutex interface {
	// Lock waits for the lock; it returns an error, without the lock, when
	// ctx ends first.
	Lock(ctx context.Context) error
	Unlock()
}

// Semaphore is a FIFO counting semaphore that parks on its Runtime.
type Semaphore interface {
	// Acquire waits for a slot; it returns an error, without a slot, when
	// ctx ends first.
	Acquire(ctx context.Context) error
	Release()
}

// Deadliner is a Runtime that reads a context's deadline on its own clock,
// because its time is not the wall clock's (a virtual runtime).
type Deadliner interface {
	// Left returns the time ctx has before its deadline, on this runtime's
	// clock, and false when ctx has no deadline this runtime honours.
	Left(ctx context.Context) (time.Duration, bool)
}

// Left returns how long ctx has before its deadline on rt's clock, and
// false when it has none, so that a limiter can refuse at once a wait that
// would outlast it: rt's own reading when rt is a Deadliner, else the
// context's wall-clock deadline.
func Left(ctx context.Context, rt Runtime) (time.Duration, bool) {
	if d, ok := rt.(Deadliner); ok {
		return d.Left(ctx)
	}
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl), true
	}
	return 0, false
}
