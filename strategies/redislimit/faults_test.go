package redislimit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
)

// workersUntilError runs 4 limiters, as 4 processes would have, calling
// Acquire without a deadline of their own; after 20 admissions it calls
// fault, and returns how long after it every worker had ended and with
// what.
func workersUntilError(t *testing.T, c redis.Scripter, opts Options, fault func()) (time.Duration, []error) {
	t.Helper()
	rules := []rule.Rule{{Limit: 5, Window: 100 * time.Millisecond}}
	var (
		admitted atomic.Int64
		wg       sync.WaitGroup
		errs     = make(chan error, 4)
	)
	for range 4 {
		l, err := New(c, clock.NewReal(), rules, opts)
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if err := l.Acquire(context.Background()); err != nil {
					errs <- err
					return
				}
				admitted.Add(1)
			}
		}()
	}
	for admitted.Load() < 20 {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	fault()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "workers still waiting 10 s after the fault")
	}
	took := time.Since(start)
	close(errs)
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return took, out
}

// TestDeadlines: a server that stops answering (SIGSTOP) or dies ends every
// caller's Acquire with a clear error within the deadline plus a second,
// even though no caller set a deadline of its own, on a client made by
// Dial and on one with no timeouts at all.
func TestDeadlines(t *testing.T) {
	t.Parallel()
	const timeout, call = 200 * time.Millisecond, 500 * time.Millisecond
	s := redistest.Start(t)
	cl := redistest.StartCluster(t)
	// Dial's first PING has the short timeout under test: on a loaded
	// machine it may miss it before any fault, so the dial is tried again.
	dial := func(t *testing.T, url string, addrs []string) redis.Scripter {
		var err error
		for range 5 {
			var c Conn
			if c, err = Dial(context.Background(), url, addrs, timeout); err == nil {
				t.Cleanup(func() { _ = c.Close() })
				return c
			}
		}
		require.NoError(t, err)
		return nil
	}
	dialed := func(t *testing.T) redis.Scripter { return dial(t, "redis://"+s.Addr+"/0", nil) }
	dialedCluster := func(t *testing.T) redis.Scripter { return dial(t, "", cl.Addrs()) }
	// The node that holds the keys of limiter key k.
	nodeOf := func(t *testing.T, k string) *redistest.Server {
		slot, err := redistest.Command(cl.Nodes[0].Addr, time.Second, "CLUSTER", "KEYSLOT", KeyFor(k, time.Second))
		require.NoError(t, err)
		return clusterOwner(t, cl, slot)
	}
	cases := []struct {
		name     string
		client   func(*testing.T) redis.Scripter
		opts     Options
		deadline time.Duration
		fault    func(t *testing.T, key string) func()
		want     error // nil: any redislimit error
	}{
		{"paused server, client from Dial", dialed, Options{CallTimeout: -1}, 2*timeout + 100*time.Millisecond,
			func(t *testing.T, _ string) func() { return func() { s.Pause(t) } }, ErrTimeout},
		// On the caller's goroutine: the call timeout ends the wait before
		// the client's read timeouts do.
		{"paused server, client with context timeouts, CallTimeout", func(t *testing.T) redis.Scripter {
			c := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: time.Hour, WriteTimeout: time.Hour, ContextTimeoutEnabled: true})
			t.Cleanup(func() { _ = c.Close() })
			return c
		}, Options{CallTimeout: call}, call,
			func(t *testing.T, _ string) func() { return func() { s.Pause(t) } }, ErrTimeout},
		{"paused server, client without timeouts, CallTimeout", func(t *testing.T) redis.Scripter {
			c := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: -1, WriteTimeout: -1, DialTimeout: time.Hour})
			t.Cleanup(func() { _ = c.Close() })
			return c
		}, Options{CallTimeout: call}, call,
			func(t *testing.T, _ string) func() { return func() { s.Pause(t) } }, ErrTimeout},
		{"paused cluster node, client from Dial", dialedCluster, Options{CallTimeout: call}, call,
			func(t *testing.T, k string) func() { n := nodeOf(t, k); return func() { n.Pause(t) } }, ErrTimeout},
		{"killed cluster node, client from Dial", dialedCluster, Options{CallTimeout: call}, call,
			func(t *testing.T, k string) func() { n := nodeOf(t, k); return func() { n.Kill() } }, nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Key = fmt.Sprintf("deadline-%d", i)
			c := tc.client(t)
			fault := tc.fault(t, opts.Key)
			took, errs := workersUntilError(t, c, opts, fault)
			t.Logf("all 4 workers ended %v after the fault", took.Round(time.Millisecond))
			assert.LessOrEqual(t, took, tc.deadline+time.Second, "workers ended after the deadline plus a second")
			require.Len(t, errs, 4)
			for _, err := range errs {
				if tc.want != nil {
					assert.ErrorIs(t, err, tc.want)
				}
				assert.True(t, strings.HasPrefix(err.Error(), "redislimit: "), err.Error())
				assert.NotErrorIs(t, err, context.DeadlineExceeded, "a caller's own deadline was not involved: %v", err)
			}
			t.Logf("e.g. %v", errs[0])
			s.Resume(t)
		})
	}
}

