package virtual

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
)

const ms = int64(time.Millisecond)

// fixed draws always the same duration.
type fixed time.Duration

func (f fixed) Draw(*rand.Rand) time.Duration { return time.Duration(f) }

func TestTiesGoInInsertionOrder(t *testing.T) {
	s := NewSched(Config{})
	var order []int
	for i := range 4 {
		s.Go(0, func() {
			_ = s.Sleep(context.Background(), 10*time.Millisecond) // all wake at 10 ms
			order = append(order, i)
		})
	}
	s.Run()
	require.Equal(t, []int{0, 1, 2, 3}, order, "wake order")
}

func TestLatenessIsPerLoopWaitAndNeverEarly(t *testing.T) {
	s := NewSched(Config{Lateness: fixed(time.Millisecond)})
	var woke []int64
	for _, d := range []time.Duration{10 * time.Millisecond, 10*time.Millisecond + 500*time.Microsecond, 20 * time.Millisecond} {
		s.Go(0, func() {
			_ = s.Sleep(context.Background(), d)
			woke = append(woke, s.Now())
		})
	}
	s.Run()
	// The loop waits for 10 ms and wakes at 11 ms; the 10.5 ms timer is
	// already due then and runs in the same batch; 20 ms needs a new wait.
	require.Equal(t, []int64{11 * ms, 11 * ms, 21 * ms}, woke, "wake instants")
	st := s.Stats()
	assert.Zero(t, st.EarlyWakes, "early wakes")
	assert.Equal(t, int64(2), st.LoopWaits, "loop waits")
}

func TestOpCostAdvancesTheClockPerStep(t *testing.T) {
	s := NewSched(Config{OpCost: fixed(5 * time.Microsecond)})
	var at []int64
	for range 3 {
		s.Go(0, func() { at = append(at, s.Now()) })
	}
	s.Run()
	require.Equal(t, []int64{0, 5000, 10000}, at, "step instants")
}

func TestSleepStopsAtTheVirtualDeadline(t *testing.T) {
	s := NewSched(Config{})
	var err error
	var at int64
	s.Go(0, func() {
		ctx := WithDeadline(context.Background(), 30*ms)
		err = s.Sleep(ctx, time.Second)
		at = s.Now()
	})
	s.Run()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 30*ms, at, "woke at the deadline")
}

func TestSemaphoreIsFIFOAndLosesNoSlotToATimeout(t *testing.T) {
	s := NewSched(Config{})
	sem := s.NewSemaphore(1)
	var got []string
	hold := func(name string, at, deadline int64, d time.Duration) {
		s.Go(at, func() {
			ctx := context.Background()
			if deadline > 0 {
				ctx = WithDeadline(ctx, deadline)
			}
			if err := sem.Acquire(ctx); err != nil {
				got = append(got, name+" gave up")
				return
			}
			got = append(got, name)
			_ = s.Sleep(context.Background(), d)
			sem.Release()
		})
	}
	hold("a", 0, 0, 100*time.Millisecond)
	hold("b", 1*ms, 50*ms, 0) // gives up before a releases
	hold("c", 2*ms, 0, 0)
	hold("d", 3*ms, 0, 0)
	s.Run()
	require.Equal(t, []string{"a", "b gave up", "c", "d"}, got)
	// The slot is free again: a new caller takes it at once.
	var at int64 = -1
	s.Go(s.Now(), func() {
		if sem.Acquire(context.Background()) == nil {
			at = s.Now()
		}
	})
	s.Run()
	require.Equal(t, s.Now(), at, "slot leaked")
}

func TestCallerParkedForeverIsAbandoned(t *testing.T) {
	s := NewSched(Config{})
	mu := s.NewMutex()
	done := false
	s.Go(0, func() { _ = mu.Lock(context.Background()) }) // never unlocks
	s.Go(0, func() {
		_ = mu.Lock(context.Background())
		done = true
	})
	s.Run()
	assert.False(t, done, "the parked caller finished")
	assert.Equal(t, int64(1), s.Stats().Abandoned, "abandoned callers")
}

func TestSkewedViewOnlyShiftsNow(t *testing.T) {
	s := NewSched(Config{})
	v := s.View(7 * time.Millisecond)
	var seen, woke int64
	s.Go(0, func() {
		seen = v.Now()
		_ = v.Sleep(context.Background(), 10*time.Millisecond)
		woke = s.Now()
	})
	s.Run()
	assert.Equal(t, 7*ms, seen, "the view's reading")
	assert.Equal(t, 10*ms, woke, "slept until")
}

// TestLeftReadsTheVirtualDeadline: the time before a virtual deadline is
// read on the virtual clock, from every view, and a context without one
// has none.
func TestLeftReadsTheVirtualDeadline(t *testing.T) {
	s := NewSched(Config{})
	var left, viewLeft time.Duration
	var ok, none bool
	s.Go(20*ms, func() {
		ctx := WithDeadline(context.Background(), 50*ms)
		left, ok = clock.Left(ctx, s)
		viewLeft, _ = clock.Left(ctx, s.View(time.Second))
		_, none = clock.Left(context.Background(), s)
	})
	s.Run()
	assert.True(t, ok, "a virtual deadline")
	assert.Equal(t, 30*time.Millisecond, left, "left at 20 ms of a 50 ms deadline")
	assert.Equal(t, left, viewLeft, "a skewed view sleeps on the same clock")
	assert.False(t, none, "no deadline")
}
