package clock

import (
	"context"
	"time"
)

// Real is the wall-clock Runtime. Now is monotonic (it never jumps with the
// system clock) and expressed as Unix nanoseconds from the moment Real was
// made. It is safe for concurrent use.
type Real struct {
	base time.Time
}

// NewReal returns a wall-clock runtime.
func NewReal() *Real { return &Real{base: time.Now()} }

// Now returns Unix nanoseconds, advanced by the monotonic clock.
func (r *Real) Now() int64 {
	return r.base.UnixNano() + int64(time.Since(r.base))
}

// Sleep waits on a timer, or until ctx ends.
func (r *Real) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// NewMutex returns a channel-based mutex. Go queues blocked receivers in
// arrival order, so waiters are served first come, first served.
func (r *Real) NewMutex() Mutex { return &realSem{slots: newSlots(1)} }

// NewSemaphore returns a channel-based semaphore with n slots.
func (r *Real) NewSemaphore(n int) Semaphore { return &realSem{slots: newSlots(n)} }

func newSlots(n int) chan struct{} {
	c := make(chan struct{}, n)
	for range n {
		c <- struct{}{}
	}
	return c
}

type realSem struct{ slots chan struct{} }

func (s *realSem) Lock(ctx context.Context) error { return s.Acquire(ctx) }
func (s *realSem) Unlock()                        { s.Release() }
func (s *realSem) Acquire(ctx context.Context) error {
	// An ended context takes nothing, even when a slot is free: a cancelled
	// caller must consume no capacity.
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-s.slots:
		return nil
	default:
	}
	select {
	case <-s.slots:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
func (s *realSem) Release() {
	select {
	case s.slots <- struct{}{}:
	default:
		panic("clock: release of a slot that was not held")
	}
}
