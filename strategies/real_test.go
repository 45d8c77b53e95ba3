package strategies_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// admitter is a limiter that reports the instant it records each call.
type admitter interface {
	strategies.Limiter
	strategies.StatsReporter
	OnAdmit(func(at int64))
}

// TestRealClockGoroutines runs the check-every-rule strategies on the wall
// clock with 50 goroutines and tight rules. The checker judges the
// admission instants (taken under the limiter's lock), not the moments the
// goroutines got to run afterwards, which the Go scheduler may delay.
func TestRealClockGoroutines(t *testing.T) {
	rules := []rule.Rule{{Limit: 20, Window: 100 * time.Millisecond}, {Limit: 30, Window: 200 * time.Millisecond}}
	const goroutines, calls, slots = 50, 80, 5
	makers := map[string]func(clock.Runtime) admitter{
		"combined":          func(rt clock.Runtime) admitter { return strategies.NewCombined(rt, rules...) },
		"gated":             func(rt clock.Runtime) admitter { return strategies.NewGated(rt, slots, rules...) },
		"gated-rates-first": func(rt clock.Runtime) admitter { return strategies.NewGatedRatesFirst(rt, slots, rules...) },
	}
	for _, name := range []string{"combined", "gated", "gated-rates-first"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rt := clock.NewReal()
			lim := makers[name](rt)
			var admitted []int64 // appended under the limiter's lock
			lim.OnAdmit(func(at int64) { admitted = append(admitted, at) })
			var (
				next, inFlight, maxInFlight atomic.Int64
				wg                          sync.WaitGroup
			)
			for range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= calls {
						// assert, not require: FailNow must not run off the test goroutine.
						if !assert.NoError(t, lim.Acquire(context.Background())) {
							return
						}
						n := inFlight.Add(1)
						for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
						}
						time.Sleep(time.Millisecond)
						inFlight.Add(-1)
						lim.Release()
					}
				}()
			}
			wg.Wait()
			rep, err := checker.Check(admitted, checker.Config{Rules: rules})
			require.NoError(t, err)
			assert.EqualValues(t, calls, rep.Sends, "admissions")
			assert.Zero(t, rep.Violations(), "violations")
			if name != "combined" {
				assert.LessOrEqual(t, maxInFlight.Load(), int64(slots), "calls in flight")
			}
			assert.Equal(t, []int64{calls, calls}, lim.Stats().Records, "records per rule")
		})
	}
}

// TestRealClockCancelledCallerLeavesNoRecord: on the wall clock, callers
// that time out inside combined record nothing.
func TestRealClockCancelledCallerLeavesNoRecord(t *testing.T) {
	rules := []rule.Rule{{Limit: 2, Window: time.Second}}
	lim := strategies.NewCombined(clock.NewReal(), rules...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	var ok atomic.Int64
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if lim.Acquire(ctx) == nil {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(2), ok.Load(), "admitted")
	assert.Equal(t, []int64{2}, lim.Stats().Records, "records")
}