// clusterOwner returns the node of cl that serves slot.
func clusterOwner(t *testing.T, cl *redistest.Cluster, slot string) *redistest.Server {
	t.Helper()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	defer c.Close()
	slots, err := c.ClusterSlots(context.Background()).Result()
	require.NoError(t, err)
	var n int
	_, err = fmt.Sscan(slot, &n)
	require.NoError(t, err)
	for _, r := range slots {
		if n >= r.Start && n <= r.End {
			for _, node := range cl.Nodes {
				if node.Addr == r.Nodes[0].Addr {
					return node
				}
			}
		}
	}
	require.FailNow(t, "no node serves slot "+slot)
	return nil
}

// TestDialTimeouts: every client Dial makes has its dial, read, write and
// pool deadlines set, and one retry.
func TestDialTimeouts(t *testing.T) {
	s := redistest.Start(t)
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{"default", 0, DefaultTimeout},
		{"given", 250 * time.Millisecond, 250 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Dial(context.Background(), "redis://"+s.Addr+"/0", nil, tc.timeout)
			require.NoError(t, err)
			defer c.Close()
			o := c.(*redis.Client).Options()
			assert.Equal(t, tc.want, o.DialTimeout, "dial")
			assert.Equal(t, tc.want, o.ReadTimeout, "read")
			assert.Equal(t, tc.want, o.WriteTimeout, "write")
			assert.Equal(t, tc.want, o.PoolTimeout, "pool")
			assert.Equal(t, 1, o.MaxRetries)
			assert.True(t, o.ContextTimeoutEnabled, "the context's deadline bounds every wait")
			assert.True(t, boundsWaits(c), "limiters run the script on the caller's goroutine")
		})
	}
}

