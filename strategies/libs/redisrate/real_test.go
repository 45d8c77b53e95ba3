package redisrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/libs"
	"github.com/rlcheck/rlcheck/strategies/libs/redisrate"
)

// TestRealServerBurst: on a real redis-server, redis_rate.PerSecond(5)
// (burst 5) lets 5 calls through at once and then one every 200 ms by the
// server's clock, so one caller that asks as soon as it may puts 9 sends in
// one second: 5 + 4 at 200, 400, 600 and 800 ms.
func TestRealServerBurst(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = c.Close() })
	rules := []rule.Rule{{Limit: 5, Window: time.Second}}
	rt := clock.NewReal()
	lim := redisrate.New(c, rt, rules, libs.Config{}, "burst")
	var sends []int64
	for range 10 {
		require.NoError(t, lim.Acquire(context.Background()))
		sends = append(sends, rt.Now())
	}
	rep, err := checker.Check(sends, checker.Config{Rules: rules})
	require.NoError(t, err)
	assert.Equal(t, int64(9), rep.Rules[0].MaxInWindow, "most sends in one second; sends %v", sends)
}
