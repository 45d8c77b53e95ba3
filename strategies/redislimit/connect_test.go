package redislimit

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
)

func TestDialRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, url string
		cluster   []string
		want      string
	}{
		{"neither", "", nil, "no server URL"},
		{"both", "redis://127.0.0.1:1", []string{"127.0.0.1:1"}, "not both"},
		{"bad url", "http://x", nil, "redislimit:"},
		{"nobody there", "redis://127.0.0.1:1/0", nil, "cannot reach Redis at redis://127.0.0.1:1/0"},
	}
	for _, tc := range cases {
		c, err := Dial(ctx, tc.url, tc.cluster, time.Second)
		assert.ErrorContains(t, err, tc.want, tc.name)
		assert.Nil(t, c, tc.name)
	}
}

func TestDialRealServer(t *testing.T) {
	s := redistest.Start(t)
	c, err := Dial(context.Background(), "redis://"+s.Addr+"/0", nil, 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	assert.NoError(t, Reset(context.Background(), c, "k", []rule.Rule{{Limit: 1, Window: time.Second}}))
}

// TestVirtualTimeAndReset: the Virtual source reads Options.Now, not the
// runtime; Reset empties the windows, so the same instant admits again.
func TestVirtualTimeAndReset(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	rules := []rule.Rule{{Limit: 1, Window: time.Second}, {Limit: 1, Window: time.Second}}
	server := epoch
	rt := &stepRT{t: epoch - int64(time.Hour)} // a skewed caller clock, ignored
	l, err := New(c, rt, rules, Options{Key: "v", TimeSource: Virtual, Now: func() int64 { return server }})
	require.NoError(t, err)
	at, err := l.AcquireAt(ctx)
	require.NoError(t, err)
	assert.Equal(t, server, at)
	wait, _, _, err := l.try(ctx, "again", false)
	require.NoError(t, err)
	assert.Equal(t, time.Second, wait)
	require.NoError(t, Reset(ctx, c, "v", rules))
	wait, _, _, err = l.try(ctx, "after-reset", false)
	require.NoError(t, err, "a limiter that held admissions takes the reset for its state going on, not for a loss")
	assert.Zero(t, wait, "after Reset")
	fresh, err := New(c, rt, rules, Options{Key: "v", TimeSource: Virtual, Now: func() int64 { return server }})
	require.NoError(t, err)
	wait, _, _, err = fresh.try(ctx, "fresh", false)
	require.NoError(t, err)
	assert.Equal(t, time.Second, wait, "the call after the reset counts")
	assert.Equal(t, []int64{2, 2}, l.Stats().Records, "two records for each of the two rules given")
}
