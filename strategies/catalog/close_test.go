package catalog

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/workload"
)

// TestLibRedisServersClosed: the Redis-backed libraries' embedded servers
// go with their run's CloseLimiters, not with the garbage collector (a
// run's server is reachable from its own clock, so a cleanup tied to the
// limiter never ran and audit's thousand-seed runs kept every server and
// its socket).
func TestLibRedisServersClosed(t *testing.T) {
	st, ok := LibStrategy(RedisRate, libs.Default())
	require.True(t, ok)
	s := &workload.Scenario{Name: "close", Rules: []rule.Rule{{Limit: 5, Window: time.Second}},
		Strategies: []string{RedisRate}, Workers: 2, Callers: 1}
	sch := virtual.NewSched(virtual.Config{})
	shared := &Shared{Key: "close", Now: sch.Now}
	lims, err := Limiters(s, st, shared, func(int) clock.Runtime { return sch })
	require.NoError(t, err)
	require.Equal(t, lims[0], lims[1], "one limiter shared by the workers")
	o, ok := lims[0].(ownRedis)
	require.True(t, ok, "a %T, not the limiter with its server", lims[0])
	require.NoError(t, o.s.Ping(context.Background()).Err(), "the server answers during its run")
	CloseLimiters(lims)
	assert.Error(t, o.s.Ping(context.Background()).Err(), "the server still answers after its run")
}
