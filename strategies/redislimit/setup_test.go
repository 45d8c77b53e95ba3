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

// silentPeer returns a loopback address that accepts connections and
// never answers.
func silentPeer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, conn)
		}
	}()
	return ln.Addr().String()
}

// TestNewChecksTheServer: New refuses a client of a dead server with
// ErrUnreachable, and of a silent one with ErrTimeout within the call
// timeout, where it used to return a limiter whose first Acquire failed;
// Lazy skips the check for a service that starts before its Redis.
func TestNewChecksTheServer(t *testing.T) {
	rules := []rule.Rule{{Limit: 10, Window: time.Second}}
	dead := redis.NewClient(&redis.Options{Addr: closedPort(t)}) // go-redis' own retries
	t.Cleanup(func() { _ = dead.Close() })
	start := time.Now()
	l, err := New(dead, clock.NewReal(), rules, Options{Key: "k"})
	took := time.Since(start)
	require.ErrorIs(t, err, ErrUnreachable)
	assert.Less(t, took, time.Second, "at once, not after go-redis' retries (1.7 s)")
	assert.Nil(t, l)
	assert.ErrorContains(t, err, "redislimit: cannot reach Redis at 127.0.0.1:")
	assert.ErrorContains(t, err, "connection refused")

	silent := redis.NewClient(&redis.Options{Addr: silentPeer(t)})
	t.Cleanup(func() { _ = silent.Close() })
	start = time.Now()
	_, err = New(silent, clock.NewReal(), rules, Options{Key: "k", CallTimeout: 200 * time.Millisecond})
	require.ErrorIs(t, err, ErrTimeout)
	assert.Less(t, time.Since(start), 2*time.Second, "bounded by the call timeout")

	fast := redis.NewClient(&redis.Options{Addr: closedPort(t), MaxRetries: -1})
	t.Cleanup(func() { _ = fast.Close() })
	lazy, err := New(fast, clock.NewReal(), rules, Options{Key: "k", Lazy: true})
	require.NoError(t, err, "a lazy limiter does not ask")
	assert.ErrorIs(t, lazy.Acquire(context.Background()), ErrUnreachable, "nor admits")

	live, err := New(newClient(t), clock.NewReal(), rules, Options{Key: "k"})
	require.NoError(t, err)
	assert.NoError(t, live.Acquire(context.Background()))
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