// TestRetryAfterPause: the server stalls mid-run for longer than the
// client's read timeout. go-redis then retries each script run on another
// pooled connection; when the server resumes, the first attempt records
// the call and a retry finds that record. The retry must report it, not a
// member clash. Calls whose every attempt timed out may fail (and may
// have spent capacity), but none may fail on its own member, none may be
// recorded twice, and the records keep every rule.
func TestRetryAfterPause(t *testing.T) {
	t.Parallel()
	rules := []rule.Rule{{Limit: 10, Window: 100 * time.Millisecond}, {Limit: 1000, Window: time.Minute}}
	cases := []struct {
		name   string
		source TimeSource
		prefix bool // an explicit MemberPrefix per worker
		pause  time.Duration
	}{
		{"server time, random prefix", Server, false, 300 * time.Millisecond},
		{"server time, given prefix", Server, true, 300 * time.Millisecond},
		{"client time, given prefix", Client, true, 300 * time.Millisecond},
		{"server time, longer pause", Server, false, 500 * time.Millisecond},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Each case pauses a server of its own, so the cases run side
			// by side.
			t.Parallel()
			s := redistest.Start(t)
			// Idle pooled connections to retry on: a new connection would
			// stall in its handshake, which go-redis does not retry.
			c := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: 200 * time.Millisecond,
				MaxRetries: 5, MinRetryBackoff: 20 * time.Millisecond, MaxRetryBackoff: 50 * time.Millisecond,
				PoolSize: 32, MinIdleConns: 16})
			t.Cleanup(func() { _ = c.Close() })
			key := fmt.Sprintf("retry-%d", i)
			var (
				mu       sync.Mutex
				recorded []int64
				timeouts int
				errs     []error
				admitted atomic.Int64
				wg       sync.WaitGroup
			)
			stop := time.Now().Add(1500 * time.Millisecond)
			for w := range 4 {
				opts := Options{Key: key, TimeSource: tc.source, CallTimeout: 10 * time.Second, Exact: true}
				if tc.prefix {
					opts.MemberPrefix = fmt.Sprintf("w%d:", w)
				}
				l, err := New(c, clock.NewReal(), rules, opts)
				require.NoError(t, err)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(stop) {
						at, err := l.AcquireAt(context.Background())
						mu.Lock()
						switch {
						case err == nil:
							recorded = append(recorded, at)
							admitted.Add(1)
						case errors.Is(err, ErrTimeout):
							timeouts++
						default:
							errs = append(errs, err)
						}
						mu.Unlock()
					}
				}()
			}
			for admitted.Load() < 20 {
				time.Sleep(5 * time.Millisecond)
			}
			s.Pause(t)
			time.Sleep(tc.pause)
			s.Resume(t)
			wg.Wait()
			for _, err := range errs {
				assert.NotErrorIs(t, err, ErrMemberClash, "a retry took its own record for a clash")
				assert.NoError(t, err, "a call failed on something other than the pause")
			}
			slices.Sort(recorded)
			rep, err := checker.Check(recorded, checker.Config{Rules: rules})
			require.NoError(t, err)
			assert.Zero(t, rep.Violations(), "violations among the records")
			if tc.source == Server {
				// Scripts run one at a time and each takes microseconds, so
				// no two read the same TIME: equal record times are one call
				// reported twice. Under Client time two workers can record
				// in the same microsecond (one CI run did), and the counts
				// below are the check.
				assert.Len(t, slices.Compact(slices.Clone(recorded)), len(recorded), "a record reported twice")
			}
			n, err := c.ZCard(context.Background(), KeyFor(key, time.Minute)).Result()
			require.NoError(t, err)
			assert.GreaterOrEqual(t, n, int64(len(recorded)), "entries in Redis: at least one per admitted call")
			assert.LessOrEqual(t, n, int64(len(recorded)+timeouts), "entries in Redis: at most one more per failed call")
			t.Logf("%d calls admitted, %d timed out, %d other errors", len(recorded), timeouts, len(errs))
		})
	}
}

// TestMemberClash: limiters that share a key and a member prefix record
// the same members for different calls; that stays a configuration error.
func TestMemberClash(t *testing.T) {
	rules := []rule.Rule{{Limit: 5, Window: time.Second}}
	for _, tc := range []struct {
		name   string
		source TimeSource
		gap    time.Duration // between the two limiters' first calls
	}{
		{"client time", Client, time.Millisecond},
		{"virtual time", Virtual, time.Millisecond},
		{"server time, beyond a retry's reach", Server, 2 * DefaultCallTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, c := newMini(t)
			m.SetTime(time.Unix(0, epoch))
			rt := &stepRT{t: epoch, onAdvance: func(now int64) { m.SetTime(time.Unix(0, now)) }}
			opts := Options{Key: "k", TimeSource: tc.source, MemberPrefix: "same:", MaxSkew: -1}
			a, err := New(c, rt, rules, opts)
			require.NoError(t, err)
			b, err := New(c, rt, rules, opts)
			require.NoError(t, err)
			require.NoError(t, a.Acquire(context.Background()))
			rt.set(rt.t + int64(tc.gap))
			err = b.Acquire(context.Background())
			require.ErrorIs(t, err, ErrMemberClash)
			assert.ErrorContains(t, err, "distinct member prefixes")
		})
	}
}

