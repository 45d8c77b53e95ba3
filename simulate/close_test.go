package simulate

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/libs"
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
		st := Strategy{Name: "closing", PerWorker: perWorker, New: func(Env) (strategies.Limiter, error) {
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

// TestLibRedisServersClosed: the Redis-backed libraries' embedded servers
// go with their run, not with the garbage collector (a run's server is
// reachable from its own clock, so a cleanup tied to the limiter never ran
// and audit's thousand-seed runs kept every server and its socket).
func TestLibRedisServersClosed(t *testing.T) {
	st, ok := LibStrategy(RedisRate, libs.Default())
	require.True(t, ok)
	var lims []strategies.Limiter
	wrapped := st
	wrapped.New = func(e Env) (strategies.Limiter, error) {
		lim, err := st.New(e)
		lims = append(lims, lim)
		return lim, err
	}
	_, err := RunStrategy(twoWorkers(0), wrapped, 1, Options{})
	require.NoError(t, err)
	require.Len(t, lims, 1, "limiters built")
	o, ok := lims[0].(ownRedis)
	require.True(t, ok, "a %T, not the limiter with its server", lims[0])
	assert.Error(t, o.s.Ping(context.Background()).Err(), "the server still answers after its run")
}
