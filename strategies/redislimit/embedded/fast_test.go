package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/specimens/handwritten"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/internal/specimens/libs/redisrate"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
	"github.com/rlcheck/rlcheck/strategies/redislimit/embedded"
)

// twin is two miniredis servers on one clock: fast, whose client has the
// fast path, and plain, whose client sends everything to the server. As
// a redis.Scripter it runs every call on both and requires the same reply.
type twin struct {
	t           *testing.T
	now         *int64 // virtual nanoseconds from libs.Epoch
	last        int64
	mf, mp      *miniredis.Miniredis
	fast, plain *redis.Client
	scripts     *embedded.Scripts
	calls       int
	kinds       map[string]int // replies seen, by kind
}

func newTwin(t *testing.T, now *int64) *twin {
	tw := &twin{t: t, now: now, last: *now, kinds: map[string]int{}}
	tw.mf, tw.mp = miniredis.RunT(t), miniredis.RunT(t)
	tw.fast = redis.NewClient(&redis.Options{Addr: tw.mf.Addr()})
	tw.plain = redis.NewClient(&redis.Options{Addr: tw.mp.Addr()})
	var err error
	tw.scripts, err = embedded.Install(tw.fast, tw.mf)
	require.NoError(t, err)
	t.Cleanup(func() {
		tw.scripts.Close()
		_ = tw.fast.Close()
		_ = tw.plain.Close()
	})
	tw.sync()
	return tw
}

// sync sets both servers' clocks to now, moving expiries by the time
// elapsed, as clockredis does.
func (tw *twin) sync() {
	now := *tw.now
	for _, m := range []*miniredis.Miniredis{tw.mf, tw.mp} {
		if now > tw.last {
			m.FastForward(time.Duration(now - tw.last))
		}
		m.SetTime(libs.Epoch.Add(time.Duration(now)))
	}
	tw.last = max(tw.last, now)
}

// same requires the same reply from both servers, and returns fast's.
func (tw *twin) same(what string, f func(c *redis.Client) *redis.Cmd) *redis.Cmd {
	tw.t.Helper()
	tw.sync()
	tw.calls++
	p := f(tw.plain)
	q := f(tw.fast)
	require.Equal(tw.t, p.Val(), q.Val(), "%s, call %d: values", what, tw.calls)
	require.Equal(tw.t, errText(p.Err()), errText(q.Err()), "%s, call %d: errors", what, tw.calls)
	var pe, qe redis.Error
	require.Equal(tw.t, errors.As(p.Err(), &pe), errors.As(q.Err(), &qe), "%s, call %d: error kinds", what, tw.calls)
	kind := fmt.Sprintf("%T", p.Val())
	if p.Err() != nil {
		kind, _, _ = strings.Cut(p.Err().Error(), " ")
	}
	tw.kinds[kind]++
	return q
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// sameData requires both servers to hold the same keys, values and
// expiries.
func (tw *twin) sameData(step int) {
	tw.t.Helper()
	keys := tw.mp.Keys()
	require.Equal(tw.t, keys, tw.mf.Keys(), "step %d: keys", step)
	require.Equal(tw.t, tw.mp.Dump(), tw.mf.Dump(), "step %d: data", step)
	for _, k := range keys {
		require.Equal(tw.t, tw.mp.TTL(k), tw.mf.TTL(k), "step %d: expiry of %s", step, k)
	}
}

func (tw *twin) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return tw.same("EVAL", func(c *redis.Client) *redis.Cmd { return c.Eval(ctx, script, keys, args...) })
}

func (tw *twin) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return tw.same("EVALSHA", func(c *redis.Client) *redis.Cmd { return c.EvalSha(ctx, sha1, keys, args...) })
}

func (tw *twin) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return tw.same("EVAL_RO", func(c *redis.Client) *redis.Cmd { return c.EvalRO(ctx, script, keys, args...) })
}

func (tw *twin) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return tw.same("EVALSHA_RO", func(c *redis.Client) *redis.Cmd { return c.EvalShaRO(ctx, sha1, keys, args...) })
}

