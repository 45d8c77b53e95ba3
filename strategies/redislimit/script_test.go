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

// TestScriptPerTimeSource: a limiter's copy of admit.lua holds only its
// time source and lease and reads every value from ARGV, so limiters of
// any rules share one copy per time source (one script in the server's
// cache however many tenants); the values are the rules' and the
// prefixes of the bucketed ones' fields in the head.
func TestScriptPerTimeSource(t *testing.T) {
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
	bounded := mk("a", Options{}, sec, hour)
	assert.True(t, a.admit == other.admit && a.admit == bounded.admit, "limiters of other rules share a script")
	assert.Equal(t, "-- BEGIN CONSTANTS\nlocal serverTime, virtual, lease = true, false, 1000\n", constants(a))
	assert.Equal(t, []any{"3660000000", "", "", "-5", "1000000", "0", "-1048576", "3600000000", "0"}, a.vals)
	args, _ := a.scriptArgs("m", false, rt.t)
	assert.Equal(t, append([]any{"m", "0", "0", "1"}, a.vals...), args, "server time sends no instants")
	assert.Equal(t, []any{"3660000000", "", "", "-5", "1000000", "0", "1048576", "3600000000", "56250000",
		"1h:b64:"}, bounded.vals, "the hour is bucketed under the default policy; its fields in the head start 1h:b64:")

	client := mk("a", Options{TimeSource: Client, Exact: true}, sec, hour)
	assert.Equal(t, "-- BEGIN CONSTANTS\nlocal serverTime, virtual, lease = false, false, 1000\n", constants(client))
	assert.Equal(t, "1000000", client.vals[2], "the skew bound")
	args, _ = client.scriptArgs("m", false, rt.t)
	assert.Equal(t, []any{"m", "0", "0", "1", "1780000000000000", "1780000000000000"}, args[:6], "the check and record instants")
	virtual := mk("a", Options{TimeSource: Virtual, Exact: true}, sec, hour)
	assert.Contains(t, constants(virtual), "= false, true, 1000\n")
	assert.Len(t, map[string]bool{a.admit.Hash(): true, client.admit.Hash(): true, virtual.admit.Hash(): true}, 3)

	// The example constants of admit.lua are replaced, not added to.
	assert.Equal(t, 1, strings.Count(a.Script(), "local serverTime"))
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
	before := m.HGet(head, "n")
	require.Error(t, l.Acquire(ctx), "a call admitted over a total that is not a number")
	assert.Equal(t, "two", m.HGet(head, headField(r, 't')))
	assert.Equal(t, before, m.HGet(head, "n"), "the call was counted")
}

// TestBucketBoundMovesInTheNewestBucket: with a window that is not a whole
// number of bucket widths (1 s in 3 buckets of 333,334 µs), the start of
// the bound can pass a bucket while the call still falls in the newest
// one; the record then moves f and adds to t in the same HSET.
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
		for _, f := range "flbt" {
			out = append(out, m.HGet(head, headField(l.Rules()[0], byte(f))))
		}
		return out
	}
	assert.Equal(t, []string{"6", "9", "0", "1"}, get(), "f, l, b (the total before l) and t")
	rt.t = (10*g - 2) * 1000 // bound 7 to 9: bucket 6 leaves, the call is in 9
	require.NoError(t, l.Acquire(ctx))
	assert.Equal(t, []string{"7", "9", "0", "2"}, get())
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
			before := c.HGet(ctx, head, "n").Val()
			assert.ErrorIs(t, l.Acquire(ctx), ErrCorrupt)
			assert.Equal(t, before, c.HGet(ctx, head, "n").Val(), "the call was counted")
		})
	}
}
