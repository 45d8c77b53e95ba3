package redislimit

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

// scriptStore reads and writes keys through EVAL, which every
// redis.Scripter runs (the embedded server's client offers nothing else).
type scriptStore struct {
	t *testing.T
	c redis.Scripter
}

func (s scriptStore) do(args ...any) any {
	s.t.Helper()
	v, err := s.c.Eval(context.Background(), "return redis.call(unpack(ARGV))", nil, args...).Result()
	if err == redis.Nil {
		return nil
	}
	require.NoError(s.t, err, "%v", args)
	return v
}

// dump is every key of l as text, its head without n (a refused call of
// exact rules alone counts itself in n by design): what a refused call
// must leave as it found it.
func (s scriptStore) dump(l *Limiter) string {
	s.t.Helper()
	v, err := s.c.Eval(context.Background(), `
local out = {}
for i = 1, #KEYS do
  local kind = redis.call('TYPE', KEYS[i]).ok
  local got = {}
  if kind == 'hash' then got = redis.call('HGETALL', KEYS[i])
  elseif kind == 'zset' then got = redis.call('ZRANGE', KEYS[i], 0, -1, 'WITHSCORES')
  elseif kind == 'string' then got = {redis.call('GET', KEYS[i])} end
  for j = 1, #got, 2 do
    if not (i == 1 and got[j] == 'n') then out[#out + 1] = KEYS[i] .. ' ' .. got[j] .. '=' .. tostring(got[j + 1]) end
  end
end
return out`, l.script).StringSlice()
	require.NoError(s.t, err)
	slices.Sort(v)
	return strings.Join(v, "\n")
}

// state reads the first kept rule's state field of l, and whether the
// server packs it as doubles (a real redis-server) or writes it as text.
func (s scriptStore) state(l *Limiter) (string, [4]float64, bool) {
	s.t.Helper()
	name := ruleStateField(l.rules[0])
	f, _ := s.do("HGET", l.script[0], name).(string)
	require.NotEmpty(s.t, f, "no state field %s", name)
	var out [4]float64
	if len(f) == 32 && !strings.Contains(f, ",") {
		for i, x := range decodeState(s.t, f) {
			out[i] = float64(x)
		}
		return name, out, true
	}
	for i, x := range decodeState(s.t, f) {
		out[i] = float64(x)
	}
	return name, out, false
}

// ruleStateField names the head field of a kept rule that has one.
func ruleStateField(r rule.Rule) string {
	if r.Kind != rule.Sliding {
		return windowName(r.Window) + ":" + kindTag(r) + unitName(r)
	}
	return stateField(r)
}