func (tw *twin) ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd {
	p := tw.plain.ScriptExists(ctx, hashes...)
	require.Equal(tw.t, p.Val(), tw.fast.ScriptExists(ctx, hashes...).Val())
	return p
}

func (tw *twin) ScriptLoad(ctx context.Context, script string) *redis.StringCmd {
	p := tw.plain.ScriptLoad(ctx, script)
	require.Equal(tw.t, p.Val(), tw.fast.ScriptLoad(ctx, script).Val())
	return p
}

func (tw *twin) Del(ctx context.Context, keys ...string) *redis.IntCmd {
	p := tw.plain.Del(ctx, keys...)
	require.Equal(tw.t, p.Val(), tw.fast.Del(ctx, keys...).Val())
	return p
}

// both runs a plain command on both servers.
func (tw *twin) both(args ...any) {
	tw.sync()
	ctx := context.Background()
	p := tw.plain.Do(ctx, args...)
	q := tw.fast.Do(ctx, args...)
	require.Equal(tw.t, errText(p.Err()), errText(q.Err()), "%v", args)
}

// runtime is a virtual clock for one goroutine: Sleep moves it. A sleep
// longer than a minute, or the 50th of a call, fails, as a caller's
// deadline would (entries from the far future ask for years, or for
// overflowing waits).
type runtime struct{ now, sleeps *int64 }

func (r runtime) Now() int64 { return *r.now }
func (r runtime) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if *r.sleeps++; d > time.Minute || *r.sleeps > 50 {
		return errors.New("a sleep past the deadline")
	}
	*r.now += int64(max(d, 0))
	return nil
}
func (r runtime) NewMutex() clock.Mutex { return &mutex{} }
func (r runtime) NewSemaphore(int) clock.Semaphore {
	panic("not used")
}

type mutex struct{ sync.Mutex }

func (m *mutex) Lock(context.Context) error { m.Mutex.Lock(); return nil }

var _ clock.Runtime = runtime{}

// TestFastPathMatchesMiniredis drives random sequences of the project's
// scripts (admit.lua with exact and bucketed rules on every time source,
// the hand-written scripts, redis_rate's) through the fast path and
// through plain miniredis EVALSHA, with faults thrown in (keys deleted,
// overwritten with the wrong type, entries from the far future), and
// requires the same replies and the same data after every call.
func TestFastPathMatchesMiniredis(t *testing.T) {
	seeds := 3
	if os.Getenv("RLCHECK_FULL") != "" {
		seeds = 30
	}
	for seed := range seeds {
		t.Run(strconv.Itoa(seed), func(t *testing.T) { driveTwins(t, uint64(seed)) })
	}
}

