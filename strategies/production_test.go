package strategies_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
					// assert, not require: FailNow must not run off the test goroutine.
					assert.NoError(t, strategies.Do(context.Background(), lim, call))
				}()
			}
			close(start)
			wg.Wait()
			require.Equal(t, int64(goroutines), calls.Load(), "calls that ran")
			require.Len(t, admitted, goroutines, "admissions")
			rep, err := checker.Check(admitted, checker.Config{Rules: rules})
			require.NoError(t, err)
			assert.Zero(t, rep.Violations(), "violations among %d admissions", rep.Sends)
			rlchecktest.AssertCompliantNs(t, admitted, rules...)
			if name == "gate" {
				assert.LessOrEqual(t, maxInFlight.Load(), int64(slots), "calls in flight")
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
	never := func() error { assert.Fail(t, "a refused call ran"); return nil }
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()

	t.Run("combined", func(t *testing.T) {
		lim := strategies.NewRealCombined(rules...)
		for _, ctx := range []context.Context{ended, expired} {
			require.Error(t, strategies.Do(ctx, lim, never), "an ended context was admitted")
		}
		require.Zero(t, lim.Stats().Records[0], "records after refused contexts")
		first := time.Now()
		for range 2 {
			require.NoError(t, lim.Acquire(context.Background()))
		}
		in := timeouts(t, 8, 20*time.Millisecond, lim, first.Add(window))
		require.Equal(t, 2+in, lim.Stats().Records[0], "records for %d admitted calls", 2+in)
		if in > 0 {
			return
		}
		// Had the timed-out callers spent capacity, the next window would
		// not have room for two more calls straight away.
		time.Sleep(time.Until(first.Add(window + 5*time.Millisecond)))
		ctx, cancel := context.WithTimeout(context.Background(), window/2)
		defer cancel()
		for range 2 {
			require.NoError(t, lim.Acquire(ctx), "capacity was spent by cancelled callers")
		}
	})

	t.Run("gate", func(t *testing.T) {
		gate := strategies.NewRealGated(1, rules...)
		require.ErrorIs(t, gate.Do(ended, never), context.Canceled, "Do on an ended context")
		first := time.Now()
		require.NoError(t, gate.Acquire(context.Background()))
		// Wait for the slot, which is held: nobody may get in.
		timeouts(t, 8, 20*time.Millisecond, gate, time.Now().Add(time.Hour))
		gate.Release()
		require.NoError(t, gate.Acquire(context.Background()))
		gate.Release()
		// The rates are now full: callers wait for them holding the slot,
		// and must give it back when they give up.
		in := timeouts(t, 4, 20*time.Millisecond, gate, first.Add(window))
		require.Equal(t, 2+in, gate.Stats().Records[0], "records for %d admitted calls", 2+in)
		ctx, cancel := context.WithTimeout(context.Background(), 2*window)
		defer cancel()
		require.NoError(t, gate.Do(ctx, func() error { return nil }), "the slot leaked")
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
			} else {
				// assert, not require: FailNow must not run off the test goroutine.
				assert.ErrorIs(t, err, context.DeadlineExceeded, "Acquire")
			}
		}()
	}
	wg.Wait()
	require.False(t, admitted.Load() != 0 && time.Now().Before(full), "%d of %d callers were admitted past a full limiter", admitted.Load(), n)
	return admitted.Load()
}

// TestGateDoReleasesOnPanic: the slot comes back however f ends.
func TestGateDoReleasesOnPanic(t *testing.T) {
	gate := strategies.NewRealGated(1, rule.Rule{Limit: 100, Window: time.Second})
	boom := errors.New("boom")
	require.Same(t, boom, gate.Do(context.Background(), func() error { return boom }), "Do returns f's error")
	func() {
		defer func() { _ = recover() }()
		_ = gate.Do(context.Background(), func() error { panic("call failed") })
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	require.NoError(t, gate.Do(ctx, func() error { return nil }), "the slot leaked")
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
		assert.Error(t, lim.Acquire(ctx), "%s: Acquire on a cancelled context admitted the call", name)
		assert.Zero(t, lim.(strategies.StatsReporter).Stats().Records[0], "%s: records after a cancelled Acquire", name)
	}
}
