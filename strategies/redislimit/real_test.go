package redislimit

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
)

func realClient(t *testing.T, s *redistest.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 16})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func clusterClient(t *testing.T, cl *redistest.Cluster) *redis.ClusterClient {
	t.Helper()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), PoolSize: 16})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestRealFixedInstants replays the fixed steps on a real server, whose Lua
// (the C interpreter, not miniredis' gopher-lua) may differ in how it reads
// and prints 16-digit microsecond times.
func TestRealFixedInstants(t *testing.T) {
	runFixedSteps(t, realClient(t, redistest.Start(t)))
}

// fleet runs 4 workers sharing one key under 10/100ms and 50/500ms on the
// real clock, 200 calls in all, with the server's clock, and checks the
// instants the script recorded. It takes about 2 s: the rules allow 100
// calls a second.
func fleet(t *testing.T, c redis.Scripter) {
	rules := []rule.Rule{{Limit: 10, Window: 100 * time.Millisecond}, {Limit: 50, Window: 500 * time.Millisecond}}
	const workers, calls = 4, 200
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var (
		mu        sync.Mutex
		recorded  []int64 // Redis TIME of each admission
		observed  []int64 // the caller's clock just after Acquire
		remaining atomic.Int64
		wg        sync.WaitGroup
		errs      = make(chan error, workers)
	)
	remaining.Store(calls)
	rt := clock.NewReal()
	for range workers {
		// One limiter per worker, as separate processes would have; exact
		// sets, so that the windows can fill to their limits (buckets give
		// up to one bucket's calls, and 50 is above rule.ExactUpTo).
		l, err := New(c, rt, rules, Options{Key: "fleet", Exact: true})
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for remaining.Add(-1) >= 0 {
				at, err := l.AcquireAt(ctx)
				now := time.Now().UnixNano()
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				recorded = append(recorded, at)
				observed = append(observed, now)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, recorded, calls, "calls recorded")
	slices.Sort(recorded)
	rep, err := checker.Check(recorded, checker.Config{Rules: rules})
	require.NoError(t, err)
	for i, rr := range rep.Rules {
		t.Logf("%v: %d violations, at most %d in one window", rules[i], rr.Violations, rr.MaxInWindow)
	}
	assert.Zero(t, rep.Violations(), "violations among the recorded sends")
	assert.Equal(t, int64(10), rep.Rules[0].MaxInWindow, "the 10/100ms windows fill")
	// A 500 ms window fills only where no worker's wake-up is late: on a
	// quiet machine every run fills it to 50, but under a full CI's load
	// (every core busy) runs reached 46 and 49. The 100 ms windows, which
	// the same script fills, stay asserted exact; this one is asserted
	// within a tenth, so that a limiter that gives away part of its
	// allowance still fails.
	assert.GreaterOrEqual(t, rep.Rules[1].MaxInWindow, int64(45), "the 50/500ms windows fill")
	// The callers' own clock adds a few µs of reply latency to each send,
	// which can land a send just inside a window the server saw it leave;
	// logged, not asserted, so that scheduling noise cannot fail the test.
	slices.Sort(observed)
	if rep, err := checker.Check(observed, checker.Config{Rules: rules}); err == nil {
		t.Logf("as the callers saw it: %d violations over %v", rep.Violations(), time.Duration(rep.Last-rep.First))
	}
}

func TestRealFleet(t *testing.T) {
	t.Parallel()
	fleet(t, realClient(t, redistest.Start(t)))
}

func TestRealCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t)
	c := clusterClient(t, cl)
	t.Run("one slot per limiter", func(t *testing.T) {
		l, err := New(c, clock.NewReal(), []rule.Rule{
			{Limit: 10, Window: time.Second}, {Limit: 500, Window: time.Minute}, {Limit: 10000, Window: 24 * time.Hour},
		}, Options{Key: "acme/prod"})
		require.NoError(t, err)
		slots := keySlots(t, c, l.script)
		require.Len(t, slots, 4, "the head and three rule keys")
		for i := range slots {
			require.Equal(t, slots[0], slots[i], "keys %v map to slots %v", l.script, slots)
		}
		// The same names without the tag spread over slots: the check can fail.
		untagged := keySlots(t, c, []string{"rlcheck:acme/prod:1s", "rlcheck:acme/prod:1m", "rlcheck:acme/prod:24h"})
		require.False(t, untagged[0] == untagged[1] && untagged[1] == untagged[2], "untagged keys share slot %d too; pick other names", untagged[0])
		require.NoError(t, l.Acquire(context.Background()), "acquire on the cluster")
	})
	t.Run("one slot under a prefix, through DialCluster", func(t *testing.T) {
		var dialled *redis.ClusterClient
		dialled, err := DialCluster(context.Background(), cl.Addrs(), 5*time.Second)
		require.NoError(t, err)
		defer dialled.Close()
		l, err := New(dialled, clock.NewReal(), []rule.Rule{
			{Limit: 10, Window: time.Second}, {Limit: 500, Window: time.Minute}, {Limit: 10000, Window: 24 * time.Hour},
		}, Options{Key: "acme/prod", Prefix: "myapp:"})
		require.NoError(t, err)
		slots := keySlots(t, dialled, l.script)
		require.Len(t, slots, 4, "the head and three rule keys")
		for i := range slots {
			require.Equal(t, slots[0], slots[i], "keys %v map to slots %v", l.script, slots)
		}
		require.NoError(t, l.Acquire(context.Background()), "acquire on the cluster")
		require.NoError(t, l.Reset(context.Background()), "reset on the cluster")
	})
	t.Run("script flush", func(t *testing.T) {
		testScriptFlush(t, c, clock.NewReal(), Server, scriptCache{
			flush: func(ctx context.Context) error {
				return c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
					return n.ScriptFlush(ctx).Err()
				})
			},
			cached: func(ctx context.Context, sha string) (bool, error) {
				n, err := c.MasterForKey(ctx, KeyFor("flush", time.Second))
				if err != nil {
					return false, err
				}
				return scriptCached(ctx, n, sha)
			},
		})
	})
	t.Run("fleet", func(t *testing.T) { fleet(t, c) })
}