func driveTwins(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var now int64 = int64(time.Hour)
	tw := newTwin(t, &now)
	var sleeps int64
	rt := runtime{&now, &sleeps}
	ctx := context.Background()

	type acquirer interface{ Acquire(context.Context) error }
	var lims []acquirer
	var keys []string
	ruleSets := [][]rule.Rule{
		{{Limit: 3, Window: time.Second}, {Limit: 5, Window: 10 * time.Second}},
		{{Limit: 4, Window: 2 * time.Second, Buckets: 4}},
		{{Limit: 2, Window: time.Second}, {Limit: 6, Window: 8 * time.Second, Buckets: 8}},
	}
	for i, rules := range ruleSets {
		for j, src := range []redislimit.TimeSource{redislimit.Virtual, redislimit.Server} {
			for w := range 2 {
				prefix := fmt.Sprintf("w%d:", w)
				if i == 0 && j == 0 {
					prefix = "w0:" // limiters sharing a key and a prefix clash
				}
				l, err := redislimit.New(tw, rt, rules, redislimit.Options{
					Key: fmt.Sprintf("k%d%d", i, j), TimeSource: src, MemberPrefix: prefix, CallTimeout: -1,
					Now: func() int64 { return now - int64(rng.IntN(3))*int64(time.Millisecond) },
				})
				require.NoError(t, err)
				lims = append(lims, l)
				keys = append(keys, redislimit.HeadKey(fmt.Sprintf("k%d%d", i, j)))
				keys = append(keys, l.Keys()...)
			}
		}
	}
	rules := []rule.Rule{{Limit: 3, Window: time.Second}, {Limit: 5, Window: 5 * time.Second}}
	cfg := libs.Default()
	lims = append(lims,
		handwritten.NewTimestampMember(tw, rt, rules, cfg, "ts"),
		handwritten.NewGuideScript(tw, rt, rules, cfg, "guide", "c"),
		redisrate.New(tw, rt, rules, cfg, "gcra"),
	)
	keys = append(keys, "ts:0", "ts:1", "guide:0", "guide:1", "gcra:0", "gcra:1")
	sort.Strings(keys)

	steps := 300
	for step := range steps {
		now += int64(rng.IntN(400)) * int64(time.Millisecond)
		switch r := rng.IntN(40); {
		case r == 0:
			tw.both("DEL", keys[rng.IntN(len(keys))])
		case r == 1:
			tw.both("SET", keys[rng.IntN(len(keys))], "x")
		case r == 2:
			args := []any{"ZADD", keys[rng.IntN(len(keys))]}
			for f := range 6 {
				args = append(args, 9999999999999999-f, "far"+strconv.Itoa(f))
			}
			tw.both(args...)
		case r == 3:
			tw.both("FLUSHALL")
		default:
			l := lims[rng.IntN(len(lims))]
			// A refusal sleeps on the virtual clock; errors are compared
			// by the twin, and some are the point.
			sleeps = 0
			_ = l.Acquire(ctx)
		}
		tw.sameData(step)
	}
	assert.Positive(t, tw.scripts.Served(), "the fast path served no run")
	t.Logf("%d calls, %d served in process; replies by kind: %v", tw.calls, tw.scripts.Served(), tw.kinds)
}

