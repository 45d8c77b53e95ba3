package simulate

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/strategies/redislimit/embedded"
	"github.com/rlcheck/rlcheck/workload"
)

// closing is a limiter that admits at once and counts its Close calls.
type closing struct{ closed *int }

func (*closing) Acquire(context.Context) error { return nil }
func (*closing) Release()                      {}
func (c *closing) Close() error                { *c.closed++; return nil }

// TestRunClosesLimiters: a limiter that holds a resource (the Redis-backed
// libraries' embedded servers) is closed once when its run is over, shared
// by the workers or one per worker, on its own run and in RunSeeds.
func TestRunClosesLimiters(t *testing.T) {
	for _, perWorker := range []bool{false, true} {
		var built, closed int
		st := catalog.Strategy{Name: "closing", PerWorker: perWorker, New: func(catalog.Env) (strategies.Limiter, error) {
			built++
			return &closing{&closed}, nil
		}}
		s := twoWorkers(0)
		_, err := RunStrategy(s, st, 1, Options{})
		require.NoError(t, err)
		assert.Equal(t, built, closed, "per worker %v: limiters built and closed", perWorker)
		assert.Equal(t, map[bool]int{false: 1, true: 2}[perWorker], closed, "per worker %v: closed", perWorker)
	}
}

// TestRunClosesItsServers: the in-process Redis servers a run's limiters
// start (clockredis, one per limiter) stop when the run ends, not when the
// collector gets to them: runs leave no goroutines behind.
func TestRunClosesItsServers(t *testing.T) {
	s := &workload.Scenario{
		Name: "close", Rules: contract, Strategies: []string{catalog.RedisRate},
		Callers: 20, Workers: 2, Arrivals: workload.Arrivals{Kind: workload.Interval, Every: 10 * time.Millisecond},
	}
	st, ok := catalog.Lookup(catalog.RedisRate)
	require.True(t, ok)
	for seed := range uint64(5) {
		_, err := RunStrategy(s, st, seed+1, Options{})
		require.NoError(t, err)
	}
	// The goroutines of a closed server end soon after; a leaked one's
	// stay.
	var left int
	assert.Eventually(t, func() bool { left = serverGoroutines(); return left == 0 },
		2*time.Second, 10*time.Millisecond)
	assert.Zero(t, left, "goroutines of in-process Redis servers after five runs")
}

// serverGoroutines counts the goroutines running miniredis code.
func serverGoroutines() int {
	buf := make([]byte, 1<<20)
	for runtime.Stack(buf, true) == len(buf) { // cut off: every goroutine must be seen
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "alicebob/miniredis") {
			n++
		}
	}
	return n
}

// TestEmbeddedRedisIsInProcess: the redis strategy on the server a run
// starts itself takes no wall-clock bound per call (a paused or loaded
// process must not fail a run on virtual time); on a server it was given,
// it keeps one.
func TestEmbeddedRedisIsInProcess(t *testing.T) {
	st, ok := catalog.Lookup("redis")
	require.True(t, ok)
	var got []bool
	probe := st
	probe.New = func(e catalog.Env) (strategies.Limiter, error) {
		got = append(got, e.Shared.InProcess)
		return st.New(e)
	}
	_, err := RunStrategy(twoWorkers(0), probe, 1, Options{})
	require.NoError(t, err)
	emb, err := embedded.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = emb.Close() })
	_, err = RunStrategy(twoWorkers(0), probe, 1, Options{Redis: emb})
	require.NoError(t, err)
	require.NotEmpty(t, got)
	assert.Equal(t, []bool{true, true, false, false}, got)
}
