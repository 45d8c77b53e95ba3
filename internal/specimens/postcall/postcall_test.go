package postcall

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
)

// stepClock is a runtime for one caller at a time: the time is set by the
// test, and a sleep moves it on.
type stepClock struct{ now int64 }

func (c *stepClock) Now() int64 { return c.now }
func (c *stepClock) Sleep(_ context.Context, d time.Duration) error {
	c.now += int64(d)
	return nil
}
func (c *stepClock) NewMutex() clock.Mutex            { return nopLock{} }
func (c *stepClock) NewSemaphore(int) clock.Semaphore { return nopLock{} }

type nopLock struct{}

func (nopLock) Lock(context.Context) error    { return nil }
func (nopLock) Unlock()                       {}
func (nopLock) Acquire(context.Context) error { return nil }
func (nopLock) Release()                      {}

// TestPostCallChargesOnlyAtTheAnswer: calls in flight are charged nothing,
// so three estimates of 80 go out under 100 tokens a minute; the usage is
// charged at each answer's instant, for a window from there, and a window
// the usage filled makes the next call wait until it has room.
func TestPostCallChargesOnlyAtTheAnswer(t *testing.T) {
	rt := &stepClock{}
	l := New(rt, rule.Rule{Limit: 2, Window: time.Minute}, rule.Rule{Limit: 100, Window: time.Minute, Unit: "tokens"})
	ctx := context.Background()
	a, err := l.Reserve(ctx, []int64{80})
	require.NoError(t, err)
	rt.now = int64(time.Second)
	b, err := l.Reserve(ctx, []int64{80})
	require.NoError(t, err, "the first call is in flight and charged nothing")
	assert.Equal(t, int64(time.Second), b.At())
	rt.now = int64(10 * time.Second)
	require.NoError(t, a.Settle([]int64{60}))
	require.NoError(t, b.Settle([]int64{40}))
	require.NoError(t, b.Settle([]int64{40}), "a retried settlement")
	rt.now = int64(20 * time.Second)
	c, err := l.Reserve(ctx, []int64{80})
	require.NoError(t, err)
	assert.Equal(t, int64(70*time.Second), c.At(), "60+40 tokens charged at 10 s fill the window until 70 s")
	rt.now = int64(71 * time.Second)
	require.NoError(t, c.Settle([]int64{10}))
	d, err := l.Reserve(ctx, []int64{90})
	require.NoError(t, err)
	assert.Equal(t, int64(71*time.Second), d.At(), "10 tokens in the window: an estimate of 90 goes at once")
	_, err = l.Reserve(ctx, []int64{1, 2})
	require.Error(t, err, "two costs for one unit")
}
