package strategies_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rlchecktest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// TestRealClock200Goroutines drives the production constructors as a
// service would: 200 goroutines, one call each. The checker judges the
// instants the limiter admitted (taken under its lock, so the Go
// scheduler's delays after admission cannot blur them), and the gate's
// in-flight count is taken inside the call itself.
func TestRealClock200Goroutines(t *testing.T) {
	rules := []rule.Rule{{Limit: 20, Window: 50 * time.Millisecond}, {Limit: 60, Window: 200 * time.Millisecond}}
	const goroutines, slots = 200, 6
	for _, name := range []string{"combined", "gate"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var (
				lim interface {
					strategies.Limiter
					OnAdmit(func(int64))
				}
				admitted              []int64 // appended under the limiter's lock
				inFlight, maxInFlight atomic.Int64
				calls                 atomic.Int64
				wg                    sync.WaitGroup
			)
			if name == "gate" {
				lim = strategies.NewRealGated(slots, rules...)
			} else {
				lim = strategies.NewRealCombined(rules...)
			}
			lim.OnAdmit(func(at int64) { admitted = append(admitted, at) })
			call := func() error {
				n := inFlight.Add(1)
				for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
				}
				time.Sleep(time.Millisecond)
				inFlight.Add(-1)
				calls.Add(1)
				return nil
			}
			start := make(chan struct{})
			for range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					if err := strategies.Do(context.Background(), lim, call); err != nil {
						t.Error(err)
					}
				}()
			}
			close(start)
			wg.Wait()
			if calls.Load() != goroutines || len(admitted) != goroutines {
				t.Fatalf("%d calls ran, %d admitted; want %d", calls.Load(), len(admitted), goroutines)
			}
			rep, err := checker.Check(admitted, checker.Config{Rules: rules})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Violations() != 0 {
				t.Errorf("%d violations among %d admissions", rep.Violations(), rep.Sends)
			}
			rlchecktest.AssertCompliantNs(t, admitted, rules...)
			if name == "gate" && maxInFlight.Load() > slots {
				t.Errorf("%d calls in flight, cap %d", maxInFlight.Load(), slots)
			}
		})
	}
}

// TestRealClockCancelledContextsSpendNothing: callers whose context ends
// while they wait, for the rates or for a slot, and callers whose context
// ended before they came, record nothing and hold no slot afterwards. The
// invariant checked is exact: records equal admitted calls. Only a stall
// longer than a window (a very loaded machine) can let a waiting caller in,
// and then it is counted as admitted, not as a failure.
func TestRealClockCancelledContextsSpendNothing(t *testing.T) {
	const window = 150 * time.Millisecond
	rules := []rule.Rule{{Limit: 2, Window: window}}
	never := func() error { t.Error("a refused call ran"); return nil }
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()

	t.Run("combined", func(t *testing.T) {
		lim := strategies.NewRealCombined(rules...)
		for _, ctx := range []context.Context{ended, expired} {
			if err := strategies.Do(ctx, lim, never); err == nil {
				t.Fatal("an ended context was admitted")
			}
		}
		if got := lim.Stats().Records[0]; got != 0 {
			t.Fatalf("%d records after refused contexts, want 0", got)
		}
		first := time.Now()
		for range 2 {
			if err := lim.Acquire(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		in := timeouts(t, 8, 20*time.Millisecond, lim, first.Add(window))
		if got := lim.Stats().Records[0]; got != 2+in {
			t.Fatalf("%d records for %d admitted calls", got, 2+in)
		}
		if in > 0 {
			return
		}
		// Had the timed-out callers spent capacity, the next window would
		// not have room for two more calls straight away.
		time.Sleep(time.Until(first.Add(window + 5*time.Millisecond)))
		ctx, cancel := context.WithTimeout(context.Background(), window/2)
		defer cancel()
		for range 2 {
			if err := lim.Acquire(ctx); err != nil {
				t.Fatalf("capacity was spent by cancelled callers: %v", err)
			}
		}
	})

	t.Run("gate", func(t *testing.T) {
		gate := strategies.NewRealGated(1, rules...)
		if err := gate.Do(ended, never); !errors.Is(err, context.Canceled) {
			t.Fatalf("Do on an ended context: %v", err)
		}
		first := time.Now()
		if err := gate.Acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Wait for the slot, which is held: nobody may get in.
		timeouts(t, 8, 20*time.Millisecond, gate, time.Now().Add(time.Hour))
		gate.Release()
		if err := gate.Acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
		gate.Release()
		// The rates are now full: callers wait for them holding the slot,
		// and must give it back when they give up.
		in := timeouts(t, 4, 20*time.Millisecond, gate, first.Add(window))
		if got := gate.Stats().Records[0]; got != 2+in {
			t.Fatalf("%d records for %d admitted calls", got, 2+in)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*window)
		defer cancel()
		if err := gate.Do(ctx, func() error { return nil }); err != nil {
			t.Fatalf("the slot leaked: %v", err)
		}
	})
}

// timeouts starts n callers of lim that each give up after d, and returns
// how many were admitted; that is an error unless the limiter may have
// freed room before they gave up (after full, the instant it frees).
func timeouts(t *testing.T, n int, d time.Duration, lim strategies.Limiter, full time.Time) int64 {
	t.Helper()
	var wg sync.WaitGroup
	var admitted atomic.Int64
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			err := lim.Acquire(ctx)
			if err == nil {
				admitted.Add(1)
				lim.Release()
			} else if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Acquire: %v", err)
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 0 && time.Now().Before(full) {
		t.Fatalf("%d of %d callers were admitted past a full limiter", admitted.Load(), n)
	}
	return admitted.Load()
}

// TestGateDoReleasesOnPanic: the slot comes back however f ends.
func TestGateDoReleasesOnPanic(t *testing.T) {
	gate := strategies.NewRealGated(1, rule.Rule{Limit: 100, Window: time.Second})
	boom := errors.New("boom")
	if err := gate.Do(context.Background(), func() error { return boom }); err != boom {
		t.Fatalf("Do returned %v, want f's error", err)
	}
	func() {
		defer func() { _ = recover() }()
		_ = gate.Do(context.Background(), func() error { panic("call failed") })
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := gate.Do(ctx, func() error { return nil }); err != nil {
		t.Fatalf("the slot leaked: %v", err)
	}
}

// TestAcquireEndedContextRecordsNothing: Acquire itself, not only Do, must
// leave an ended context without capacity, even when a call could go.
func TestAcquireEndedContextRecordsNothing(t *testing.T) {
	rules := []rule.Rule{{Limit: 5, Window: time.Second}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, lim := range map[string]strategies.Limiter{
		"combined": strategies.NewRealCombined(rules...),
		"gated":    strategies.NewRealGated(1, rules...),
	} {
		if err := lim.Acquire(ctx); err == nil {
			t.Errorf("%s: Acquire on a cancelled context admitted the call", name)
		}
		if st := lim.(strategies.StatsReporter).Stats(); st.Records[0] != 0 {
			t.Errorf("%s: %d records after a cancelled Acquire", name, st.Records[0])
		}
	}
}
