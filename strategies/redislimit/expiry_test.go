package redislimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
)

// sharedRuleSets are the rules of the limiters of four keys, two limiters
// (as two processes) a key: windows in common between keys, windows of
// their own, and limits that differ within a window. Limiters of one key
// keep one configuration (Options.Key).
var sharedRuleSets = [][]rule.Rule{
	{{Limit: 3, Window: 30 * time.Millisecond}, {Limit: 40, Window: 2 * time.Second}},
	{{Limit: 2, Window: 30 * time.Millisecond}},
	{{Limit: 6, Window: 300 * time.Millisecond}, {Limit: 30, Window: 2 * time.Second}},
	{{Limit: 50, Window: 5 * time.Second}, {Limit: 4, Window: 30 * time.Millisecond}},
}

// entry is one recorded call in one set.
type entry struct {
	key    string
	window time.Duration
	score  int64 // µs
	member string
}

// expiryWatch records what a limiter wrote, so that a test can ask Redis
// whether every entry still inside its window is still in its set.
type expiryWatch struct {
	entries []entry
}

func (w *expiryWatch) recorded(l *Limiter, at int64) {
	member := l.prefix + strconv.FormatUint(l.counter.Load(), 10)
	for i, k := range l.keys {
		win := time.Duration(ceilMicros(l.rules[i].Window)) * time.Microsecond
		w.entries = append(w.entries, entry{k, win, at / 1000, member})
	}
}

// store answers whether a set holds a member, and a key's expiry (negative
// when it has none).
type store interface {
	has(key, member string) (bool, error)
	ttl(key string) (time.Duration, error)
}

// check fails t when an entry inside its window at nowMicros is gone from
// its set, or when a set exists without an expiry; it forgets entries that
// have left their window.
func (w *expiryWatch) check(t *testing.T, s store, nowMicros int64, when string) {
	t.Helper()
	keep := w.entries[:0]
	seen := map[string]bool{}
	for _, e := range w.entries {
		if nowMicros-e.score >= e.window.Microseconds() {
			continue
		}
		keep = append(keep, e)
		ok, err := s.has(e.key, e.member)
		require.NoError(t, err, "%s: entry %s at %d µs is %d µs into its %v window but gone from %s",
			when, e.member, e.score, nowMicros-e.score, e.window, e.key)
		require.True(t, ok, "%s: entry %s at %d µs is %d µs into its %v window but gone from %s",
			when, e.member, e.score, nowMicros-e.score, e.window, e.key)
		if !seen[e.key] {
			seen[e.key] = true
			ttl, err := s.ttl(e.key)
			require.NoError(t, err)
			require.Positive(t, ttl, "%s: %s holds entries in their window but has no expiry", when, e.key)
		}
	}
	w.entries = keep
}

// miniStore reads miniredis directly, without a round trip per question.
type miniStore struct{ m *miniredis.Miniredis }

func (s miniStore) has(key, member string) (bool, error) {
	_, err := s.m.ZScore(key, member)
	return err == nil, err
}

func (s miniStore) ttl(key string) (time.Duration, error) {
	if !s.m.Exists(key) {
		return 0, fmt.Errorf("no key %s", key)
	}
	if d := s.m.TTL(key); d > 0 {
		return d, nil
	}
	return -1, nil
}

// realStore asks a server.
type realStore struct{ c *redis.Client }

func (s realStore) has(key, member string) (bool, error) {
	err := s.c.ZScore(context.Background(), key, member).Err()
	return err == nil, err
}

func (s realStore) ttl(key string) (time.Duration, error) {
	return s.c.PTTL(context.Background(), key).Result()
}

