package redislimit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
			l, err := New(c, rt, fixedRules, Options{Key: "fixed-" + src.String(), TimeSource: src, MemberPrefix: "p:"})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range fixedSteps {
				rt.t = epoch + s.at
				wait, _, bind, err := l.try(context.Background(), fmt.Sprintf("m%d", i), i%2 == 0)
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if wait != s.wait || (wait > 0 && bind != s.rule) {
					t.Errorf("%s: wait %v rule %d, want %v rule %d", s.name, wait, bind, s.wait, s.rule)
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
	l, err := New(c, rt, []rule.Rule{{Limit: 1, Window: time.Second}}, Options{Key: "k", TimeSource: Client})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	rt.t = epoch + 1000*ms
	at, err := l.AcquireAt(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := epoch + 1000*ms + 1000; at != want || rt.t != want {
		t.Fatalf("second call at %d (clock %d), want %d", at-epoch, rt.t-epoch, want-epoch)
	}
}

func TestServerTimeIsRedisTIME(t *testing.T) {
	m, c := newMini(t)
	at := time.Unix(0, epoch+123_456_789)
	m.SetTime(at)
	l, err := New(c, &stepRT{}, []rule.Rule{{Limit: 1, Window: time.Second}}, Options{Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.AcquireAt(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := at.UnixMicro() * 1000; got != want {
		t.Fatalf("recorded at %d, want %d (TIME in µs)", got, want)
	}
	// The score is the exact 16-digit microsecond, not a rounded double.
	if keys := m.Keys(); len(keys) != 2 || !slices.Contains(keys, l.marker) {
		t.Fatalf("keys %v, want the rule's set and its expiry marker", keys)
	}
	members, err := m.ZMembers(l.Keys()[0])
	if err != nil || len(members) != 1 {
		t.Fatalf("members %v, %v", members, err)
	}
	s, _ := m.ZScore(l.Keys()[0], members[0])
	if int64(s) != at.UnixMicro() {
		t.Fatalf("score %v, want %d", s, at.UnixMicro())
	}
}

func TestAllOrNone(t *testing.T) {
	m, c := newMini(t)
	rt := &stepRT{t: epoch}
	rules := []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 1, Window: time.Minute}}
	l, err := New(c, rt, rules, Options{Key: "k", TimeSource: Client, MemberPrefix: "p:"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The minute rule is full: the denied call must leave the second rule's
	// set alone too.
	if wait, _, _, err := l.try(context.Background(), "denied", false); err != nil || wait != time.Minute {
		t.Fatalf("wait %v, %v", wait, err)
	}
	for _, k := range l.Keys() {
		if n, _ := m.ZMembers(k); len(n) != 1 {
			t.Errorf("%s holds %v, want only the admitted call", k, n)
		}
		if ttl := m.TTL(k); ttl <= 0 {
			t.Errorf("%s has no expiry", k)
		}
	}
}

func TestKeysShareOneHashTag(t *testing.T) {
	l, err := New(newClient(t), &stepRT{}, []rule.Rule{{Limit: 10, Window: time.Second}, {Limit: 500, Window: time.Minute}, {Limit: 7, Window: time.Second}},
		Options{Key: "acme:prod"})
	if err != nil {
		t.Fatal(err)
	}
	keys := l.Keys()
	if len(keys) != 2 {
		t.Fatalf("keys %v: rules with one window must share one key", keys)
	}
	if l.Rules()[0].Limit != 7 {
		t.Fatalf("rules %v: the strictest limit of a window must win", l.Rules())
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "rlcheck:{acme:prod}:") {
			t.Errorf("key %q lacks the hash tag", k)
		}
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
		if err == nil || errors.Is(err, ErrKey) != tc.isKey {
			t.Errorf("%s: err %v", tc.name, err)
		}
	}
	if _, err := New(c, &stepRT{}, one, Options{Key: strings.Repeat("k", MaxKeyLen)}); err != nil {
		t.Errorf("longest allowed key: %v", err)
	}
}

func TestWrongTypeKey(t *testing.T) {
	m, c := newMini(t)
	rules := []rule.Rule{{Limit: 1, Window: time.Second}, {Limit: 5, Window: time.Minute}}
	if err := m.Set(KeyFor("k", time.Minute), "not a set"); err != nil {
		t.Fatal(err)
	}
	l, err := New(c, &stepRT{t: epoch}, rules, Options{Key: "k", TimeSource: Client})
	if err != nil {
		t.Fatal(err)
	}
	err = l.Acquire(context.Background())
	if !errors.Is(err, ErrWrongType) || !strings.Contains(err.Error(), KeyFor("k", time.Minute)) {
		t.Fatalf("err = %v, want ErrWrongType naming the key", err)
	}
	if m.Exists(KeyFor("k", time.Second)) {
		t.Fatal("the call was recorded in the other rule despite the error")
	}
}

func TestScriptFlushMidRun(t *testing.T) {
	_, c := newMini(t)
	testScriptFlush(t, c, &stepRT{t: epoch}, Client, scriptCache{
		flush:  func(ctx context.Context) error { return c.ScriptFlush(ctx).Err() },
		cached: func(ctx context.Context) (bool, error) { return scriptCached(ctx, c) },
	})
}

// scriptCache flushes, and looks into, the script cache of the server that
// holds the test's keys.
type scriptCache struct {
	flush  func(context.Context) error
	cached func(context.Context) (bool, error)
}

func scriptCached(ctx context.Context, c redis.Scripter) (bool, error) {
	ok, err := c.ScriptExists(ctx, admitScript.Hash()).Result()
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
	l, err := New(c, rt, []rule.Rule{{Limit: 1000, Window: time.Second}}, Options{Key: "flush", TimeSource: src})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if i == 4 {
			if err := sc.flush(ctx); err != nil {
				t.Fatal(err)
			}
			if ok, err := sc.cached(ctx); ok || err != nil {
				t.Fatalf("script still cached after SCRIPT FLUSH (%v)", err)
			}
		}
		if err := l.Acquire(ctx); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if ok, err := sc.cached(ctx); !ok || err != nil {
		t.Fatalf("script not loaded again after the flush (%v)", err)
	}
}

func TestMemberReuseIsAnError(t *testing.T) {
	_, c := newMini(t)
	rules := []rule.Rule{{Limit: 5, Window: time.Second}}
	a, _ := New(c, &stepRT{t: epoch}, rules, Options{Key: "k", TimeSource: Client, MemberPrefix: "same:"})
	b, _ := New(c, &stepRT{t: epoch}, rules, Options{Key: "k", TimeSource: Client, MemberPrefix: "same:"})
	if err := a.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.Acquire(context.Background()); err == nil || !strings.Contains(err.Error(), "distinct member prefixes") {
		t.Fatalf("err = %v, want the shared-prefix error", err)
	}
}

func TestCancelledCallerRecordsNothing(t *testing.T) {
	m, c := newMini(t)
	rt := &stepRT{t: epoch}
	l, _ := New(c, rt, []rule.Rule{{Limit: 1, Window: time.Second}}, Options{Key: "k", TimeSource: Client})
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if n, _ := m.ZMembers(l.Keys()[0]); len(n) != 1 {
		t.Fatalf("members %v", n)
	}
	if s := l.Stats(); s.Records[0] != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestSweepBoundsMemory: entries are kept for their window plus
// max(window, 1 s), for callers whose instants arrive out of order, and
// then swept, at the latest one call in sweepEvery, whether the rule fills
// or not.
func TestSweepBoundsMemory(t *testing.T) {
	m, c := newMini(t)
	rt := &stepRT{t: epoch}
	rules := []rule.Rule{{Limit: 1000, Window: time.Second}, {Limit: 2, Window: 10 * time.Millisecond}}
	l, err := New(c, rt, rules, Options{Key: "sweep", TimeSource: Client})
	if err != nil {
		t.Fatal(err)
	}
	const step = 100 * time.Millisecond
	for range 200 {
		rt.t += int64(step)
		if err := l.Acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range rules {
		kept := r.Window + max(r.Window, time.Second)
		inWindow := int((r.Window + step - 1) / step)
		most := int(kept/step) + sweepEvery
		got, _ := m.ZMembers(l.Keys()[i])
		if len(got) < inWindow || len(got) > most {
			t.Errorf("%v: the set holds %d entries; want %d to %d", r, len(got), inWindow, most)
		}
	}
}

func TestParseTimeSource(t *testing.T) {
	for _, src := range []TimeSource{Server, Client, Virtual} {
		if got, err := ParseTimeSource(src.String()); err != nil || got != src {
			t.Errorf("ParseTimeSource(%q) = %v, %v", src.String(), got, err)
		}
	}
	if _, err := ParseTimeSource("ntp"); err == nil {
		t.Error("ParseTimeSource(ntp) succeeded")
	}
}
