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
	assert.Contains(t, constants(a), "local R = {ARGV[8], ARGV[10]}\n")
	assert.Contains(t, constants(a), "local W = {tonumber(ARGV[7]), tonumber(ARGV[9])}\n")
	assert.Contains(t, constants(a), "local G = {0, 0}\n")
	assert.Contains(t, constants(a), ", 1, ARGV[11], tonumber(ARGV[12]), 0, 0\n", "the first rule names the set; no head field is read")
	assert.Equal(t, []any{"1000000", "-5", "3600000000", "-1048576", "3602000", "3601000000", "", "3660000000", "", "3602000"}, a.vals)
	args, _ := a.scriptArgs("m", false, rt.t)
	assert.Equal(t, append([]any{"m", "0", "0", "1", "", ""}, a.vals...), args)

	bounded := mk("a", Options{}, sec, hour)
	assert.NotEqual(t, a.admit.Hash(), bounded.admit.Hash())
	assert.Contains(t, constants(bounded), "local R = {ARGV[8], tonumber(ARGV[10])}\n", "the hour is bucketed under the default policy")
	assert.Contains(t, constants(bounded), "local G = {0, tonumber(ARGV[11])}\n")
	assert.Contains(t, constants(bounded), "local F = {0, 1}\n")
	assert.Equal(t, "56250000", bounded.vals[4])
	assert.Contains(t, constants(bounded), ", 1, ARGV[13], tonumber(ARGV[14]), 15, 19\n", "the set, and the head fields to read")
	assert.Equal(t, []any{"1h:b64:t", "1h:b64:f", "1h:b64:l", "1h:b64:c", "n"}, bounded.vals[15-7:19-7+1])
	allBuckets := mk("a", Options{}, rule.Rule{Limit: 5, Window: time.Second, Buckets: 4})
	assert.Contains(t, constants(allBuckets), ", 0, '0', 0, 11, 16\n", "no set; the head tells a retry (m)")
	assert.Equal(t, "m", allBuckets.vals[16-7])

	client := mk("a", Options{TimeSource: Client, Exact: true}, sec, hour)
	assert.Contains(t, constants(client), "local serverTime, maxSkew, ahead, retry = false, tonumber(ARGV[13]),")
	assert.Equal(t, "1000000", client.vals[6], "the skew bound")
	assert.Equal(t, "7200000000", client.vals[5], "a caller's clock keeps the set twice its window")
	assert.NotEqual(t, a.admit.Hash(), client.admit.Hash())

	// The example constants of admit.lua are replaced, not added to.
	assert.Equal(t, 1, strings.Count(a.Script(), "local W = {"))
	assert.Equal(t, 1, strings.Count(a.Script(), "local T = {"))
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
	head, r := l.script[0], l.Rules()[0]
	m.HSet(head, headField(r, 't'), "two")
	before := m.HGet(head, headField(r, 'c'))
	require.Error(t, l.Acquire(ctx), "a call admitted over a total that is not a number")
	assert.Equal(t, "two", m.HGet(head, headField(r, 't')))
	assert.Equal(t, before, m.HGet(head, headField(r, 'c')), "the call was counted")
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
	head := l.script[0]
	get := func() []string {
		var out []string
		for _, f := range "flct" {
			out = append(out, m.HGet(head, headField(l.Rules()[0], byte(f))))
		}
		return out
	}
	assert.Equal(t, []string{"6", "9", "1", "1"}, get())
	rt.t = (10*g - 2) * 1000 // bound 7 to 9: bucket 6 leaves, the call is in 9
	require.NoError(t, l.Acquire(ctx))
	assert.Equal(t, []string{"7", "9", "2", "2"}, get())
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
			head, r := l.script[0], l.Rules()[0]
			require.NoError(t, c.HSet(ctx, head, headField(r, 't'), bad).Err())
			before := c.HGet(ctx, head, headField(r, 'c')).Val()
			assert.ErrorIs(t, l.Acquire(ctx), ErrCorrupt)
			assert.Equal(t, before, c.HGet(ctx, head, headField(r, 'c')).Val(), "the call was counted")
		})
	}
}