// encodeState writes four numbers as the server at hand would.
func encodeState(packed bool, x [4]float64) string {
	if packed {
		return packState(x[:]...)
	}
	parts := make([]string, 4)
	for i, v := range x {
		parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strings.Join(parts, ",")
}

// corruption is a state the script never writes: after admissions at
// calls (ns after epoch) under rules, corrupt rewrites some of it, and a
// call at next (with sweep, the sweep cue) must be refused with
// ErrCorrupt, leaving every key as it was.
type corruption struct {
	name    string
	rules   string
	calls   []int64
	next    int64
	sweep   bool
	corrupt func(s scriptStore, l *Limiter)
}

// setState returns a corruption of the first rule's state field: edit
// gets the numbers the script wrote.
func setState(edit func(x [4]float64) [4]float64) func(scriptStore, *Limiter) {
	return func(s scriptStore, l *Limiter) {
		name, x, packed := s.state(l)
		s.do("HSET", l.script[0], name, encodeState(packed, edit(x)))
	}
}

// setRaw writes text into the first rule's state field.
func setRaw(text func(packed bool, x [4]float64) string) func(scriptStore, *Limiter) {
	return func(s scriptStore, l *Limiter) {
		name, x, packed := s.state(l)
		s.do("HSET", l.script[0], name, text(packed, x))
	}
}

// setField writes value into field of the head.
func setField(field, value string) func(scriptStore, *Limiter) {
	return func(s scriptStore, l *Limiter) { s.do("HSET", l.script[0], field, value) }
}

// setBuckets writes value over every count of the first rule's bucket hash.
func setBuckets(value string) func(scriptStore, *Limiter) {
	return func(s scriptStore, l *Limiter) {
		fields, _ := s.do("HKEYS", l.script[1]).([]any)
		require.NotEmpty(s.t, fields, "no bucket counts in %s", l.script[1])
		for _, f := range fields {
			s.do("HSET", l.script[1], f, value)
		}
	}
}

// addEntry adds a member at score to the sorted set of l's exact rules.
func addEntry(score string) func(scriptStore, *Limiter) {
	return func(s scriptStore, l *Limiter) { s.do("ZADD", l.script[1], score, "bogus") }
}

func each(x [4]float64, i int, v float64) [4]float64 { x[i] = v; return x }

// corruptions lists, per kind, states the script never writes: negative,
// fractional, absurd, NaN, infinite, truncated and text values, counts
// above the rule's limit, bounds out of order, instants far ahead.
func corruptions() []corruption {
	ms := int64(time.Millisecond)
	one := []int64{0}
	kinds := map[string]string{"fixed": "3/1s fixed", "bucket": "1/1s burst 2", "bucketed": "100/1s"}
	var out []corruption
	add := func(kind, name string, f func(scriptStore, *Limiter)) {
		out = append(out, corruption{name: kind + ": " + name, rules: kinds[kind], calls: one, next: ms, corrupt: f})
	}
	for _, kind := range []string{"fixed", "bucket", "bucketed"} {
		add(kind, "a negative count", setState(func(x [4]float64) [4]float64 { return each(x, 0, -100) }))
		add(kind, "a count of -1000", setState(func(x [4]float64) [4]float64 { return each(x, 0, -1000) }))
		add(kind, "a fractional count", setState(func(x [4]float64) [4]float64 { return each(x, 0, 0.5) }))
		add(kind, "a count of 1e300", setState(func(x [4]float64) [4]float64 { return each(x, 0, 1e300) }))
		add(kind, "a NaN count", setState(func(x [4]float64) [4]float64 { return each(x, 0, math.NaN()) }))
		add(kind, "an infinite instant", setState(func(x [4]float64) [4]float64 { return each(x, 3, math.Inf(1)) }))
		add(kind, "an instant a century ahead", setState(func(x [4]float64) [4]float64 { return each(x, 3, x[3]+3.2e15) }))
		add(kind, "an instant past 2^53", setState(func(x [4]float64) [4]float64 { return each(x, 3, -1e17) }))
		add(kind, "a fractional instant", setState(func(x [4]float64) [4]float64 { return each(x, 3, x[3]-0.5) }))
		add(kind, "truncated", setRaw(func(packed bool, x [4]float64) string {
			if f := encodeState(packed, x); packed {
				return f[:31]
			} else {
				return f[:strings.LastIndex(f, ",")]
			}
		}))
		add(kind, "text", setRaw(func(bool, [4]float64) string { return "a lot" }))
	}
	add("fixed", "a count above the limit", setState(func(x [4]float64) [4]float64 { return each(x, 0, 4) }))
	add("fixed", "a second number", setState(func(x [4]float64) [4]float64 { return each(x, 1, 7) }))
	add("fixed", "a third number", setState(func(x [4]float64) [4]float64 { return each(x, 2, -7) }))
	add("bucket", "a level above the burst", setState(func(x [4]float64) [4]float64 { return each(x, 0, 3e6) }))
	add("bucket", "a second number", setState(func(x [4]float64) [4]float64 { return each(x, 1, 7) }))
	add("bucketed", "a total above the limit", setState(func(x [4]float64) [4]float64 { return each(x, 0, 101) }))
	add("bucketed", "a negative total before the newest bucket", setState(func(x [4]float64) [4]float64 { return each(x, 1, -1) }))
	add("bucketed", "a total before the newest bucket above the total", setState(func(x [4]float64) [4]float64 { return each(x, 1, x[0]+1) }))
	add("bucketed", "the oldest bucket after the newest", setState(func(x [4]float64) [4]float64 { return each(x, 2, x[3]+1) }))
	add("bucketed", "a bound of a billion buckets", setState(func(x [4]float64) [4]float64 { return each(x, 2, x[3]-1e9) }))
	for _, n := range []string{"-5", "1.5", "nan", "inf", "1e300", "99999999999999999999", "9007199254740993", "many"} {
		add("bucketed", "a count n of "+n, setField("n", n))
		out = append(out, corruption{name: "exact: a count n of " + n, rules: "3/1s", calls: one, next: ms, corrupt: setField("n", n)})
	}
	return append(out, bucketCorruptions()...)
}

// bucketCorruptions are bad counts in a bucketed rule's hash, found where
// a call drops the bucket, where a full rule sums the buckets for its
// wait, and where a late call counts in an older bucket; bad entries of
// an exact rule's set; and a bad record time of the last member.
func bucketCorruptions() []corruption {
	ms, us := int64(time.Millisecond), int64(time.Microsecond)
	// A late call lands in a bucket before the newest while its window
	// starts in a kept one only when the width does not divide the window
	// (TestBucketedLateCallCountsInItsBucket): 10 s in 3 buckets.
	const g = 3_333_334 // µs
	start := (epoch/1000/g+10)*g*1000 - epoch
	var out []corruption
	for _, v := range []string{"-5", "1000", "1.5", "nan", "many"} {
		out = append(out,
			corruption{name: "bucket hash dropped: " + v, rules: "4/1s:b4", calls: []int64{0, 300 * ms}, next: 1300 * ms, corrupt: setBuckets(v)},
			corruption{name: "bucket hash summed: " + v, rules: "2/1s:b4", calls: []int64{0, 300 * ms}, next: 400 * ms, corrupt: setBuckets(v)},
			corruption{name: "bucket hash late: " + v, rules: "3/10s:b3", calls: []int64{start - 1000*ms, start}, next: start - us, corrupt: setBuckets(v)})
	}
	for _, score := range []string{"+inf", "1e300"} {
		out = append(out,
			corruption{name: "set entry deciding: " + score, rules: "1/1s", calls: []int64{0}, next: 2000 * ms, corrupt: addEntry(score)},
			corruption{name: "set entry swept: " + score, rules: "5/1s", calls: []int64{0}, next: 2000 * ms, sweep: true, corrupt: addEntry(score)},
			corruption{name: "set entry of a cost rule: " + score, rules: "5 tokens/1s:exact", calls: []int64{0}, next: 2000 * ms, corrupt: addEntry(score)})
	}
	return append(out, corruption{name: "the last member's record time", rules: "100/1s", calls: []int64{0}, next: ms,
		corrupt: func(s scriptStore, l *Limiter) { s.do("HSET", l.script[0], "m", "next", "a", "soon") }})
}

// checkCorruptStates runs every corruption on c: each is refused with
// ErrCorrupt (never an admission, redis: nil or an unexpected reply), and
// the refused call changes nothing.
func checkCorruptStates(t *testing.T, c redis.Scripter) {
	for i, tc := range corruptions() {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := rule.ParseList(tc.rules)
			require.NoError(t, err)
			rt := &stepRT{t: epoch}
			l, err := New(c, rt, rules, Options{Key: fmt.Sprintf("corrupt-%d", i), TimeSource: Client, MaxSkew: -1})
			require.NoError(t, err)
			ctx := context.Background()
			for j, at := range tc.calls {
				rt.t = epoch + at
				wait, _, _, err := l.tryCost(ctx, fmt.Sprintf("m%d", j), false, l.tail())
				require.NoError(t, err)
				require.Zero(t, wait)
			}
			s := scriptStore{t, c}
			tc.corrupt(s, l)
			before := s.dump(l)
			rt.t = epoch + tc.next
			wait, _, _, err := l.tryCost(ctx, "next", tc.sweep, l.tail())
			require.ErrorIs(t, err, ErrCorrupt, "wait %v", wait)
			assert.Contains(t, err.Error(), "rlcheck:{corrupt-", "the message names the key")
			assert.Equal(t, before, s.dump(l), "the refused call changed the state")
		})
	}
}

// tail is the script's cost values of a call costing 1 in every unit.
func (l *Limiter) tail() []any {
	if len(l.units) == 0 {
		return nil
	}
	_, tail := l.costArgs("", l.ones)
	return tail
}

// TestCorruptStatesRefused: a fixed rule's count set to -100 let
// 103 of the next 200 calls of its window through, and a bucketed 100/1s
// with a total of -1000 admitted 1,100. Any state the script did not
// write is now ErrCorrupt, on every kind, on miniredis (state as text)
// and a real redis-server (packed doubles); the embedded server's fast
// path runs the same cases (TestEmbeddedCorruptStatesRefused).
func TestCorruptStatesRefused(t *testing.T) {
	for name, c := range stores(t) {
		t.Run(name, func(t *testing.T) { checkCorruptStates(t, c) })
	}
}