func keySlots(t *testing.T, c *redis.ClusterClient, keys []string) []int64 {
	t.Helper()
	var slots []int64
	for _, k := range keys {
		s, err := c.ClusterKeySlot(context.Background(), k).Result()
		require.NoError(t, err)
		slots = append(slots, s)
	}
	return slots
}

// TestKeySlotsOnMiniredis runs the slot check without a real cluster, so it
// holds wherever the tests run.
func TestKeySlotsOnMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer c.Close()
	l, err := New(c, &stepRT{}, []rule.Rule{{Limit: 1, Window: time.Second}, {Limit: 2, Window: time.Minute}, {Limit: 3, Window: time.Hour}},
		Options{Key: "k"})
	require.NoError(t, err)
	var slots []int64
	for _, k := range l.script {
		s, err := c.ClusterKeySlot(context.Background(), k).Result()
		require.NoError(t, err)
		slots = append(slots, s)
	}
	require.Len(t, slots, 4, "the head and three rule keys")
	for i := range slots {
		assert.Equal(t, slots[0], slots[i], "keys %v map to slots %v", l.script, slots)
	}
}

func TestRealScriptFlush(t *testing.T) {
	c := realClient(t, redistest.Start(t))
	testScriptFlush(t, c, clock.NewReal(), Server, scriptCache{
		flush:  func(ctx context.Context) error { return c.ScriptFlush(ctx).Err() },
		cached: func(ctx context.Context, sha string) (bool, error) { return scriptCached(ctx, c, sha) },
	})
}

func TestRealWrongType(t *testing.T) {
	c := realClient(t, redistest.Start(t))
	ctx := context.Background()
	require.NoError(t, c.HSet(ctx, KeyFor("wt", time.Second), "f", "v").Err())
	l, err := New(c, clock.NewReal(), []rule.Rule{{Limit: 1, Window: time.Second}}, Options{Key: "wt"})
	require.NoError(t, err)
	err = l.Acquire(ctx)
	require.ErrorIs(t, err, ErrWrongType)
	assert.ErrorContains(t, err, "holds a hash")
}

// TestRealServerKilledMidRun kills the server while 4 workers wait on a
// binding rule: every worker must end with an error, long before its
// deadline, and no call that started after the kill may be admitted.
func TestRealServerKilledMidRun(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := realClient(t, s)
	rules := []rule.Rule{{Limit: 5, Window: 100 * time.Millisecond}}
	const deadline = 10 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var (
		killed   atomic.Bool
		admitted atomic.Int64
		wg       sync.WaitGroup
		errs     = make(chan error, 4)
	)
	for range 4 {
		l, err := New(c, clock.NewReal(), rules, Options{Key: "killed"})
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				startedAfterKill := killed.Load()
				err := l.Acquire(ctx)
				if err != nil {
					errs <- err
					return
				}
				if startedAfterKill {
					errs <- errors.New("a call that started after the kill was admitted")
					return
				}
				admitted.Add(1)
			}
		}()
	}
	for admitted.Load() < 20 {
		time.Sleep(10 * time.Millisecond)
	}
	s.Kill()
	killed.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NotErrorIs(t, err, context.DeadlineExceeded, "want an error about the lost server before the deadline")
		assert.True(t, strings.HasPrefix(err.Error(), "redislimit: "), "worker ended with %v; want a redislimit error", err)
		t.Logf("worker ended with: %v", err)
	}
}

// TestUnreachable: past a lazy New, a closed port fails at once; a peer
// that accepts but never answers fails when the caller's deadline ends.
// Nothing hangs.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	silent := ln.Addr().String()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // held open, never answered
		}
	}()
	t.Cleanup(func() { ln.Close() })
	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		return l.Addr().String()
	}()
	for _, tc := range []struct{ name, addr string }{{"closed port", closed}, {"silent peer", silent}} {
		t.Run(tc.name, func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: tc.addr})
			defer c.Close()
			l, err := New(c, clock.NewReal(), []rule.Rule{{Limit: 1, Window: time.Second}}, Options{Key: "down", Lazy: true})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- l.Acquire(ctx) }()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.True(t, strings.HasPrefix(err.Error(), "redislimit: "), "err = %v, want a redislimit error", err)
				t.Logf("%v", err)
			case <-time.After(30 * time.Second): // a hang, not a slow machine
				require.Fail(t, "Acquire hung past its deadline")
			}
		})
	}
}
