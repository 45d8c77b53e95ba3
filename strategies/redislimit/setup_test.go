package redislimit

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
)

// closedPort returns a loopback address nobody listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// TestDialClientReturnsTheClient: DialClient returns a *redis.Client a
// service can use for its own commands too, with the bounded options of
// ClientOptions, and refuses a dead server at once.
func TestDialClientReturnsTheClient(t *testing.T) {
	opt, err := ClientOptions("redis://127.0.0.1:6379/2", 0)
	require.NoError(t, err)
	assert.Equal(t, DefaultTimeout, opt.ReadTimeout)
	assert.True(t, opt.ContextTimeoutEnabled)
	assert.Equal(t, 2, opt.DB)
	_, err = ClusterOptions(nil, 0)
	assert.ErrorContains(t, err, "no cluster addresses")

	_, err = DialClient(context.Background(), "redis://"+closedPort(t)+"/0", 300*time.Millisecond)
	require.ErrorIs(t, err, ErrUnreachable)

	s := redistest.Start(t)
	var c *redis.Client
	c, err = DialClient(context.Background(), "redis://"+s.Addr+"/0", 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Set(context.Background(), "myapp:other", "v", 0).Err(), "the service's own command")
	l, err := New(c, clock.NewReal(), []rule.Rule{{Limit: 1, Window: time.Second}}, Options{Key: "dialled"})
	require.NoError(t, err)
	assert.NoError(t, l.Acquire(context.Background()))
}
