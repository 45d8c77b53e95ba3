package strategies_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// stepClock is a one-caller runtime at exact instants: Sleep jumps the
// clock, and stops at limit with an error, as a caller's deadline would.
type stepClock struct {
	now, limit int64
}

func (c *stepClock) Now() int64 { return c.now }
func (c *stepClock) Sleep(_ context.Context, d time.Duration) error {
	if c.limit > 0 && c.now+int64(d) > c.limit {
		c.now = c.limit
		return context.DeadlineExceeded
	}
	c.now += int64(d)
	return nil
}
func (c *stepClock) NewMutex() clock.Mutex              { return clock.NewReal().NewMutex() }
func (c *stepClock) NewSemaphore(n int) clock.Semaphore { return clock.NewReal().NewSemaphore(n) }

var rules = []rule.Rule{{Limit: 1, Window: time.Second}, {Limit: 1, Window: 3 * time.Second}}

func TestStatsAttributeWaitsAndLeaks(t *testing.T) {
	tests := []struct {
		name        string
		make        func(clock.Runtime) strategies.StatsReporter
		wantRecords []int64
		wantWaited  []time.Duration
		wantBound   []int64
	}{
		// Second call: 5/1s admits at 1 s and records, then 12/3s makes it
		// wait until 3 s, past its deadline at 2 s: one record, no send.
		{"sequential", func(rt clock.Runtime) strategies.StatsReporter { return strategies.NewSequential(rt, rules...) },
			[]int64{2, 1}, []time.Duration{time.Second, time.Second}, []int64{0, int64(time.Second)}},
		// Combined asks for the longest wait (3 s, rule 1) and records nothing.
		{"combined", func(rt clock.Runtime) strategies.StatsReporter { return strategies.NewCombined(rt, rules...) },
			[]int64{1, 1}, []time.Duration{0, 2 * time.Second}, []int64{-1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &stepClock{}
			lim := tt.make(c)
			require.NoError(t, lim.(strategies.Limiter).Acquire(context.Background()))
			c.limit = int64(2 * time.Second)
			require.ErrorIs(t, lim.(strategies.Limiter).Acquire(context.Background()), context.DeadlineExceeded, "second call")
			st := lim.Stats()
			assert.Equal(t, tt.wantRecords, st.Records, "records per rule")
			assert.Equal(t, tt.wantWaited, st.Waited, "waited per rule")
			assert.Equal(t, tt.wantBound, st.FirstBound, "first bound per rule")
		})
	}
}
