package redislimit

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/clock"
)

// epoch is a 2026 instant: its microseconds need 16 digits, which catches
// any Lua path that formats a time with fewer significant digits.
const epoch = int64(1_780_000_000_000_000_000)

// stepRT is a single-caller runtime: Now returns t and Sleep advances t.
// onAdvance lets a test move miniredis' TIME along with it.
type stepRT struct {
	t         int64
	onAdvance func(int64)
}

func (r *stepRT) Now() int64 { return r.t }

func (r *stepRT) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d > 0 {
		r.set(r.t + int64(d))
	}
	return nil
}

func (r *stepRT) set(t int64) {
	r.t = t
	if r.onAdvance != nil {
		r.onAdvance(t)
	}
}

func (r *stepRT) NewMutex() clock.Mutex            { return nopLock{} }
func (r *stepRT) NewSemaphore(int) clock.Semaphore { return nopLock{} }

// nopLock never waits: one caller at a time cannot contend.
type nopLock struct{}

func (nopLock) Lock(context.Context) error    { return nil }
func (nopLock) Unlock()                       {}
func (nopLock) Acquire(context.Context) error { return nil }
func (nopLock) Release()                      {}

// newMini starts an in-process miniredis and a client for it.
func newMini(t testing.TB) (*miniredis.Miniredis, *redis.Client) {
	t.Helper()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	return m, c
}

// newClient returns a client of a fresh miniredis.
func newClient(t testing.TB) *redis.Client {
	_, c := newMini(t)
	return c
}