// TestFarFutureEntries: an entry scored far in the future, as a broken
// clock or a hand-made ZADD leaves, is reported as corrupt state naming the
// key: at once when it decides the rule, within one sweep cue otherwise.
// Before, its wait overflowed into a negative duration (a busy loop of
// EVALSHA) or locked callers out for centuries.
func TestFarFutureEntries(t *testing.T) {
	c := realClient(t, redistest.Start(t))
	ctx := context.Background()
	for i, tc := range []struct {
		name  string
		score string // µs
		limit int
	}{
		{"1.2e16 deciding the rule", "12000000000000000", 1},
		{"1e17 deciding the rule", "100000000000000000", 1},
		{"1.2e16 among others", "12000000000000000", 100},
		{"1e17 among others", "100000000000000000", 100},
		{"an hour ahead", fmt.Sprint(time.Now().Add(time.Hour).UnixMicro()), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := fmt.Sprintf("future-%d", i)
			require.NoError(t, c.Do(ctx, "ZADD", KeyFor(key, time.Second), tc.score, "bogus").Err())
			l, err := New(c, clock.NewReal(), []rule.Rule{{Limit: tc.limit, Window: time.Second}}, Options{Key: key, Exact: true})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			for range sweepEvery {
				if err = l.Acquire(ctx); err != nil {
					break
				}
			}
			require.ErrorIs(t, err, ErrCorrupt)
			assert.ErrorContains(t, err, KeyFor(key, time.Second))
			assert.ErrorContains(t, err, tc.score)
			t.Log(err)
		})
	}
}

// TestNearFutureWaitIsBounded: an entry a little ahead, within the
// tolerance, makes the caller wait until it leaves, never longer than its
// window plus the tolerance, and never a negative wait.
func TestNearFutureWaitIsBounded(t *testing.T) {
	m, c := newMini(t)
	m.SetTime(time.Unix(0, epoch))
	rt := &stepRT{t: epoch}
	ahead := 30 * time.Second
	require.NoError(t, c.ZAdd(context.Background(), KeyFor("near", time.Second), redis.Z{Score: float64((epoch + int64(ahead)) / 1000), Member: "x"}).Err())
	l, err := New(c, rt, []rule.Rule{{Limit: 1, Window: time.Second}}, Options{Key: "near"})
	require.NoError(t, err)
	wait, _, _, err := l.try(context.Background(), "m", false)
	require.NoError(t, err)
	assert.Equal(t, ahead+time.Second, wait)
	assert.LessOrEqual(t, wait, l.maxWait)
}

// TestClientSkew: under Client time the script compares the caller's clock
// with Redis TIME and refuses a call beyond the tolerance, naming the skew.
func TestClientSkew(t *testing.T) {
	c := realClient(t, redistest.Start(t))
	for i, tc := range []struct {
		name    string
		source  TimeSource
		offset  time.Duration
		maxSkew time.Duration
		refused string // the skew the error names, empty when admitted
	}{
		{"1000 h ahead", Client, 1000 * time.Hour, 0, `(3599999|3600000)\d{6} µs ahead of`},
		{"1000 h behind", Client, -1000 * time.Hour, 0, `(3599999|3600000)\d{6} µs behind`},
		{"3 s ahead, default tolerance", Client, 3 * time.Second, 0, `(2|3)\d{6} µs ahead of`},
		{"3 s ahead, 5 s allowed", Client, 3 * time.Second, 5 * time.Second, ""},
		{"within the default tolerance", Client, 200 * time.Millisecond, 0, ""},
		{"1000 h ahead, check off", Client, 1000 * time.Hour, -1, ""},
		{"virtual time is never compared", Virtual, 1000 * time.Hour, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &stepRT{t: time.Now().Add(tc.offset).UnixNano()}
			l, err := New(c, rt, []rule.Rule{{Limit: 5, Window: time.Second}}, Options{Key: fmt.Sprintf("skew-%d", i), TimeSource: tc.source, MaxSkew: tc.maxSkew})
			require.NoError(t, err)
			err = l.Acquire(context.Background())
			if tc.refused == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrSkew)
			assert.Regexp(t, tc.refused, err.Error())
			n, zerr := c.Exists(context.Background(), l.Keys()[0]).Result()
			require.NoError(t, zerr)
			assert.Zero(t, n, "a refused call recorded something")
			t.Log(err)
		})
	}
}

