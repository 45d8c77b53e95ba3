package strategies_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// deadlineLimiters build every in-memory strategy over 2/1s, or, for the
// kinds, a rule that admits two calls at 0 and the next at 1 s (bucketed
// windows, whose oldest bucket leaves the bound late, at 1.1 s).
var deadlineLimiters = map[string]func(clock.Runtime) strategies.Limiter{
	"combined":    func(rt clock.Runtime) strategies.Limiter { return strategies.NewCombined(rt, twoPerSecond) },
	"bounded":     func(rt clock.Runtime) strategies.Limiter { return strategies.NewCombinedBounded(rt, twoPerSecond) },
	"counter":     func(rt clock.Runtime) strategies.Limiter { return strategies.NewCombinedCounter(rt, twoPerSecond) },
	"sequential":  func(rt clock.Runtime) strategies.Limiter { return strategies.NewSequential(rt, twoPerSecond) },
	"gated":       func(rt clock.Runtime) strategies.Limiter { return strategies.NewGated(rt, 4, twoPerSecond) },
	"rates-first": func(rt clock.Runtime) strategies.Limiter { return strategies.NewGatedRatesFirst(rt, 4, twoPerSecond) },
	"buckets": func(rt clock.Runtime) strategies.Limiter {
		return strategies.NewCombinedBooks(rt, strategies.NewBucketWindow(twoPerSecond, 10))
	},
	"fixed-window": func(rt clock.Runtime) strategies.Limiter {
		return strategies.NewCombinedBooks(rt, strategies.NewFixedWindow(twoPerSecond))
	},
	"fixed": func(rt clock.Runtime) strategies.Limiter {
		return strategies.NewCombined(rt, rule.Rule{Limit: 2, Window: time.Second, Kind: rule.Fixed})
	},
	"bucket": func(rt clock.Runtime) strategies.Limiter {
		return strategies.NewCombined(rt, rule.Rule{Limit: 1, Window: time.Second, Kind: rule.Bucket, Burst: 2})
	},
	"first-call": func(rt clock.Runtime) strategies.Limiter {
		return strategies.NewCombined(rt, rule.Rule{Limit: 2, Window: time.Second, Kind: rule.FirstCall})
	},
}

var twoPerSecond = rule.Rule{Limit: 2, Window: time.Second}

// TestWaitPastTheDeadlineFailsAtOnce: on a full window, a caller whose
// context ends 50 ms from now, before the 1 s wait it needs, is refused at
// once, with context.DeadlineExceeded and the wait, recording nothing; a
// caller whose deadline falls just after the end of its wait is admitted
// then.
func TestWaitPastTheDeadlineFailsAtOnce(t *testing.T) {
	for name, newLim := range deadlineLimiters {
		t.Run(name, func(t *testing.T) {
			sch := virtual.NewSched(virtual.Config{})
			lim := newLim(sch)
			wait, admit := time.Second, time.Second
			switch name {
			case "buckets":
				wait, admit = 1100*time.Millisecond, 1100*time.Millisecond
			case "counter": // at 1 s it still weighs the two calls of the last window
				admit = 1500 * time.Millisecond
			}
			var early, onTime error
			var failedAt, admittedAt int64
			sch.Go(0, func() {
				for range 2 {
					require.NoError(t, lim.Acquire(context.Background()))
				}
				early = lim.Acquire(virtual.WithDeadline(context.Background(), int64(50*time.Millisecond)))
				failedAt = sch.Now()
				onTime = lim.Acquire(virtual.WithDeadline(context.Background(), int64(admit)+1))
				admittedAt = sch.Now()
			})
			sch.Run()
			require.ErrorIs(t, early, context.DeadlineExceeded)
			var de *strategies.DeadlineError
			require.True(t, errors.As(early, &de), "a *DeadlineError: %v", early)
			assert.Equal(t, wait, de.Wait, "the wait needed")
			assert.Equal(t, 50*time.Millisecond, de.Left, "the time left")
			assert.Contains(t, early.Error(), "a wait of "+wait.String())
			assert.Zero(t, failedAt, "refused at once, not at the deadline")
			require.NoError(t, onTime, "a deadline at the end of the wait")
			assert.Equal(t, int64(admit), admittedAt)
			if sr, ok := lim.(strategies.StatsReporter); ok {
				assert.Equal(t, int64(3), sr.Stats().Records[0], "records: two calls and the one on time")
			}
		})
	}
}

// TestRealClockWaitPastTheDeadlineFailsAtOnce: on the wall clock, the
// context's own deadline is read: 50 ms before a 1 s wait fails well
// before the 50 ms pass.
func TestRealClockWaitPastTheDeadlineFailsAtOnce(t *testing.T) {
	lim := strategies.NewRealGated(4, twoPerSecond)
	for range 2 {
		require.NoError(t, lim.Acquire(context.Background()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := lim.Acquire(ctx)
	took := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var de *strategies.DeadlineError
	require.ErrorAs(t, err, &de)
	assert.Less(t, took, 40*time.Millisecond, "returned at once")
	assert.Equal(t, int64(2), lim.Stats().Records[0], "nothing recorded")
	for range 2 {
		lim.Release()
	}
	assert.NoError(t, lim.Do(context.Background(), func() error { return nil }), "the slot was given back")
}
