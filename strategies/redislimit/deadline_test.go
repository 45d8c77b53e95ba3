package redislimit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// TestWaitPastTheDeadlineFailsAtOnce: on virtual time, a caller whose
// context ends 50 ms from now, before the 1 s wait the script asks of it,
// is refused at once with context.DeadlineExceeded and the wait, and
// records nothing; one whose deadline falls after the wait is admitted
// then.
func TestWaitPastTheDeadlineFailsAtOnce(t *testing.T) {
	c := newClient(t)
	sch := virtual.NewSched(virtual.Config{})
	now := func() int64 { return epoch + sch.Now() }
	l, err := New(c, sch, []rule.Rule{{Limit: 2, Window: time.Second}},
		Options{Key: "deadline", TimeSource: Virtual, Now: now, InProcess: true})
	require.NoError(t, err)
	var early, onTime error
	var failedAt, admittedAt int64
	sch.Go(0, func() {
		for range 2 {
			require.NoError(t, l.Acquire(context.Background()))
		}
		early = l.Acquire(virtual.WithDeadline(context.Background(), int64(50*time.Millisecond)))
		failedAt = sch.Now()
		onTime = l.Acquire(virtual.WithDeadline(context.Background(), int64(time.Second)+1))
		admittedAt = sch.Now()
	})
	sch.Run()
	require.ErrorIs(t, early, context.DeadlineExceeded)
	var de *strategies.DeadlineError
	require.True(t, errors.As(early, &de), "a *strategies.DeadlineError: %v", early)
	assert.Equal(t, time.Second, de.Wait, "the wait the script asked")
	assert.Equal(t, 50*time.Millisecond, de.Left)
	assert.Contains(t, early.Error(), "redislimit: strategies: the call needs a wait of 1s")
	assert.Zero(t, failedAt, "refused at once, not at the deadline")
	require.NoError(t, onTime)
	assert.Equal(t, int64(time.Second), admittedAt)
	n, err := c.ZCard(context.Background(), l.Keys()[0]).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(3), n, "entries: the refused call recorded nothing")
}

// TestRealWaitPastTheDeadlineFailsAtOnce: on a real server, with its own
// clock (TIME) and a context deadline of 50 ms before a 1 s wait, Acquire
// returns well before the deadline, recording nothing.
func TestRealWaitPastTheDeadlineFailsAtOnce(t *testing.T) {
	s := redistest.Start(t)
	c := realClient(t, s)
	l, err := New(c, clock.NewReal(), []rule.Rule{{Limit: 2, Window: time.Second}}, Options{Key: "deadline"})
	require.NoError(t, err)
	for range 2 {
		require.NoError(t, l.Acquire(context.Background()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = l.Acquire(ctx)
	took := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var de *strategies.DeadlineError
	require.ErrorAs(t, err, &de)
	assert.Greater(t, de.Wait, 50*time.Millisecond, "the wait needed")
	assert.Less(t, took, 40*time.Millisecond, "returned at once")
	n, err := c.ZCard(context.Background(), l.Keys()[0]).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "entries: the refused call recorded nothing")
}
