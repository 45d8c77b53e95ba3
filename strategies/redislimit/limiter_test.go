package redislimit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
)

const ms = int64(time.Millisecond)

// fixedSteps are single script runs at chosen instants (ns after epoch)
// under the rules 2/1s and 4/10s.
var fixedSteps = []struct {
	name string
	at   int64
	wait time.Duration
	rule int // binding rule when wait > 0
}{
	{"first", 0, 0, 0},
	{"a tie at the same instant", 0, 0, 0},
	{"1s rule full", 500 * ms, 500 * time.Millisecond, 0},
	{"one ns before the boundary still waits", 1000*ms - 1, time.Microsecond, 0},
	{"exactly W later is a new window", 1000 * ms, 0, 0},
	{"a second call at that instant", 1000 * ms, 0, 0},
	{"both full: the longest wait wins", 1500 * ms, 8500 * time.Millisecond, 1},
	{"the 10s rule lets go at exactly 10s", 10000 * ms, 0, 0},
	{"a second call at 10s", 10000 * ms, 0, 0},
	{"equal waits: the first rule is named", 10000 * ms, time.Second, 0},
}

var fixedRules = []rule.Rule{{Limit: 2, Window: time.Second}, {Limit: 4, Window: 10 * time.Second}}

// runFixedSteps plays fixedSteps against c with the Client and Virtual
// sources, whose instants the test controls.
func runFixedSteps(t *testing.T, c redis.Scripter) {
	for _, src := range []TimeSource{Client, Virtual} {
		t.Run(src.String(), func(t *testing.T) {
			rt := &stepRT{}
			l, err := New(c, rt, fixedRules, Options{Key: "fixed-" + src.String(), TimeSource: src, MemberPrefix: "p:", MaxSkew: -1})
			require.NoError(t, err)
			for i, s := range fixedSteps {
				rt.t = epoch + s.at
				wait, _, bind, err := l.try(context.Background(), fmt.Sprintf("m%d", i), i%2 == 0)
				require.NoError(t, err, s.name)
				assert.Equal(t, s.wait, wait, s.name)
				if wait > 0 {
					assert.Equal(t, s.rule, bind, "%s: binding rule", s.name)
				}
			}
		})
	}
}

func TestTryAtFixedInstants(t *testing.T) {
	_, c := newMini(t)
	runFixedSteps(t, c)
}

// TestNanosecondsRoundSafely: a call at 1 ns past a µs is recorded at the
// next µs, so a call 1 s minus 1 ns later (a half-open violation) waits.
func TestNanosecondsRoundSafely(t *testing.T) {
	_, c := newMini(t)
	rt := &stepRT{t: epoch + 1}
	l, err := New(c, rt, []rule.Rule{{Limit: 1, Window: time.Second}}, Options{Key: "k", TimeSource: Client, MaxSkew: -1})
	require.NoError(t, err)
	require.NoError(t, l.Acquire(context.Background()))
	rt.t = epoch + 1000*ms
	at, err := l.AcquireAt(context.Background())
	require.NoError(t, err)
	want := epoch + 1000*ms + 1000
	assert.Equal(t, want-epoch, at-epoch, "second call")
	assert.Equal(t, want-epoch, rt.t-epoch, "clock after the second call")
}

func TestServerTimeIsRedisTIME(t *testing.T) {
	m, c := newMini(t)
	at := time.Unix(0, epoch+123_456_789)
	m.SetTime(at)
	l, err := New(c, &stepRT{}, []rule.Rule{{Limit: 1, Window: time.Second}}, Options{Key: "k"})
	require.NoError(t, err)
	got, err := l.AcquireAt(context.Background())
	require.NoError(t, err)
	assert.Equal(t, at.UnixMicro()*1000, got, "recorded at TIME in µs")
	// The score is the exact 16-digit microsecond, not a rounded double.
	assert.ElementsMatch(t, []string{l.Keys()[0], l.script[0]}, m.Keys(), "the rule's set and the head")
	members, err := m.ZMembers(l.Keys()[0])
	require.NoError(t, err)
	require.Len(t, members, 1)
	s, _ := m.ZScore(l.Keys()[0], members[0])
	assert.Equal(t, at.UnixMicro(), int64(s), "score")
}

