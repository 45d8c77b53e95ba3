package redislimit

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
)

// heldFor reads the hold an ErrStateLost names, in ms.
func heldFor(t *testing.T, err error) int64 {
	t.Helper()
	m := regexp.MustCompile(`back for (\d+) ms`).FindStringSubmatch(err.Error())
	require.NotNil(t, m, "no hold in %v", err)
	n, perr := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, perr)
	return n
}

// TestLostStateHoldLifts: after FLUSHALL under 10000/day, a new
// limiter was refused "for 88447999 ms more" (the day and two leases), a
// Reset freed new limiters while the one that found the loss still
// refused "for 23h59m59.999s more", and with the server then killed its
// error still said "state lost". Now the hold is the longest window by
// default, Reset lifts it for running limiters too, and a dead server is
// ErrUnreachable.
func TestLostStateHoldLifts(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := realClient(t, s)
	ctx := context.Background()
	rules, err := rule.ParseList("10000/day")
	require.NoError(t, err)
	mk := func() *Limiter {
		l, err := New(c, clock.NewReal(), rules, Options{Key: "day"})
		require.NoError(t, err)
		return l
	}
	a := mk()
	for range 3 {
		require.NoError(t, a.Acquire(ctx))
	}
	require.NoError(t, c.FlushAll(ctx).Err())
	err = a.Acquire(ctx)
	require.ErrorIs(t, err, ErrStateLost, "a finds the loss")
	assert.Equal(t, int64(24*time.Hour/time.Millisecond), heldFor(t, err))
	err = mk().Acquire(ctx)
	require.ErrorIs(t, err, ErrStateLost, "a new limiter is held back")
	assert.InDelta(t, int64(24*time.Hour/time.Millisecond), heldFor(t, err), 5000, "the hold is the window: %v", err)
	require.ErrorIs(t, a.Acquire(ctx), ErrStateLost, "a is held back too")

	require.NoError(t, Reset(ctx, c, "day", rules))
	require.NoError(t, mk().Acquire(ctx), "Reset frees a new limiter")
	require.NoError(t, a.Acquire(ctx), "Reset frees the limiter that found the loss")

	s.Kill()
	err = a.Acquire(ctx)
	require.ErrorIs(t, err, ErrUnreachable)
	assert.NotErrorIs(t, err, ErrStateLost)
	assert.NotErrorIs(t, err, ErrTimeout)
	t.Log(err)
}

// TestHeldLimiterSeesAKilledServer: a limiter held back after the
// loss it found asks Redis on every call, so a server killed during the
// hold is ErrUnreachable, where it said "state lost" for a day.
func TestHeldLimiterSeesAKilledServer(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := realClient(t, s)
	ctx := context.Background()
	l, err := New(c, clock.NewReal(), []rule.Rule{{Limit: 10000, Window: 24 * time.Hour}}, Options{Key: "held"})
	require.NoError(t, err)
	require.NoError(t, l.Acquire(ctx))
	require.NoError(t, c.FlushAll(ctx).Err())
	require.ErrorIs(t, l.Acquire(ctx), ErrStateLost)
	require.ErrorIs(t, l.Acquire(ctx), ErrStateLost, "held")
	s.Kill()
	err = l.Acquire(ctx)
	assert.ErrorIs(t, err, ErrUnreachable)
	assert.NotErrorIs(t, err, ErrStateLost)
}

// lossCase is a loss under a LossHold; each limiter of a test is a
// process of the key.
func lossLimiter(t *testing.T, c redis.Scripter, rt *stepRT, hold time.Duration) *Limiter {
	t.Helper()
	l, err := New(c, rt, []rule.Rule{{Limit: 100, Window: time.Second}}, Options{Key: "hold", TimeSource: Virtual, LossHold: hold})
	require.NoError(t, err)
	return l
}

// TestLossHoldConfigurable: the hold after a loss is Options.LossHold,
// counted on the script's clock, for every limiter of the key; a limiter
// that counted on the state before the loss is not held a second time
// after it, and a second loss during the hold is found again.
func TestLossHoldConfigurable(t *testing.T) {
	for name, c := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			flush := func() { require.NoError(t, c.(redis.Cmdable).FlushAll(ctx).Err()) }
			ms := int64(time.Millisecond)
			rt := &stepRT{t: epoch}
			a, b := lossLimiter(t, c, rt, 50*time.Millisecond), lossLimiter(t, c, rt, 50*time.Millisecond)
			require.NoError(t, a.Acquire(ctx))
			require.NoError(t, b.Acquire(ctx))
			flush()
			err := a.Acquire(ctx)
			require.ErrorIs(t, err, ErrStateLost)
			assert.Equal(t, int64(50), heldFor(t, err))
			rt.t += 20 * ms
			assert.Equal(t, int64(30), heldFor(t, lossLimiter(t, c, rt, 0).Acquire(ctx)), "a new limiter, 20 ms on")
			flush() // a second loss during the hold
			require.ErrorIs(t, a.Acquire(ctx), ErrStateLost, "a counts on the head it made: found again")
			rt.t += 50 * ms
			require.NoError(t, b.Acquire(ctx), "b counted on the state before the loss; after the hold it goes on")
			require.NoError(t, a.Acquire(ctx))
		})
	}
}

// TestNoLossHold: a negative LossHold refuses only the call that found
// the loss.
func TestNoLossHold(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	rt := &stepRT{t: epoch}
	a := lossLimiter(t, c, rt, -1)
	require.NoError(t, a.Acquire(ctx))
	require.NoError(t, c.FlushAll(ctx).Err())
	require.ErrorIs(t, a.Acquire(ctx), ErrStateLost)
	require.NoError(t, a.Acquire(ctx))
	require.NoError(t, lossLimiter(t, c, rt, -1).Acquire(ctx))
}

// TestUnreachableIsItsOwnError: a closed port and a killed server are
// ErrUnreachable, for New, Acquire (of a Lazy limiter), Reset and Dial; a
// paused one is ErrTimeout.
func TestUnreachableIsItsOwnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := redistest.Start(t)
	addr := s.Addr
	s.Kill()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	_, err := New(c, clock.NewReal(), []rule.Rule{{Limit: 1, Window: time.Second}}, Options{Key: "gone"})
	require.ErrorIs(t, err, ErrUnreachable, "New")
	l, err := New(c, clock.NewReal(), []rule.Rule{{Limit: 1, Window: time.Second}}, Options{Key: "gone", Lazy: true})
	require.NoError(t, err)
	for what, err := range map[string]error{
		"Acquire": l.Acquire(ctx),
		"Reset":   Reset(ctx, c, "gone", l.Rules()),
		"Dial":    func() error { _, err := Dial(ctx, fmt.Sprintf("redis://%s/0", addr), nil, time.Second); return err }(),
	} {
		assert.ErrorIs(t, err, ErrUnreachable, what)
		assert.NotErrorIs(t, err, ErrTimeout, what)
		assert.NotErrorIs(t, err, ErrStateLost, what)
	}
}