// TestExpiryKeepsEntriesInTheirWindow: limiters of four rule sets, two a
// key name, on a Redis whose clock drives both TIME and expiry.
// Calls come in bursts with pauses longer than the refresh lease and than
// the short windows, so keys expire, sets empty and keys are made anew.
// After every call, every entry still inside its window must be in its set,
// and every such set must have an expiry.
func TestExpiryKeepsEntriesInTheirWindow(t *testing.T) {
	t.Parallel()
	for _, lease := range []time.Duration{expiryLease, 20 * time.Millisecond} {
		t.Run(lease.String(), func(t *testing.T) {
			m, c := newMini(t)
			m.ClockTTL(true)
			rt := &stepRT{onAdvance: func(now int64) { m.SetTime(time.Unix(0, now)) }}
			rt.set(epoch)
			var lims []*Limiter
			for i := range 2 * len(sharedRuleSets) {
				key := fmt.Sprintf("shared%d", i/2)
				l, err := New(c, rt, sharedRuleSets[i/2], Options{Key: key, MemberPrefix: fmt.Sprintf("w%d:", i), Exact: true})
				require.NoError(t, err)
				l.setLease(lease)
				lims = append(lims, l)
			}
			r := rand.New(rand.NewPCG(uint64(lease), 7))
			w := &expiryWatch{}
			for step := range seeds(1000, 3000) {
				switch r.IntN(20) {
				case 0: // a pause past the lease and the short windows
					rt.set(rt.t + int64(time.Duration(500+r.IntN(3000))*time.Millisecond))
				case 1, 2, 3:
					rt.set(rt.t + int64(time.Duration(r.IntN(40))*time.Millisecond))
				default:
					rt.set(rt.t + int64(time.Duration(r.IntN(2000))*time.Microsecond))
				}
				l := lims[r.IntN(len(lims))]
				at, err := l.AcquireAt(context.Background())
				require.NoError(t, err)
				w.recorded(l, at)
				w.check(t, miniStore{m}, rt.t/1000, fmt.Sprintf("step %d", step))
			}
		})
	}
}

// TestRealExpiryKeepsEntriesInTheirWindow runs the same check on a real
// server, whose expiry runs on its own clock, with a lease of 50 ms so that
// keys come and go within about two seconds.
func TestRealExpiryKeepsEntriesInTheirWindow(t *testing.T) {
	// Not parallel: a 50 ms lease on the real clock, which a caller held up
	// by the package's other tests could outlast.
	c := realClient(t, redistest.Start(t))
	ctx := context.Background()
	var lims []*Limiter
	for i := range 2 * len(sharedRuleSets) {
		key := fmt.Sprintf("shared%d", i/2)
		l, err := New(c, clock.NewReal(), sharedRuleSets[i/2], Options{Key: key, MemberPrefix: fmt.Sprintf("w%d:", i), Exact: true})
		require.NoError(t, err)
		l.setLease(50 * time.Millisecond)
		lims = append(lims, l)
	}
	r := rand.New(rand.NewPCG(1, 2))
	w := &expiryWatch{}
	end := time.Now().Add(2 * time.Second)
	for step := 0; time.Now().Before(end); step++ {
		if r.IntN(25) == 0 {
			time.Sleep(time.Duration(60+r.IntN(100)) * time.Millisecond)
		}
		l := lims[r.IntN(len(lims))]
		at, err := l.AcquireAt(ctx)
		require.NoError(t, err)
		w.recorded(l, at)
		now, err := c.Time(ctx).Result()
		require.NoError(t, err)
		w.check(t, realStore{c}, now.UnixMicro(), fmt.Sprintf("step %d", step))
	}
}

// TestKeysNameTheirRules: every key of a limiter is in its key name's
// hash slot; the exact rules share one sorted set named by the longest of
// their windows, and each bucketed rule's state field in the head and its
// bucket hash are named by its window and bucket count, so limiters whose
// rules differ never read each other's counts as their own.
func TestKeysNameTheirRules(t *testing.T) {
	c := newClient(t)
	rules := []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 20, Window: time.Minute}, {Limit: 5000, Window: time.Hour}}
	l, err := New(c, &stepRT{}, rules, Options{Key: "acme"})
	require.NoError(t, err)
	require.Equal(t, []string{"rlcheck:{acme}", "rlcheck:{acme}:1m", "rlcheck:{acme}:1m", "rlcheck:{acme}:1h:b64"}, l.script)
	require.Contains(t, l.vals, "1h:b64")
	x, err := New(c, &stepRT{}, rules, Options{Key: "acme", Exact: true})
	require.NoError(t, err)
	require.Equal(t, []string{"rlcheck:{acme}", "rlcheck:{acme}:1h", "rlcheck:{acme}:1h", "rlcheck:{acme}:1h"}, x.script)
	require.NotContains(t, x.vals, "1h:b64", "exact rules read no head field")
}
