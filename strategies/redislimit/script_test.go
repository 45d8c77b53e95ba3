package redislimit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
)

// TestScriptPerShape: a limiter's copy of admit.lua holds the shape of its
// configuration and reads the values from ARGV, so limiters of other
// limits and windows share one copy (one script in the server's cache
// however many tenants), and other shapes get their own.
func TestScriptPerShape(t *testing.T) {
	_, c := newMini(t)
	rt := &stepRT{t: epoch}
	mk := func(key string, opts Options, rules ...rule.Rule) *Limiter {
		opts.Key = key
		l, err := New(c, rt, rules, opts)
		require.NoError(t, err)
		return l
	}
	sec := rule.Rule{Limit: 5, Window: time.Second}
	hour := rule.Rule{Limit: 1 << 20, Window: time.Hour}
	a := mk("a", Options{Exact: true}, sec, hour)
	other := mk("b", Options{Exact: true}, rule.Rule{Limit: 7, Window: 2 * time.Second}, rule.Rule{Limit: 900, Window: 24 * time.Hour})
	assert.True(t, a.admit == other.admit, "limiters of other limits and windows share a script")
	assert.Contains(t, constants(a), "local R = {ARGV[7], ARGV[10]}\n")
	assert.Contains(t, constants(a), "local W = {tonumber(ARGV[8]), tonumber(ARGV[11])}\n")
	assert.Contains(t, constants(a), "local G = {0, 0}\n")
	assert.Equal(t, []any{"-5", "1000000", "3000", "-1048576", "3600000000", "3602000", "", "3660000000", "", "1000", "3602000", "3602000"}, a.vals)
	args, _ := a.scriptArgs("m", false, rt.t)
	assert.Equal(t, append([]any{"m", "0", "0", "1", "", ""}, a.vals...), args)

	bounded := mk("a", Options{}, sec, hour)
	assert.NotEqual(t, a.admit.Hash(), bounded.admit.Hash())
	assert.Contains(t, constants(bounded), "local R = {ARGV[7], tonumber(ARGV[10])}\n", "the hour is bucketed under the default policy")
	assert.Contains(t, constants(bounded), "local G = {0, tonumber(ARGV[12])}\n")
	assert.Equal(t, "56250000", bounded.vals[5])
	assert.Contains(t, constants(bounded), ", 1, ARGV[19]\nlocal R", "idem: the exact rule tells a retry")
	allBuckets := mk("a", Options{}, rule.Rule{Limit: 5, Window: time.Second, Buckets: 4})
	assert.Contains(t, constants(allBuckets), ", 0, ARGV[16]\nlocal R", "idem: no exact rule")

	client := mk("a", Options{TimeSource: Client, Exact: true}, sec, hour)
	assert.Contains(t, constants(client), "local serverTime, maxSkew, ahead, retry = false, tonumber(ARGV[13]),")
	assert.Equal(t, "1000000", client.vals[6], "the skew bound")
	assert.NotEqual(t, a.admit.Hash(), client.admit.Hash())

	// The example constants of admit.lua are replaced, not added to.
	assert.Equal(t, 1, strings.Count(a.Script(), "local W = {"))
	assert.Equal(t, 1, strings.Count(a.Script(), "local T = {"))
	assert.Contains(t, a.Script(), "local T = {ARGV[9], ARGV[12]} -- key expiries\n")
}

// TestSourceRaises: the text Source returns has no values, and running it
// is an error, not a limiter that admits every call.
func TestSourceRaises(t *testing.T) {
	_, c := newMini(t)
	err := c.Eval(context.Background(), Source(), []string{"k", "m", "s"}, "member", "0", "0", "0").Err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Limiter.Script")
}

// constants returns the constants block of l's script.
func constants(l *Limiter) string {
	s := l.Script()
	start, end := strings.Index(s, constantsStart), strings.Index(s, constantsEnd)
	if start < 0 || end < start {
		return ""
	}
	return s[start:end]
}

// TestBucketFieldNotANumber: a bucket hash whose total was overwritten with
// something other than a number ends the call with an error and records
// nothing, instead of counting the total as zero.
func TestBucketFieldNotANumber(t *testing.T) {
	m, c := newMini(t)
	rt := &stepRT{t: epoch}
	l, err := New(c, rt, []rule.Rule{{Limit: 2, Window: time.Second, Buckets: 4}}, Options{Key: "nan", TimeSource: Client, MaxSkew: -1})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, l.Acquire(ctx))
	require.NoError(t, l.Acquire(ctx))
	key := l.Keys()[0]
	m.HSet(key, "t", "two")
	before := m.HGet(key, "c")
	require.Error(t, l.Acquire(ctx), "a call admitted over a total that is not a number")
	assert.Equal(t, "two", m.HGet(key, "t"))
	assert.Equal(t, before, m.HGet(key, "c"), "the call was counted")
}

// TestBucketBoundMovesInTheNewestBucket: with a window that is not a whole
// number of bucket widths (1 s in 3 buckets of 333,334 µs), the start of
// the bound can pass a bucket while the call still falls in the newest
// one; the record then moves f and adds to c in the same HSET.
func TestBucketBoundMovesInTheNewestBucket(t *testing.T) {
	m, c := newMini(t)
	const g = 333_334 // µs
	rt := &stepRT{t: 9 * g * 1000}
	l, err := New(c, rt, []rule.Rule{{Limit: 10, Window: time.Second, Buckets: 3}}, Options{Key: "move", TimeSource: Virtual, MemberPrefix: "p:"})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, l.Acquire(ctx)) // bound 6 to 9
	key := l.Keys()[0]
	assert.Equal(t, []string{"6", "9", "1", "1"}, []string{m.HGet(key, "f"), m.HGet(key, "l"), m.HGet(key, "c"), m.HGet(key, "t")})
	rt.t = (10*g - 2) * 1000 // bound 7 to 9: bucket 6 leaves, the call is in 9
	require.NoError(t, l.Acquire(ctx))
	assert.Equal(t, []string{"7", "9", "2", "2"}, []string{m.HGet(key, "f"), m.HGet(key, "l"), m.HGet(key, "c"), m.HGet(key, "t")})
}

// TestBucketFieldNotFinite: on a real redis-server, whose Lua converts
// 'nan' and 'inf' as numbers, a bucket total overwritten with one of them
// ends the call with ErrCorrupt and records nothing; a NaN total would
// otherwise never reach the limit and admit every call.
func TestBucketFieldNotFinite(t *testing.T) {
	c := realClient(t, redistest.Start(t))
	rt := &stepRT{t: epoch}
	for _, bad := range []string{"nan", "inf", "-inf"} {
		t.Run(bad, func(t *testing.T) {
			l, err := New(c, rt, []rule.Rule{{Limit: 2, Window: time.Second, Buckets: 4}}, Options{Key: "finite-" + bad, TimeSource: Client, MaxSkew: -1})
			require.NoError(t, err)
			ctx := context.Background()
			require.NoError(t, l.Acquire(ctx))
			key := l.Keys()[0]
			require.NoError(t, c.HSet(ctx, key, "t", bad).Err())
			before := c.HGet(ctx, key, "c").Val()
			assert.ErrorIs(t, l.Acquire(ctx), ErrCorrupt)
			assert.Equal(t, before, c.HGet(ctx, key, "c").Val(), "the call was counted")
		})
	}
}
