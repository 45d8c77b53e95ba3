package realrun

import (
	"context"
	"sync"
	"time"

	"github.com/rlcheck/rlcheck/clock"
)

// meter is a worker's view of the real runtime: its clock shifted by the
// worker's skew, and every completed sleep's overshoot noted, because that
// overshoot is the timer lateness the simulator models.
type meter struct {
	rt   clock.Runtime
	skew int64
	late *lateLog
}

func (m *meter) Now() int64 { return m.rt.Now() + m.skew }

func (m *meter) Sleep(ctx context.Context, d time.Duration) error {
	t0 := m.rt.Now()
	err := m.rt.Sleep(ctx, d)
	if err == nil && d > 0 {
		m.late.add(time.Duration(m.rt.Now()-t0) - d)
	}
	return err
}

func (m *meter) NewMutex() clock.Mutex              { return m.rt.NewMutex() }
func (m *meter) NewSemaphore(n int) clock.Semaphore { return m.rt.NewSemaphore(n) }

// lateLog collects overshoots from every goroutine of one strategy.
type lateLog struct {
	mu  sync.Mutex
	all []time.Duration
}

func (l *lateLog) add(d time.Duration) {
	l.mu.Lock()
	l.all = append(l.all, d)
	l.mu.Unlock()
}

func (l *lateLog) snapshot() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Duration(nil), l.all...)
}
