package redislimit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

// TestScriptPerConfiguration: each limiter runs admit.lua with its own
// constants, and limiters of the same rules and options share one copy
// (one SHA in the server's script cache), whatever their keys.
func TestScriptPerConfiguration(t *testing.T) {
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
	a := mk("a", Options{}, sec, hour)
	b := mk("b", Options{}, sec, hour)
	assert.True(t, a.admit == b.admit, "limiters of the same rules and options share a script")
	assert.Contains(t, constants(a), "local W = {1000000, 3600000000}\n")
	assert.Contains(t, constants(a), "local R = {'-5', '-1048576'}\n")
	assert.Contains(t, constants(a), "local serverTime, maxSkew, ahead, retry = true, nil,")

	bounded := mk("a", Options{Bounded: true}, sec, hour)
	assert.NotEqual(t, a.admit.Hash(), bounded.admit.Hash())
	assert.Contains(t, constants(bounded), "local R = {'-5', 1048576}\n", "the hour is bucketed under the default policy")
	assert.Contains(t, constants(bounded), "local G = {0, 56250000}\n")
	assert.Contains(t, constants(bounded), "', 1\nlocal R", "idem: the exact rule tells a retry")
	allBuckets := mk("a", Options{}, rule.Rule{Limit: 5, Window: time.Second, Buckets: 4})
	assert.Contains(t, constants(allBuckets), "', 0\nlocal R", "idem: no exact rule")

	client := mk("a", Options{TimeSource: Client}, sec, hour)
	assert.Contains(t, constants(client), "local serverTime, maxSkew, ahead, retry = false, 1000000,")
	assert.NotEqual(t, a.admit.Hash(), client.admit.Hash())

	// The example constants of admit.lua are replaced, not added to.
	assert.Equal(t, 1, strings.Count(a.Script(), "local W = {"))
	assert.Equal(t, 1, strings.Count(a.Script(), "local T = {"))
	assert.Contains(t, a.Script(), "local T = {'3000', '3602000'} -- key expiries\n")
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

// TestScriptCacheBounded: once maxScripts copies are kept, a limiter of a
// new configuration gets a copy of its own, which is not kept.
func TestScriptCacheBounded(t *testing.T) {
	_, c := newMini(t)
	rt := &stepRT{t: epoch}
	var added []string
	t.Cleanup(func() {
		for _, text := range added {
			admitScripts.Delete(text)
		}
		scriptsKept.Add(-int64(len(added)))
	})
	mk := func(limit int) *Limiter {
		l, err := New(c, rt, []rule.Rule{{Limit: limit, Window: 7 * time.Second}}, Options{Key: "cap"})
		require.NoError(t, err)
		return l
	}
	for limit := 1_000_000; scriptsKept.Load() < maxScripts; limit++ {
		before := scriptsKept.Load()
		l := mk(limit)
		if scriptsKept.Load() > before {
			added = append(added, l.Script())
		}
	}
	a, b := mk(999), mk(999)
	assert.Equal(t, a.Script(), b.Script())
	assert.False(t, a.admit == b.admit, "a configuration past the bound was kept")
	_, kept := admitScripts.Load(a.Script())
	assert.False(t, kept)
	assert.Equal(t, int64(maxScripts), scriptsKept.Load())
	require.NoError(t, a.Acquire(context.Background()))
}
