package handwritten_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/internal/specimens/handwritten"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/internal/specimens/libs/clockredis"
	"github.com/rlcheck/rlcheck/rule"
)

// stepRT is one caller's clock: Now returns t and Sleep moves t on.
type stepRT struct{ t int64 }

func (r *stepRT) Now() int64 { return r.t }

func (r *stepRT) Sleep(ctx context.Context, d time.Duration) error {
	r.t += int64(max(d, 0))
	return ctx.Err()
}

func (r *stepRT) NewMutex() clock.Mutex            { return nopLock{} }
func (r *stepRT) NewSemaphore(int) clock.Semaphore { return nopLock{} }

// nopLock never waits: one caller at a time cannot contend.
type nopLock struct{}

func (nopLock) Lock(context.Context) error    { return nil }
func (nopLock) Unlock()                       {}
func (nopLock) Acquire(context.Context) error { return nil }
func (nopLock) Release()                      {}

const (
	sec = int64(time.Second)
	ms  = int64(time.Millisecond)
)

// floatSec is the guide's time.time(): Unix seconds as a float64.
func floatSec(ns int64) float64 { return float64(libs.Epoch.UnixNano()+ns) / 1e9 }

// TestGuideScriptFloatSeconds pins why the guide's script lets 2N into
// one second on an exact clock: Unix seconds of 2026 as a float64 lie on a
// grid of 2^-22 s (238 ns), so an entry recorded 100 ns after a grid point
// is stored as that point, and a caller 100 ns before the window's end
// computes now - window equal to it, and ZREMRANGEBYSCORE (inclusive)
// drops it. The Lua boundary loses nothing: the score read back is the
// float64 the caller sent, on the embedded Redis and on redis-server 7.
func TestGuideScriptFloatSeconds(t *testing.T) {
	t0 := 2*sec + 100 // 5 calls: the window is [t0, t0+1s)
	wake := 3 * sec   // 100 ns before the window ends
	ulp := math.Nextafter(floatSec(t0), math.Inf(1)) - floatSec(t0)
	require.Equal(t, math.Ldexp(1, -22), ulp, "grid of float64 Unix seconds in 2026")
	require.Equal(t, floatSec(2*sec), floatSec(t0), "t0 rounds to 2 s")
	require.Equal(t, floatSec(t0), floatSec(wake)-1, "3 s minus the 1 s window equals t0's score")

	servers := map[string]func(t *testing.T, rt *stepRT) redis.UniversalClient{
		"embedded": func(t *testing.T, rt *stepRT) redis.UniversalClient {
			s, err := clockredis.Start(rt.Now)
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			return s.Client
		},
		"redis-server": func(t *testing.T, _ *stepRT) redis.UniversalClient {
			c := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr})
			t.Cleanup(func() { _ = c.Close() })
			return c
		},
	}
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			rt := &stepRT{t: t0}
			c := start(t, rt)
			rules := []rule.Rule{{Limit: 5, Window: time.Second}}
			lim := handwritten.NewGuideScript(c, rt, rules, libs.Default(), "guide:"+name, "c")
			ctx := context.Background()
			var sends []int64
			for range 5 {
				require.NoError(t, lim.Acquire(ctx))
				sends = append(sends, rt.Now())
			}
			z, err := c.ZRangeWithScores(ctx, "guide:"+name+":0", 0, 0).Result()
			require.NoError(t, err)
			require.Len(t, z, 1, "entries")
			assert.Equal(t, floatSec(t0), z[0].Score, "score read back, exactly the float64 sent")

			// Five callers at 2.5 s are refused and told to wait
			// 1767225603 - 1767225602.5 = 0.5 s; the first sleeps it, and
			// at 3 s all five are admitted.
			rt.t = 2*sec + 500*ms
			for range 5 {
				require.NoError(t, lim.Acquire(ctx))
				sends = append(sends, rt.Now())
			}
			assert.Equal(t, []int64{t0, t0, t0, t0, t0, wake, wake, wake, wake, wake}, sends, "send instants")
			cr, err := checker.Check(sends, checker.Config{Rules: rules})
			require.NoError(t, err)
			assert.Equal(t, int64(10), cr.Rules[0].MaxInWindow, "sends in [t0, t0+1s)")
			assert.Equal(t, int64(5), cr.Rules[0].Violations, "violations of 5/1s")
		})
	}
}

// TestFixedWindowExpiry: EXPIRE takes whole seconds, rounded up so that a
// key outlives its window (3.005 s lives 4 s, 100 ms lives 1 s).
func TestFixedWindowExpiry(t *testing.T) {
	for _, tt := range []struct {
		window, ttl time.Duration
	}{{100 * time.Millisecond, time.Second}, {time.Second, time.Second}, {3005 * time.Millisecond, 4 * time.Second}} {
		rt := &stepRT{t: 7 * sec}
		s, err := clockredis.Start(rt.Now)
		require.NoError(t, err)
		lim := handwritten.NewFixedWindow(s.Client, rt, []rule.Rule{{Limit: 5, Window: tt.window}}, libs.Default(), "fw")
		require.NoError(t, lim.Acquire(context.Background()))
		keys, err := s.Keys(context.Background(), "fw:*").Result()
		require.NoError(t, err)
		require.Len(t, keys, 1, "keys of window %v", tt.window)
		ttl, err := s.TTL(context.Background(), keys[0]).Result()
		require.NoError(t, err)
		assert.Equal(t, tt.ttl, ttl, "TTL of %s, window %v", keys[0], tt.window)
		require.NoError(t, s.Close())
	}
}