func TestAllOrNone(t *testing.T) {
	m, c := newMini(t)
	rt := &stepRT{t: epoch}
	rules := []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 1, Window: time.Minute}}
	l, err := New(c, rt, rules, Options{Key: "k", TimeSource: Client, MemberPrefix: "p:", MaxSkew: -1})
	require.NoError(t, err)
	require.NoError(t, l.Acquire(context.Background()))
	// The minute rule is full: the denied call must leave the second rule's
	// set alone too.
	wait, _, _, err := l.try(context.Background(), "denied", false)
	require.NoError(t, err)
	require.Equal(t, time.Minute, wait)
	for _, k := range l.Keys() {
		n, _ := m.ZMembers(k)
		assert.Len(t, n, 1, "%s holds %v, want only the admitted call", k, n)
		assert.Positive(t, m.TTL(k), "%s has no expiry", k)
	}
}

func TestKeysShareOneHashTag(t *testing.T) {
	l, err := New(newClient(t), &stepRT{}, []rule.Rule{{Limit: 10, Window: time.Second}, {Limit: 500, Window: time.Minute}, {Limit: 7, Window: time.Second}},
		Options{Key: "acme:prod"})
	require.NoError(t, err)
	keys := l.Keys()
	require.Len(t, keys, 2, "rules with one window must share one key")
	require.Equal(t, 7, l.Rules()[0].Limit, "the strictest limit of a window must win")
	for _, k := range keys {
		assert.True(t, strings.HasPrefix(k, "rlcheck:{acme:prod}:"), "key %q lacks the hash tag", k)
	}
}

func TestBadOptions(t *testing.T) {
	c := newClient(t)
	one := []rule.Rule{{Limit: 1, Window: time.Second}}
	cases := []struct {
		name  string
		rules []rule.Rule
		opts  Options
		isKey bool
	}{
		{"empty key", one, Options{}, true},
		{"too long key", one, Options{Key: strings.Repeat("k", MaxKeyLen+1)}, true},
		{"brace", one, Options{Key: "a}b"}, true},
		{"control", one, Options{Key: "a\nb"}, true},
		{"no rules", nil, Options{Key: "k"}, false},
		{"zero limit", []rule.Rule{{Limit: 0, Window: time.Second}}, Options{Key: "k"}, false},
		{"unknown source", one, Options{Key: "k", TimeSource: 9}, false},
	}
	for _, tc := range cases {
		_, err := New(c, &stepRT{}, tc.rules, tc.opts)
		require.Error(t, err, tc.name)
		assert.Equal(t, tc.isKey, errors.Is(err, ErrKey), "%s: %v", tc.name, err)
	}
	_, err := New(c, &stepRT{}, one, Options{Key: strings.Repeat("k", MaxKeyLen)})
	assert.NoError(t, err, "longest allowed key")
}

func TestWrongTypeKey(t *testing.T) {
	m, c := newMini(t)
	rules := []rule.Rule{{Limit: 1, Window: time.Second}, {Limit: 5, Window: time.Minute}}
	require.NoError(t, m.Set(KeyFor("k", time.Minute), "not a set"))
	l, err := New(c, &stepRT{t: epoch}, rules, Options{Key: "k", TimeSource: Client, MaxSkew: -1})
	require.NoError(t, err)
	err = l.Acquire(context.Background())
	require.ErrorIs(t, err, ErrWrongType)
	assert.ErrorContains(t, err, KeyFor("k", time.Minute))
	assert.False(t, m.Exists(KeyFor("k", time.Second)), "the call was recorded in the other rule despite the error")
}

func TestScriptFlushMidRun(t *testing.T) {
	_, c := newMini(t)
	testScriptFlush(t, c, &stepRT{t: epoch}, Client, scriptCache{
		flush:  func(ctx context.Context) error { return c.ScriptFlush(ctx).Err() },
		cached: func(ctx context.Context, sha string) (bool, error) { return scriptCached(ctx, c, sha) },
	})
}

// scriptCache flushes, and looks into, the script cache of the server that
// holds the test's keys.
type scriptCache struct {
	flush  func(context.Context) error
	cached func(ctx context.Context, sha string) (bool, error)
}

func scriptCached(ctx context.Context, c redis.Scripter, sha string) (bool, error) {
	ok, err := c.ScriptExists(ctx, sha).Result()
	if err != nil || len(ok) != 1 {
		return false, err
	}
	return ok[0], nil
}