// TestFastPathOddScripts: what scripts seldom do comes out as miniredis
// has it: every kind of reply, errors raised and returned, globals
// refused, a script that changes a library (the next run must not see
// it), SELECT, read-only runs, NOSCRIPT.
func TestFastPathOddScripts(t *testing.T) {
	var now int64
	tw := newTwin(t, &now)
	ctx := context.Background()
	scripts := []string{
		`return {1, 'two', {3, false}, nil, 5}`,
		`return {1, 2.9, -2.9, true, false, redis.status_reply('FINE'), redis.error_reply('BAD  x')}`,
		`return redis.status_reply('OK\tthen')`,
		`return redis.error_reply('-MINE went wrong')`,
		`return redis.error_reply('plain')`,
		`return true`,
		`return false`,
		`return 3.99`,
		`return`,
		`x = 1`,
		`return undefinedvar`,
		`error('raised 100% \n here')`,
		`return redis.call('INCRBY', KEYS[1], ARGV[1])`,
		`return redis.pcall('HSET', KEYS[1], 'f', 'v')`,
		`return redis.call('HSET', KEYS[1], 'f', 'v')`,
		`return redis.pcall('NOSUCHCOMMAND')`,
		`return redis.call('NOSUCHCOMMAND')`,
		`return redis.call()`,
		`return redis.call('GET', {})`,
		`return redis.call('EVAL', 'return 1', 0)`,
		`return redis.call('MULTI')`,
		`redis.call('SELECT', 1) redis.call('SET', KEYS[1], 'in db 1') return redis.call('GET', KEYS[1])`,
		`return redis.call('GET', KEYS[1])`,
		`return {redis.call('TIME')[1] ~= nil, redis.sha1hex('abc'), cjson.encode({a = 1}), #KEYS, #ARGV}`,
		`string.rep = nil return 'changed'`,
		`return string.rep('ab', 3)`,
		`KEYS = {'replaced'} return KEYS[1]`,
		`return KEYS[1]`,
		`redis.setresp(3) return redis.call('HGETALL', KEYS[1])`,
		`redis.setresp(4)`,
		`return redis.call('ZADD', KEYS[2], 1, 'a', 2.5, 'b')`,
		`return redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')`,
		`return {redis.call('PTTL', KEYS[2]), redis.call('EXISTS', KEYS[2])}`,
		`return os.clock()`,
		// string.format's shortcut for '%d' (fastFormat) and what it leaves
		// to gopher-lua.
		`return {string.format('%d', 5), string.format('%d', -2.9), string.format('%d', 2.9), string.format('%d', 2^53)}`,
		`return {string.format('%d', '12'), string.format('%d', 7, 8), string.format('%5d', 3), ('%d'):format(4)}`,
		`return string.format('%d', 0/0) ~= nil`,
		`return string.format('%d')`,
		`return string.format('%d', {})`,
	}
	for round := range 2 {
		for i, src := range scripts {
			what := fmt.Sprintf("round %d, script %d: %s", round, i, src)
			keys, args := []string{"k", "z"}, []any{"7", 2.5, int64(-3), true, nil}
			if round == 0 {
				tw.Eval(ctx, src, keys, args...)
			}
			tw.same(what, func(c *redis.Client) *redis.Cmd { return c.EvalSha(ctx, sha1Of(src), keys, args...) })
			tw.same(what+" (read-only)", func(c *redis.Client) *redis.Cmd { return c.EvalShaRO(ctx, sha1Of(src), keys, args...) })
			tw.sameData(i)
		}
	}
	// An unknown SHA is NOSCRIPT; SCRIPT LOAD makes it known, SCRIPT
	// FLUSH unknown again.
	src := `return 'loaded'`
	tw.same("unknown", func(c *redis.Client) *redis.Cmd { return c.EvalSha(ctx, sha1Of(src), nil) })
	tw.ScriptLoad(ctx, src)
	served := tw.scripts.Served()
	tw.same("loaded", func(c *redis.Client) *redis.Cmd { return c.EvalSha(ctx, sha1Of(src), nil) })
	assert.Equal(t, served+1, tw.scripts.Served(), "a loaded script runs in process")
	tw.both("SCRIPT", "FLUSH")
	tw.same("flushed", func(c *redis.Client) *redis.Cmd { return c.EvalSha(ctx, sha1Of(src), nil) })

	// Where miniredis panics, the fast path replies with an error.
	fn := `return function() end`
	require.NoError(t, tw.fast.ScriptLoad(ctx, fn).Err())
	err := tw.fast.EvalSha(ctx, sha1Of(fn), nil).Err()
	var rerr redis.Error
	require.ErrorAs(t, err, &rerr)
	assert.Contains(t, err.Error(), "a script returned a function")
}

func sha1Of(s string) string { return redis.NewScript(s).Hash() }

// TestFastPathIsAtomic: a script's read and write are not split by the
// commands of another connection to the server. Each script reads a
// counter and writes it back one higher, while another connection
// INCRs it; no increment may be lost.
func TestFastPathIsAtomic(t *testing.T) {
	var now int64
	tw := newTwin(t, &now)
	other := redis.NewClient(&redis.Options{Addr: tw.mf.Addr()})
	defer other.Close()
	ctx := context.Background()
	bump := redis.NewScript(`local v = tonumber(redis.call('GET', KEYS[1]) or '0') redis.call('SET', KEYS[1], v + 1) return v`)
	const n = 300
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range n {
			assert.NoError(t, bump.Run(ctx, tw.fast, []string{"c"}).Err())
		}
	}()
	go func() {
		defer wg.Done()
		for range n {
			assert.NoError(t, other.Incr(ctx, "c").Err())
		}
	}()
	wg.Wait()
	got, err := tw.fast.Get(ctx, "c").Int()
	require.NoError(t, err)
	assert.Equal(t, 2*n, got, "increments lost between a script's GET and SET")
	assert.GreaterOrEqual(t, tw.scripts.Served(), int64(n-1))
}
