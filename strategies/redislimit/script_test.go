package redislimit

import (
	"context"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
)

// TestScriptPerTimeSource: a limiter's copy of admit.lua holds only its
// time source and reads every value from ARGV, so limiters of
// any rules share one copy per time source (one script in the server's
// cache however many tenants); the values are the configuration, the
// hold after a loss (the longest window), the rules' and the names of the
// bucketed ones' fields in the head.
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
	assert.Equal(t, "-- BEGIN CONSTANTS\nlocal serverTime, virtual = true, false\n", constants(a))
	assert.Equal(t, []any{"56250", "3660000000", "", "", "server time: 1048576/1h:exact, 5/1s:exact", "3600000000",
		"-5", "1000000", "0", "-1048576", "3600000000", "0"}, a.vals,
		"the lease is a 64th of the hour")
	assert.Equal(t, "1024000", other.vals[0], "the lease of a day's window is at most 1024 s")
	args, _ := a.scriptArgs("m", false, rt.t)
	assert.Equal(t, append([]any{"m", "0", "0", "1"}, a.vals...), args, "server time sends no instants")
	assert.Equal(t, []any{"56250", "3660000000", "", "", "server time: 1048576/1h:b64, 5/1s:exact", "3600000000",
		"-5", "1000000", "0", "1048576", "3600000000", "56250000", "1h:b64"}, bounded.vals, "the hour is bucketed under the default policy; its state field in the head is 1h:b64")

	client := mk("a", Options{TimeSource: Client, Exact: true}, sec, hour)
	assert.Equal(t, "-- BEGIN CONSTANTS\nlocal serverTime, virtual = false, false\n", constants(client))
	assert.Equal(t, "1000000", client.vals[3], "the skew bound")
	args, _ = client.scriptArgs("m", false, rt.t)
	assert.Equal(t, []any{"m", "0", "0", "1", "1780000000000000", "1780000000000000"}, args[:6], "the check and record instants")
	virtual := mk("a", Options{TimeSource: Virtual, Exact: true}, sec, hour)
	assert.Contains(t, constants(virtual), "= false, true\n")
	short := mk("c", Options{}, sec)
	assert.Equal(t, "1000", short.vals[0], "the lease is at least a second")
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
	m.HSet(head, stateField(r), "two,0,0,0")
	before := m.HGet(head, "n")
	require.Error(t, l.Acquire(ctx), "a call admitted over a total that is not a number")
	assert.Equal(t, "two,0,0,0", m.HGet(head, stateField(r)))
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
	get := func() [4]int64 { return decodeState(t, m.HGet(head, stateField(l.Rules()[0]))) }
	assert.Equal(t, [4]int64{1, 0, 6, 9}, get(), "t, b (the total before l), f and l")
	rt.t = (10*g - 2) * 1000 // bound 7 to 9: bucket 6 leaves, the call is in 9
	require.NoError(t, l.Acquire(ctx))
	assert.Equal(t, [4]int64{2, 0, 7, 9}, get())
}

// TestBucketFieldNotFinite: on a real redis-server, whose Lua unpacks NaN
// and infinities as numbers, a rule state overwritten with one of them, or
// with text, ends the call with ErrCorrupt and records nothing; a NaN
// total would otherwise never reach the limit and admit every call.
func TestBucketFieldNotFinite(t *testing.T) {
	c := realClient(t, redistest.Start(t))
	rt := &stepRT{t: epoch}
	for bad, state := range map[string]string{
		"nan": packState(math.NaN(), 0, 0, 0), "inf": packState(math.Inf(1), 0, 0, 0),
		"-inf": packState(0, 0, math.Inf(-1), 0), "text": "1,0,0,0", "short": packState(1, 0, 0, 0)[:31],
	} {
		t.Run(bad, func(t *testing.T) {
			l, err := New(c, rt, []rule.Rule{{Limit: 2, Window: time.Second, Buckets: 4}}, Options{Key: "finite-" + bad, TimeSource: Client, MaxSkew: -1})
			require.NoError(t, err)
			ctx := context.Background()
			require.NoError(t, l.Acquire(ctx))
			head, r := l.script[0], l.Rules()[0]
			require.NoError(t, c.HSet(ctx, head, stateField(r), state).Err())
			before := c.HGet(ctx, head, "n").Val()
			assert.ErrorIs(t, l.Acquire(ctx), ErrCorrupt)
			assert.Equal(t, before, c.HGet(ctx, head, "n").Val(), "the call was counted")
		})
	}
}

// decodeState reads a rule's state field, as the real server packs it (four
// little-endian doubles) or as the embedded one writes it (text).
func decodeState(t *testing.T, f string) [4]int64 {
	var out [4]int64
	if len(f) == 32 && !strings.Contains(f, ",") {
		for i := range out {
			out[i] = int64(math.Float64frombits(binary.LittleEndian.Uint64([]byte(f[8*i:]))))
		}
		return out
	}
	parts := strings.Split(f, ",")
	require.Len(t, parts, 4, "state %q", f)
	for i, p := range parts {
		x, err := strconv.ParseInt(p, 10, 64)
		require.NoError(t, err, "state %q", f)
		out[i] = x
	}
	return out
}

// packState packs four numbers as the real server's script does.
func packState(x ...float64) string {
	b := make([]byte, 0, 32)
	for _, v := range x {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return string(b)
}