// testScriptFlush drops the server's script cache in the middle of a run:
// EVALSHA then fails with NOSCRIPT and the call must go through EVAL.
func testScriptFlush(t *testing.T, c redis.Scripter, rt clock.Runtime, src TimeSource, sc scriptCache) {
	t.Helper()
	ctx := context.Background()
	l, err := New(c, rt, []rule.Rule{{Limit: 1000, Window: time.Second}}, Options{Key: "flush", TimeSource: src, MaxSkew: -1})
	require.NoError(t, err)
	for i := range 10 {
		if i == 4 {
			require.NoError(t, sc.flush(ctx))
			ok, err := sc.cached(ctx, l.admit.Hash())
			require.NoError(t, err)
			require.False(t, ok, "script still cached after SCRIPT FLUSH")
		}
		require.NoError(t, l.Acquire(ctx), "call %d", i)
	}
	ok, err := sc.cached(ctx, l.admit.Hash())
	require.NoError(t, err)
	assert.True(t, ok, "script not loaded again after the flush")
}

func TestCancelledCallerRecordsNothing(t *testing.T) {
	m, c := newMini(t)
	rt := &stepRT{t: epoch}
	l, err := New(c, rt, []rule.Rule{{Limit: 1, Window: time.Second}}, Options{Key: "k", TimeSource: Client, MaxSkew: -1})
	require.NoError(t, err)
	require.NoError(t, l.Acquire(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, l.Acquire(ctx), context.Canceled)
	n, _ := m.ZMembers(l.Keys()[0])
	assert.Len(t, n, 1, "members")
	assert.Equal(t, int64(1), l.Stats().Records[0], "records")
}

// TestSweepBoundsMemory: entries are kept for the longest exact window
// plus max(that window, 1 s), for callers whose instants arrive out of
// order, and then swept, at the latest one call in sweepEvery, whether the rule fills
// or not.
func TestSweepBoundsMemory(t *testing.T) {
	m, c := newMini(t)
	rt := &stepRT{t: epoch}
	rules := []rule.Rule{{Limit: 1000, Window: time.Second}, {Limit: 2, Window: 10 * time.Millisecond}}
	l, err := New(c, rt, rules, Options{Key: "sweep", TimeSource: Client, MaxSkew: -1, Exact: true})
	require.NoError(t, err)
	const step = 100 * time.Millisecond
	for range 200 {
		rt.t += int64(step)
		require.NoError(t, l.Acquire(context.Background()))
	}
	// The rules share one set, kept for the longer window.
	require.Equal(t, l.Keys()[0], l.Keys()[1])
	got, _ := m.ZMembers(l.Keys()[0])
	kept := rules[0].Window + max(rules[0].Window, time.Second)
	assert.GreaterOrEqual(t, len(got), int((rules[0].Window+step-1)/step), "entries in the set")
	assert.LessOrEqual(t, len(got), int(kept/step)+sweepEvery, "entries in the set")
}

func TestParseTimeSource(t *testing.T) {
	for _, src := range []TimeSource{Server, Client, Virtual} {
		got, err := ParseTimeSource(src.String())
		require.NoError(t, err)
		assert.Equal(t, src, got)
	}
	_, err := ParseTimeSource("ntp")
	assert.Error(t, err, "ParseTimeSource(ntp)")
}

// slowScripter answers every script call after a wall-clock pause, as a
// server in a paused or starved process does.
type slowScripter struct {
	redis.Scripter
	pause time.Duration
}

func (s slowScripter) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	time.Sleep(s.pause)
	return s.Scripter.EvalSha(ctx, sha, keys, args...)
}

func (s slowScripter) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	time.Sleep(s.pause)
	return s.Scripter.Eval(ctx, script, keys, args...)
}

// TestInProcessHasNoWallClockBound: a call slower than CallTimeout fails
// with ErrTimeout, unless the server is in process, where a simulation on
// virtual time must not fail because the wall clock moved on.
func TestInProcessHasNoWallClockBound(t *testing.T) {
	c := slowScripter{newClient(t), 40 * time.Millisecond}
	rules := []rule.Rule{{Limit: 5, Window: time.Second}}
	for _, in := range []bool{false, true} {
		l, err := New(c, &stepRT{t: epoch}, rules, Options{Key: fmt.Sprintf("in-%v", in), CallTimeout: 5 * time.Millisecond, InProcess: in})
		require.NoError(t, err)
		err = l.Acquire(context.Background())
		if in {
			assert.NoError(t, err, "in process")
		} else {
			assert.ErrorIs(t, err, ErrTimeout, "over a network")
		}
	}
}
