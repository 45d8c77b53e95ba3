package simulate

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// queueScenario has callers queue on combined's lock, n of them at most.
func queueScenario(callers int) *workload.Scenario {
	return &workload.Scenario{
		Name: "queue", Rules: []rule.Rule{{Limit: 10, Window: time.Second}, {Limit: 500, Window: time.Minute}},
		Strategies: []string{"combined"}, Callers: callers, Workers: 2, MaxInFlight: 3,
		Arrivals: workload.Arrivals{Kind: workload.Interval, Every: 50 * time.Millisecond}, Timeout: 20 * time.Second,
	}
}

// TestColdRunsMatchFreshRuns: RunStrategy calls from several goroutines at
// once, sharing the cold pools, give each seed what a run on a scheduler
// of its own gives it.
func TestColdRunsMatchFreshRuns(t *testing.T) {
	s := queueScenario(300)
	const seeds = 8
	fresh := make(map[string][]StrategyResult)
	for _, name := range []string{"combined", "sequential", "gated"} {
		st, ok := catalog.Lookup(name)
		require.True(t, ok)
		for seed := range uint64(seeds) {
			r, err := runStrategy(s, st, seed, Options{}, nil)
			require.NoError(t, err)
			fresh[name] = append(fresh[name], r)
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range 3 * seeds {
				name := []string{"combined", "sequential", "gated"}[(g+k)%3]
				seed := uint64(k % seeds)
				st, _ := catalog.Lookup(name)
				r, err := RunStrategy(s, st, seed, Options{})
				if assert.NoError(t, err) {
					assert.Equal(t, fresh[name][seed], r, "%s seed %d", name, seed)
				}
			}
		})
	}
	wg.Wait()
	pools, procs := virtual.Kept()
	assert.Positive(t, procs, "coroutines kept")
	assert.LessOrEqual(t, pools, runtime.GOMAXPROCS(0), "pools kept")
}

// callerGoroutines counts the goroutines of callers' coroutines.
func callerGoroutines() int {
	buf := make([]byte, 1<<20)
	for runtime.Stack(buf, true) == len(buf) {
		buf = make([]byte, 2*len(buf))
	}
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "virtual.(*Sched).newProc.func1(")
}

// reapNow stops the kept pools.
func reapNow(t *testing.T) {
	t.Helper()
	virtual.ReleasePools()
	require.Eventually(t, func() bool { return callerGoroutines() == 0 }, 2*time.Second, 5*time.Millisecond,
		"callers' coroutines of earlier runs")
}

// TestColdRunOnALockedThread: a goroutine locked to its OS thread runs a
// strategy with the coroutines of another goroutine's run (the runtime
// ends the program if it resumes them itself).
func TestColdRunOnALockedThread(t *testing.T) {
	st, _ := catalog.Lookup("combined")
	s := queueScenario(100)
	want, err := RunStrategy(s, st, 3, Options{})
	require.NoError(t, err)
	done := make(chan StrategyResult)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r, err := RunStrategy(s, st, 3, Options{})
		assert.NoError(t, err)
		done <- r
	}()
	assert.Equal(t, want, <-done)
}

// panicking admits its first caller and panics in its second.
type panicking struct{ n int }

func (p *panicking) Acquire(context.Context) error {
	if p.n++; p.n == 2 {
		panic("panicking: second caller")
	}
	return nil
}
func (*panicking) Release() {}

// TestColdRunPassesOnItsPanic: a panic in a caller reaches the goroutine
// that called RunStrategy, and the run's pool is not kept.
func TestColdRunPassesOnItsPanic(t *testing.T) {
	st := catalog.Strategy{Name: "panicking", New: func(catalog.Env) (strategies.Limiter, error) { return &panicking{}, nil }}
	s := queueScenario(5)
	reapNow(t)
	assert.PanicsWithValue(t, "panicking: second caller", func() { _, _ = RunStrategy(s, st, 1, Options{}) })
	pools, _ := virtual.Kept()
	assert.Zero(t, pools, "pools kept")
	// The next runs are unharmed.
	comb, _ := catalog.Lookup("combined")
	_, err := RunStrategy(s, comb, 1, Options{})
	require.NoError(t, err)
	_, err = RunStrategy(s, catalog.Strategy{Name: "failing", New: func(catalog.Env) (strategies.Limiter, error) {
		return nil, errors.New("no limiter")
	}}, 1, Options{})
	require.ErrorContains(t, err, "no limiter")
}

// TestPooledRunsMatchFreshRuns: runs that reuse one worker's coroutines,
// scheduler and semaphore queues (as RunSeeds does) give each seed what a
// fresh run gives it, with timeouts that abandon callers and semaphores
// left with waiters among them.
func TestPooledRunsMatchFreshRuns(t *testing.T) {
	lateness, err := workload.ParseDist("uniform(100us, 3ms)")
	require.NoError(t, err)
	s := &workload.Scenario{
		Name: "pool", Rules: []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}},
		Callers: 40, Workers: 2, MaxInFlight: 3, Arrivals: workload.Arrivals{Kind: workload.Poisson, Rate: 20},
		Lateness: lateness, Timeout: 2 * time.Second, Seed: 7,
	}
	var pool virtual.Pool
	defer pool.Close()
	for _, name := range []string{"sequential", "combined", "gated"} {
		st, ok := catalog.Lookup(name)
		require.True(t, ok)
		for seed := range uint64(30) {
			fresh, err := RunStrategy(s, st, seed, Options{})
			require.NoError(t, err)
			pooled, err := runStrategy(s, st, seed, Options{}, &pool)
			require.NoError(t, err)
			require.Equal(t, fresh, pooled, "%s seed %d", name, seed)
		}
	}
}
