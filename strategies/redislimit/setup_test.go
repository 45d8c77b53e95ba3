package redislimit

import (
	"context"
	"fmt"
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
	t.Parallel()
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

// TestPrefixNamesEveryKey: with Options.Prefix every key the limiter and
// its Reset touch starts with it, the key name still the hash tag that
// puts them in one slot; a prefix with a brace is refused.
func TestPrefixNamesEveryKey(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	rules := []rule.Rule{{Limit: 2, Window: time.Second}, {Limit: 500, Window: time.Minute}, {Limit: 10000, Window: 24 * time.Hour}}
	// Both calls at one instant: on the real clock they may straddle an
	// edge of the minute's buckets, which writes its key too.
	rt := &stepRT{t: epoch}
	l, err := New(c, rt, rules, Options{Key: "acme-api", Prefix: "myapp:", TimeSource: Virtual})
	require.NoError(t, err)
	assert.Equal(t, "myapp:{acme-api}", l.Head())
	assert.Equal(t, []string{"myapp:{acme-api}:1s", "myapp:{acme-api}:1m:b64", "myapp:{acme-api}:24h:b64"}, l.Keys())
	for range 2 {
		require.NoError(t, l.Acquire(ctx))
	}
	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"myapp:{acme-api}", "myapp:{acme-api}:1s"}, keys, "every key written")
	var slots []int64
	for _, k := range append([]string{l.Head()}, l.Keys()...) {
		s, err := c.ClusterKeySlot(ctx, k).Result()
		require.NoError(t, err)
		slots = append(slots, s)
	}
	for i := range slots {
		assert.Equal(t, slots[0], slots[i], "one slot")
	}

	other, err := New(c, rt, rules, Options{Key: "acme-api", TimeSource: Virtual})
	require.NoError(t, err)
	require.NoError(t, other.Acquire(ctx), "the default prefix is another budget")
	require.NoError(t, l.Reset(ctx))
	keys, err = c.Keys(ctx, "myapp:*").Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"myapp:{acme-api}"}, keys, "Reset left only a fresh head")
	require.NoError(t, l.Acquire(ctx), "room again after Reset")
	n, err := c.ZCard(ctx, "rlcheck:{acme-api}:1s").Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the other prefix's keys untouched")

	for _, bad := range []string{"my{app}:", "a\nb"} {
		_, err = New(c, clock.NewReal(), rules, Options{Key: "acme-api", Prefix: bad})
		assert.ErrorIs(t, err, ErrKey, "%q", bad)
	}
}

// TestRealPrefixUnderACL: a Redis user allowed only the keys ~myapp:* runs
// a limiter of Prefix "myapp:", and its Reset, and is refused the default
// prefix's keys: the ACL docs/redis.md shows is enough.
func TestRealPrefixUnderACL(t *testing.T) {
	s := redistest.Start(t)
	admin := realClient(t, s)
	ctx := context.Background()
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "myapp", "on", ">secret", "resetkeys", "~myapp:*",
		"resetchannels", "-@all", "+@read", "+@write", "+@scripting", "+ping", "+time").Err())
	c, err := DialClient(ctx, fmt.Sprintf("redis://myapp:secret@%s/0", s.Addr), 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	rules := []rule.Rule{{Limit: 2, Window: time.Second}, {Limit: 500, Window: time.Minute}}
	l, err := New(c, clock.NewReal(), rules, Options{Key: "acme-api", Prefix: "myapp:"})
	require.NoError(t, err)
	for range 2 {
		require.NoError(t, l.Acquire(ctx))
	}
	require.NoError(t, l.Reset(ctx))
	require.NoError(t, l.Acquire(ctx))

	dflt, err := New(c, clock.NewReal(), rules, Options{Key: "acme-api"})
	require.NoError(t, err, "the PING is allowed")
	err = dflt.Acquire(ctx)
	require.Error(t, err)
	assert.ErrorContains(t, err, "NOPERM")
}
