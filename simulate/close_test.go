package simulate

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSharedCloseRunsEveryCloserLastFirst: Close calls what OnClose was
// given, in reverse, once, and returns the first error.
func TestSharedCloseRunsEveryCloserLastFirst(t *testing.T) {
	var order []int
	s := &Shared{}
	boom := errors.New("boom")
	s.OnClose(func() error { order = append(order, 1); return nil })
	s.OnClose(func() error { order = append(order, 2); return boom })
	assert.ErrorIs(t, s.Close(), boom)
	assert.Equal(t, []int{2, 1}, order)
	require.NoError(t, s.Close(), "a second Close calls nothing")
	assert.Equal(t, []int{2, 1}, order)
}

// TestRunClosesItsServers: the in-process Redis servers a run's limiters
// start (clockredis, one per limiter) stop when the run ends, not when the
// collector gets to them: runs leave no goroutines behind.
func TestRunClosesItsServers(t *testing.T) {
	s := &Scenario{
		Name: "close", Rules: contract, Strategies: []string{RedisRate},
		Callers: 20, Workers: 2, Arrivals: Arrivals{Kind: Interval, Every: 10 * time.Millisecond},
	}
	st, ok := Lookup(RedisRate)
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
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "alicebob/miniredis") {
			n++
		}
	}
	return n
}
