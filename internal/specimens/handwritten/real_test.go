package handwritten_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/internal/specimens/handwritten"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
)

// admitted starts callers goroutines together, each with its own limiter
// from mk (a process of its own), and counts the calls admitted within
// 300 ms: under 5/10s nothing may pass after the first 5.
func admitted(t *testing.T, callers int, mk func(i int) strategies.Limiter) int64 {
	t.Helper()
	var (
		n     atomic.Int64
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for i := range callers {
		lim := mk(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if lim.Acquire(ctx) == nil {
				n.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	return n.Load()
}

// TestRealServerConcurrency: on a real redis-server, 40 concurrent callers
// under 5/10s get more than 5 calls through the two-round-trip design and
// the timestamp-member script, and exactly 5 through the project's own
// script, in the same run. Real scheduling decides the interleaving, so
// each flawed design has up to five rounds to show its flaw.
func TestRealServerConcurrency(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 64})
	t.Cleanup(func() { _ = c.Close() })
	rules := []rule.Rule{{Limit: 5, Window: 10 * time.Second}}
	rt := clock.NewReal() // one clock: the callers' hosts agree
	cfg := libs.Config{}  // the network supplies the round trip
	designs := []struct {
		name string
		mk   func(key string, i int) strategies.Limiter
	}{
		{"two round trips", func(key string, i int) strategies.Limiter {
			return handwritten.NewTwoTrips(c, rt, rules, cfg, key, fmt.Sprint(i))
		}},
		{"timestamp members", func(key string, _ int) strategies.Limiter {
			return handwritten.NewTimestampMember(c, rt, rules, cfg, key)
		}},
	}
	for round := range 5 {
		own := admitted(t, 40, func(i int) strategies.Limiter {
			l, err := redislimit.New(c, rt, rules, redislimit.Options{Key: fmt.Sprintf("own%d", round), MemberPrefix: fmt.Sprintf("p%d:", i)})
			require.NoError(t, err)
			return l
		})
		assert.Equal(t, int64(5), own, "round %d: the project's script admitted", round)
		remaining := designs[:0:0]
		for _, d := range designs {
			key := fmt.Sprintf("%s:%d", d.name, round)
			got := admitted(t, 40, func(i int) strategies.Limiter { return d.mk(key, i) })
			t.Logf("round %d: %s admitted %d of 40 under 5/10s", round, d.name, got)
			require.GreaterOrEqual(t, got, int64(5), "%s: admitted", d.name)
			if got == 5 {
				remaining = append(remaining, d)
			}
		}
		if designs = remaining; len(designs) == 0 {
			return
		}
	}
	for _, d := range designs {
		t.Errorf("%s: no round of 40 concurrent callers got more than 5 through", d.name)
	}
}
