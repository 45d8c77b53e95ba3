package simulate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

const ms = int64(time.Millisecond)

func TestTiesGoInInsertionOrder(t *testing.T) {
	s := NewSched(SchedConfig{})
	var order []int
	for i := range 4 {
		s.Go(0, func() {
			_ = s.Sleep(context.Background(), 10*time.Millisecond) // all wake at 10 ms
			order = append(order, i)
		})
	}
	s.Run()
	if want := []int{0, 1, 2, 3}; !equal(order, want) {
		t.Fatalf("woke in order %v, want %v", order, want)
	}
}

func TestLatenessIsPerLoopWaitAndNeverEarly(t *testing.T) {
	s := NewSched(SchedConfig{Lateness: Dist{Kind: Fixed, A: time.Millisecond}})
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
	if want := []int64{11 * ms, 11 * ms, 21 * ms}; !equal(woke, want) {
		t.Fatalf("woke at %v, want %v", woke, want)
	}
	if st := s.Stats(); st.EarlyWakes != 0 || st.LoopWaits != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestOpCostAdvancesTheClockPerStep(t *testing.T) {
	s := NewSched(SchedConfig{OpCost: Dist{Kind: Fixed, A: 5 * time.Microsecond}})
	var at []int64
	for range 3 {
		s.Go(0, func() { at = append(at, s.Now()) })
	}
	s.Run()
	if want := []int64{0, 5000, 10000}; !equal(at, want) {
		t.Fatalf("steps ran at %v, want %v", at, want)
	}
}

func TestSleepStopsAtTheVirtualDeadline(t *testing.T) {
	s := NewSched(SchedConfig{})
	var err error
	var at int64
	s.Go(0, func() {
		ctx := WithDeadline(context.Background(), 30*ms)
		err = s.Sleep(ctx, time.Second)
		at = s.Now()
	})
	s.Run()
	if !errors.Is(err, context.DeadlineExceeded) || at != 30*ms {
		t.Fatalf("err %v at %d, want deadline exceeded at %d", err, at, 30*ms)
	}
}

func TestSemaphoreIsFIFOAndLosesNoSlotToATimeout(t *testing.T) {
	s := NewSched(SchedConfig{})
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
	want := []string{"a", "b gave up", "c", "d"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	// The slot is free again: a new caller takes it at once.
	var at int64 = -1
	s.Go(s.Now(), func() {
		if sem.Acquire(context.Background()) == nil {
			at = s.Now()
		}
	})
	s.Run()
	if at != s.Now() {
		t.Fatalf("slot leaked: acquired at %d", at)
	}
}

func TestCallerParkedForeverIsAbandoned(t *testing.T) {
	s := NewSched(SchedConfig{})
	mu := s.NewMutex()
	done := false
	s.Go(0, func() { _ = mu.Lock(context.Background()) }) // never unlocks
	s.Go(0, func() {
		_ = mu.Lock(context.Background())
		done = true
	})
	s.Run()
	if done || s.Stats().Abandoned != 1 {
		t.Fatalf("done %v, abandoned %d", done, s.Stats().Abandoned)
	}
}

func TestSkewedViewOnlyShiftsNow(t *testing.T) {
	s := NewSched(SchedConfig{})
	v := s.View(7 * time.Millisecond)
	var seen, woke int64
	s.Go(0, func() {
		seen = v.Now()
		_ = v.Sleep(context.Background(), 10*time.Millisecond)
		woke = s.Now()
	})
	s.Run()
	if seen != 7*ms || woke != 10*ms {
		t.Fatalf("view read %d, slept until %d", seen, woke)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPooledRunsMatchFreshRuns: runs that reuse one worker's coroutines,
// scheduler and semaphore queues (as RunSeeds does) give each seed what a
// fresh run gives it, with timeouts that abandon callers and semaphores
// left with waiters among them.
func TestPooledRunsMatchFreshRuns(t *testing.T) {
	lateness, err := ParseDist("uniform(100us, 3ms)")
	require.NoError(t, err)
	s := &Scenario{
		Name: "pool", Rules: []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}},
		Callers: 40, Workers: 2, MaxInFlight: 3, Arrivals: Arrivals{Kind: Poisson, Rate: 20},
		Lateness: lateness, Timeout: 2 * time.Second, Seed: 7,
	}
	var pool procPool
	defer pool.close()
	for _, name := range []string{"sequential", "combined", "gated"} {
		st, ok := Lookup(name)
		require.True(t, ok)
		for seed := range uint64(30) {
			fresh, err := RunStrategy(s, st, seed, Options{})
			require.NoError(t, err)
			pooled, err := runStrategy(s, st, seed, Options{}, &pool)
			require.NoError(t, err)
			require.Equal(t, fresh, pooled, "%s seed %d", name, seed)
		}
	}
}