// TestEvictionWarning: a maxmemory-policy that may evict the limiter's keys
// is worth a warning; noeviction, a server that refuses CONFIG and
// miniredis are not.
func TestEvictionWarning(t *testing.T) {
	s := redistest.Start(t)
	c := realClient(t, s)
	ctx := context.Background()
	for _, policy := range []string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
		t.Run(policy, func(t *testing.T) {
			require.NoError(t, c.ConfigSet(ctx, "maxmemory-policy", policy).Err())
			w := Warnings(ctx, c)
			if policy == "noeviction" {
				assert.Empty(t, w)
				return
			}
			require.Len(t, w, 1)
			assert.Contains(t, w[0], "maxmemory-policy is "+policy)
			assert.Contains(t, w[0], "evict")
		})
	}
	t.Run("CONFIG disabled", func(t *testing.T) {
		c := realClient(t, redistest.Start(t, `rename-command CONFIG ""`, "maxmemory-policy allkeys-lru"))
		_, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
		require.Error(t, err, "CONFIG still answers")
		assert.Empty(t, Warnings(ctx, c))
	})
	t.Run("miniredis", func(t *testing.T) {
		assert.Empty(t, Warnings(ctx, newClient(t)))
	})
}

// TestStateLost: the limiter's state vanishing from Redis while it holds
// recent admissions is reported, and the limiter then refuses calls until
// its window has passed since it found the loss: an admission on the
// emptied windows could overfill them. The limiter idles three leases
// before the fault: its calls are still in the window, so the loss is
// found however long ago the keys' expiry was last refreshed (a limiter
// once counted on its state for one lease after a refresh only, and an
// emptied window then went unnoticed).
func TestStateLost(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := realClient(t, s)
	ctx := context.Background()
	for i, tc := range []struct {
		name  string
		fault func(l *Limiter) error
	}{
		{"FLUSHALL", func(*Limiter) error { return c.FlushAll(ctx).Err() }},
		{"FLUSHDB", func(*Limiter) error { return c.FlushDB(ctx).Err() }},
		{"the head evicted", func(l *Limiter) error { return c.Del(ctx, l.script[0]).Err() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const window = 300 * time.Millisecond
			l, err := New(c, clock.NewReal(), []rule.Rule{{Limit: 100, Window: window}}, Options{Key: fmt.Sprintf("lost-%d", i)})
			require.NoError(t, err)
			l.setLease(20 * time.Millisecond) // the key's hold in Redis: its life, window + 2 leases
			for range 3 {
				require.NoError(t, l.Acquire(ctx))
			}
			time.Sleep(3 * 20 * time.Millisecond)
			require.NoError(t, tc.fault(l))
			// The hold starts when the script finds the loss, after this
			// instant and before the reply reaches the client.
			found := time.Now()
			err = l.Acquire(ctx)
			require.ErrorIs(t, err, ErrStateLost)
			assert.ErrorContains(t, err, l.script[0])
			t.Log(err)
			err = l.Acquire(ctx)
			require.ErrorIs(t, err, ErrStateLost, "the next call is refused too")
			assert.ErrorContains(t, err, "holds every limiter of the key back")
			for {
				err = l.Acquire(ctx)
				if !errors.Is(err, ErrStateLost) {
					break
				}
				require.Less(t, time.Since(found), 20*time.Second, "still refused: %v", err)
				time.Sleep(10 * time.Millisecond)
			}
			require.NoError(t, err, "the limiter starts afresh after the hold")
			assert.GreaterOrEqual(t, time.Since(found), window, "admitted before the window passed since the loss")
			assert.NoError(t, l.Acquire(ctx))
		})
	}
}

