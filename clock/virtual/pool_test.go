package virtual

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callerGoroutines counts the goroutines of callers' coroutines.
func callerGoroutines() int {
	buf := make([]byte, 1<<20)
	for runtime.Stack(buf, true) == len(buf) {
		buf = make([]byte, 2*len(buf))
	}
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "virtual.(*Sched).newProc.func1(")
}

// TestColdPoolsAreBoundedAndEnd: a kept pool holds at most maxPooledProcs
// coroutines whatever its run needed, and the pools stop once unused.
func TestColdPoolsAreBoundedAndEnd(t *testing.T) {
	ReleasePools() // no reaper armed by earlier tests reads poolIdle now
	require.Eventually(t, func() bool { return callerGoroutines() == 0 }, 2*time.Second, 5*time.Millisecond,
		"callers' coroutines of earlier runs")
	defer func(d time.Duration) { poolIdle = d }(poolIdle)
	poolIdle = 20 * time.Millisecond

	pp := TakePool()
	s := pp.NewSched(Config{})
	mu := s.NewMutex()
	ctx := context.Background()
	callers, done := maxPooledProcs+500, 0
	s.Arrivals(make([]int64, callers), func(int64) { // all at instant 0, queued on mu
		_ = mu.Lock(ctx)
		_ = s.Sleep(ctx, time.Millisecond)
		mu.Unlock()
		done++
	})
	pp.Run(s)
	GivePool(pp)
	require.Equal(t, callers, done, "callers done")

	pools, procs := Kept()
	assert.Equal(t, 1, pools, "pools kept")
	assert.Equal(t, maxPooledProcs, procs, "coroutines kept")
	assert.Equal(t, maxPooledProcs, callerGoroutines(), "callers' coroutines kept")
	assert.Eventually(t, func() bool { _, procs = Kept(); return procs == 0 }, 2*time.Second, 5*time.Millisecond)
	assert.Eventually(t, func() bool { return callerGoroutines() == 0 }, 2*time.Second, 5*time.Millisecond,
		"callers' coroutines left")
}