// TestRestartHoldsOff (#33.8): rule 10/10s, filled by one limiter and seen
// full by another, and redis-server restarted without its data or from a
// snapshot taken after 4 of the 10 admissions. No call is admitted after
// the restart: the first limiter's next call finds the loss (the
// head gone, or counting fewer calls than it saw), and from then on
// both limiters, and a new one of the same key, are refused for the
// window. Before, the limiter started afresh (10 more within a second) or
// did not notice the stale snapshot at all (6 more).
func TestRestartHoldsOff(t *testing.T) {
	for _, snapshot := range []bool{false, true} {
		t.Run(map[bool]string{false: "without persistence", true: "from a stale snapshot"}[snapshot], func(t *testing.T) {
			s := redistest.Start(t)
			c := realClient(t, s)
			ctx := context.Background()
			rules := []rule.Rule{{Limit: 10, Window: 10 * time.Second}}
			mk := func() *Limiter {
				l, err := New(c, clock.NewReal(), rules, Options{Key: "restart"})
				require.NoError(t, err)
				return l
			}
			a, b := mk(), mk()
			admitted := 0
			for i := range 10 {
				if snapshot && i == 4 {
					require.NoError(t, c.Save(ctx).Err())
				}
				require.NoError(t, a.Acquire(ctx))
				admitted++
			}
			short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			require.ErrorIs(t, b.Acquire(short), context.DeadlineExceeded, "b sees the rule full")
			cancel()
			s.Restart(t)
			var lost []error
			for range 5 {
				for _, l := range []*Limiter{a, b, mk()} {
					short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
					err := l.Acquire(short)
					cancel()
					switch {
					case err == nil:
						admitted++
					case errors.Is(err, ErrStateLost):
						lost = append(lost, err)
					default:
						t.Logf("not the loss: %v", err)
					}
				}
			}
			assert.Equal(t, 10, admitted, "admitted in one window of 10 s, across the restart")
			require.NotEmpty(t, lost)
			t.Log(lost[0])
			if snapshot {
				assert.ErrorContains(t, lost[0], "calls where this limiter saw 10")
			} else {
				assert.ErrorContains(t, lost[0], "is gone")
			}
		})
	}
}

// TestNoPasswordInErrors: a password given in a URL or a cluster seed never
// appears in an error of Dial.
func TestNoPasswordInErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())
	guarded := redistest.Start(t, "requirepass rightsecret")
	for _, tc := range []struct {
		name    string
		url     string
		cluster []string
	}{
		{"closed port", "redis://:secret@" + closed + "/0", nil},
		{"user and password", "redis://admin:secret@" + closed + "/0", nil},
		{"escaped password", "redis://:s%65cret@" + closed + "/0", nil},
		{"unparsable URL", "redis://:secret@127.0.0.1:notaport/0", nil},
		{"unparsable host", "redis://:secret@[::1/0", nil},
		{"wrong password", "redis://:secret@" + guarded.Addr + "/0", nil},
		{"cluster URL seed", "", []string{"redis://:secret@" + closed}},
		{"cluster seed with credentials", "", []string{"admin:secret@" + closed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Dial(context.Background(), tc.url, tc.cluster, 300*time.Millisecond)
			require.Error(t, err)
			require.Nil(t, c)
			assert.NotContains(t, err.Error(), "secret")
			assert.True(t, strings.HasPrefix(err.Error(), "redislimit: "), err.Error())
			t.Log(err)
		})
	}
	t.Run("Redact", func(t *testing.T) {
		for in, want := range map[string]string{
			"redis://:secret@h:1/0":  "redis://:xxxxx@h:1/0",
			"redis://u:secret@h:1/0": "redis://u:xxxxx@h:1/0",
			"redis://h:1/0":          "redis://h:1/0",
			"h:1":                    "h:1",
			"u:secret@h:1":           "xxxxx@h:1",
			"redis://:secret@[::1/0": "redis://xxxxx@[::1/0",
			"rediss://:a@b@h:1":      "rediss://:xxxxx@h:1",
		} {
			assert.Equal(t, want, Redact(in), in)
		}
	})
}
