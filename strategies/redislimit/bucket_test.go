package redislimit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// newBucketWorkload draws rules kept in buckets of whole microseconds (so
// the script's buckets and the in-memory ones are the same instants),
// some exact, and arrivals with ties and gaps of exactly a window and
// exactly a bucket width.
func newBucketWorkload(seed uint64) workload {
	r := rand.New(rand.NewPCG(seed, 0xb0c))
	var w workload
	var gaps []int64
	seen := map[string]bool{}
	for range 1 + r.IntN(3) {
		k := 1 + r.IntN(8)
		g := time.Duration(1+r.IntN(300)) * time.Millisecond
		if r.IntN(3) == 0 {
			g += time.Duration(r.IntN(1000)) * time.Microsecond
		}
		ru := rule.Rule{Limit: 1 + r.IntN(12), Window: time.Duration(k) * g, Buckets: k}
		if r.IntN(4) == 0 {
			ru.Buckets = rule.Exact
		}
		if key := ruleKey("", ru, ru.Buckets); seen[key] {
			continue
		} else {
			seen[key] = true
		}
		w.rules = append(w.rules, ru)
		gaps = append(gaps, int64(ru.Window), int64(g))
	}
	t := int64(0)
	for range 30 + r.IntN(60) {
		switch r.IntN(5) {
		case 0: // a tie
		case 1:
			t += gaps[r.IntN(len(gaps))]
		default:
			t += int64(r.IntN(100_000)) * 1000
		}
		w.arrivals = append(w.arrivals, t)
	}
	return w
}

// bucketSeeds runs the property over seeds on c: the script gives the same
// sends as the in-memory combined limiter over the same bookkeeping, and
// the checker finds no violation, half-open or closed.
func bucketSeeds(t *testing.T, c redis.Scripter, seeds int, sources []TimeSource, set func(int64)) {
	policySeeds(t, c, seeds, sources, set, newBucketWorkload)
}

// policySeeds is bucketSeeds over the workloads of gen, against the
// in-memory combined limiter under the default policy (which keeps rules
// that name their bookkeeping as they say).
func policySeeds(t *testing.T, c redis.Scripter, seeds int, sources []TimeSource, set func(int64), gen func(uint64) workload) {
	for seed := range uint64(seeds) {
		w := gen(seed)
		rt := &stepRT{t: epoch}
		want := w.drive(t, rt, strategies.NewCombinedBounded(rt, w.rules...))
		rep, err := checker.Check(want, checker.Config{Rules: w.rules})
		require.NoError(t, err)
		require.Zero(t, rep.Violations(), "seed %d: combined overfills", seed)
		// Exact logs keep half-open windows only; buckets keep closed ones too.
		var bucketed []rule.Rule
		for _, r := range w.rules {
			if r.Keeping() > 0 {
				bucketed = append(bucketed, r)
			}
		}
		if len(bucketed) > 0 {
			rep, err := checker.Check(want, checker.Config{Rules: bucketed, Boundary: rule.Closed})
			require.NoError(t, err)
			require.Zero(t, rep.Violations(), "seed %d: buckets overfill a closed window", seed)
		}
		for _, src := range sources {
			rt := &stepRT{t: epoch}
			if src == Server {
				rt.onAdvance = set
				rt.set(epoch)
			}
			key := fmt.Sprintf("b%d-%v", seed, src)
			require.NoError(t, Reset(context.Background(), c, key, w.rules))
			l, err := New(c, rt, w.rules, Options{Key: key, TimeSource: src, MemberPrefix: "p:", MaxSkew: -1})
			require.NoError(t, err)
			got := w.drive(t, rt, l)
			require.Equal(t, want, got, "seed %d %v rules %v: the script against combined", seed, src, w.rules)
		}
	}
}

// TestBucketedMatchesCombined: exact and bucketed rules mixed in one
// atomic decision, on miniredis with every time source.
func TestBucketedMatchesCombined(t *testing.T) {
	t.Parallel()
	m, c := newMini(t)
	bucketSeeds(t, c, int(seeds(5, 15)), []TimeSource{Server, Client, Virtual}, func(now int64) { m.SetTime(time.Unix(0, now)) })
}

// TestRealBucketedMatchesCombined is the same on a real server's Lua,
// with the caller's clocks (a real server's TIME cannot be set).
func TestRealBucketedMatchesCombined(t *testing.T) {
	c := realClient(t, redistest.Start(t))
	bucketSeeds(t, c, int(seeds(6, 20)), []TimeSource{Client, Virtual}, nil)
}

// newPolicyWorkload makes rules that leave their bookkeeping open, with
// limits on both sides of rule.ExactUpTo (so New keeps some exact and
// buckets the others without being asked), and arrivals dense enough to
// fill them, with ties and gaps of exactly a window.
func newPolicyWorkload(seed uint64) workload {
	r := rand.New(rand.NewPCG(seed, 0xdef))
	var w workload
	seen := map[time.Duration]bool{}
	for range 1 + r.IntN(3) {
		// Whole microseconds per bucket: Redis rounds a bucket's width up
		// to a microsecond, memory to a nanosecond.
		win := time.Duration(300+r.IntN(6600)) * time.Duration(rule.DefaultBuckets) * time.Microsecond
		if seen[win] {
			continue
		}
		seen[win] = true
		w.rules = append(w.rules, rule.Rule{Limit: rule.ExactUpTo - 12 + r.IntN(30), Window: win})
	}
	t := int64(0)
	for range 120 + r.IntN(120) {
		switch r.IntN(8) {
		case 0: // a tie
		case 1:
			t += int64(w.rules[r.IntN(len(w.rules))].Window)
		default:
			t += int64(r.IntN(4_000)) * 1000
		}
		w.arrivals = append(w.arrivals, t)
	}
	return w
}

// TestDefaultPolicyMatchesCombined: New without options keeps small limits
// exact and buckets large ones exactly as the in-memory combined limiter
// under the default policy does, to the µs, for every time source.
func TestDefaultPolicyMatchesCombined(t *testing.T) {
	t.Parallel()
	m, c := newMini(t)
	policySeeds(t, c, int(seeds(4, 12)), []TimeSource{Server, Client, Virtual}, func(now int64) { m.SetTime(time.Unix(0, now)) }, newPolicyWorkload)
}

// TestRealDefaultPolicyMatchesCombined is the same on a real server.
func TestRealDefaultPolicyMatchesCombined(t *testing.T) {
	c := realClient(t, redistest.Start(t))
	policySeeds(t, c, int(seeds(4, 12)), []TimeSource{Client, Virtual}, nil, newPolicyWorkload)
}

// tryAt returns a function that runs l's script once at instant base + at
// (ns) of rt, for a call with the given member, and returns its wait.
func tryAt(t *testing.T, l *Limiter, rt *stepRT, base int64) func(at int64, member string) time.Duration {
	return func(at int64, member string) time.Duration {
		rt.t = base + at
		wait, _, _, err := l.try(context.Background(), member, false)
		require.NoError(t, err)
		return wait
	}
}

// TestBucketedLateCallWaits: under a caller's clock, a call older than
// the buckets already dropped waits until its window starts in a kept
// one; a late call within them is judged on the counts, never overfilling.
func TestBucketedLateCallWaits(t *testing.T) {
	_, c := newMini(t)
	rt := &stepRT{}
	rules := []rule.Rule{{Limit: 2, Window: 10 * time.Second, Buckets: 10}}
	l, err := New(c, rt, rules, Options{Key: "late", TimeSource: Client, MemberPrefix: "p:", MaxSkew: -1})
	require.NoError(t, err)
	try := tryAt(t, l, rt, epoch)
	sec, ms := int64(time.Second), int64(time.Millisecond)
	assert.Zero(t, try(20*sec, "a"))   // its window starts in bucket 10
	assert.Zero(t, try(20500*ms, "b")) // bucket 20 holds a and b
	// 300 ms late, its window still starts in bucket 10: judged on the
	// counts, full until bucket 20 leaves at 31 s.
	assert.Equal(t, 10800*time.Millisecond, try(20200*ms, "c"))
	assert.Zero(t, try(31*sec, "d")) // the bound now starts at bucket 21
	// 500 ms late, its window would start in bucket 20, no longer counted:
	// it waits until its window starts in bucket 21.
	assert.Equal(t, 500*time.Millisecond, try(30500*ms, "e"))
	assert.Zero(t, try(31*sec, "f"))
	assert.Equal(t, 11*time.Second, try(31*sec, "g"), "d and f fill bucket 31, which leaves the bound at 42 s")
}

// TestBucketedLateCallCountsInItsBucket: a call in a bucket behind the
// newest counted one, its window starting in the same bucket (possible
// within k-1 µs of a bucket's start when k does not divide the window),
// is counted in its own bucket, and leaves the bound with it.
func TestBucketedLateCallCountsInItsBucket(t *testing.T) {
	m, c := newMini(t)
	rt := &stepRT{}
	rules := []rule.Rule{{Limit: 3, Window: 10 * time.Second, Buckets: 3}}
	l, err := New(c, rt, rules, Options{Key: "late-count", TimeSource: Client, MemberPrefix: "p:", MaxSkew: -1})
	require.NoError(t, err)
	const g = 3_333_334 // µs: the window over 3 buckets, rounded up
	bucket := epoch/1000/g + 10
	start := bucket * g * 1000 // ns: bucket's start
	try := tryAt(t, l, rt, start)
	us, sec := int64(time.Microsecond), int64(time.Second)
	require.Zero(t, try(-sec, "a"))
	require.Zero(t, try(0, "b"))
	require.Zero(t, try(-us, "c"), "in the bucket before b's, its window starting in the same bucket as b's")
	assert.Equal(t, "2", m.HGet(l.Keys()[0], strconv.FormatInt(bucket-1, 10)), "that bucket holds a and c")
	assert.Equal(t, 9*time.Second, try(sec, "d"), "full until that bucket leaves at 10 s")
	// At 10 s the bucket leaves with both calls: b alone is left.
	assert.Zero(t, try(10*sec, "e"))
	assert.Zero(t, try(10*sec, "f"), "the bucket left with its two calls")
	assert.Equal(t, time.Duration(g)*time.Microsecond, try(10*sec, "g"), "b, e and f fill the bound until b's bucket leaves")
}

// pipeline records the admissions at the given instants (ns after epoch,
// each one the limiter admits) in batches, and fails on any refusal; with
// costs, call i is charged costs[i], as AcquireCost sends them.
func pipeline(t *testing.T, c *redis.Client, l *Limiter, at []int64, costs [][]int64) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, l.admit.Load(ctx, c).Err())
	for start := 0; start < len(at); start += 2000 {
		p := c.Pipeline()
		end := min(start+2000, len(at))
		for i := start; i < end; i++ {
			now := epoch + at[i]
			l.now = func() int64 { return now }
			member, tail := l.prefix+strconv.Itoa(i), []any(nil)
			if costs != nil {
				member, tail = l.costArgs(member, costs[i])
			}
			args, _ := l.scriptArgs(member, uint64(i)%sweepEvery == 0, now)
			l.admit.EvalSha(ctx, p, l.script, append(args, tail...)...)
		}
		cmds, err := p.Exec(ctx)
		require.NoError(t, err)
		for i, cmd := range cmds {
			v, ok := cmd.(*redis.Cmd).Val().([]any)
			require.True(t, ok && len(v) == 2, "call %d refused: %v", start+i, cmd)
		}
	}
}

// memoryOf sums MEMORY USAGE (SAMPLES 0: every element) over the keys.
func memoryOf(t *testing.T, c *redis.Client, keys []string) int64 {
	var sum int64
	for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) { // exact rules share a key
		n, err := c.Do(context.Background(), "MEMORY", "USAGE", k, "SAMPLES", "0").Int64()
		if errors.Is(err, redis.Nil) {
			continue // a bucket hash not made yet
		}
		require.NoError(t, err, k)
		sum += n
	}
	return sum
}

// admitted returns n admission instants (ns after epoch) of an in-memory
// limiter under the default policy whose calls arrive every, one after
// another; every 0 saturates it.
func admitted(rules []rule.Rule, n int, every time.Duration) []int64 {
	rt := &stepRT{t: epoch}
	c := strategies.NewCombinedBounded(rt, rules...)
	out := make([]int64, n)
	for i := range out {
		rt.t = max(rt.t, epoch+int64(i)*int64(every))
		_ = c.Acquire(context.Background())
		out[i] = rt.t - epoch
	}
	return out
}

// TestRealBoundedMemory: under the default policy a limiter's keys stay
// within 4 KB on a real server, where the exact sets of the same rules
// took 2.58 MB after the spaced admissions.
func TestRealBoundedMemory(t *testing.T) {
	t.Parallel()
	c := realClient(t, redistest.Start(t))
	api, err := rule.ParseList("10/s,500/min,10000/day")
	require.NoError(t, err)
	n := testrun.Seeds(12000, 20000) // admissions: past the day's 10,000
	cases := []struct {
		name  string
		rules []rule.Rule
		at    []int64
	}{
		{"spaced 8.65 s", api, admitted(api, n, 8650*time.Millisecond)},
		{"saturated", api, admitted(api, n, 0)},
	}
	for _, list := range []string{"5/1s,12/3s", "10/s,300/min", "100/h", "1000/s,50000/h"} {
		rules, err := rule.ParseList(list)
		require.NoError(t, err)
		cases = append(cases, struct {
			name  string
			rules []rule.Rule
			at    []int64
		}{list + " saturated", rules, admitted(rules, n, 0)})
	}
	if testrun.Full() {
		huge := []rule.Rule{{Limit: 600000, Window: 24 * time.Hour}}
		cases = append(cases, struct {
			name  string
			rules []rule.Rule
			at    []int64
		}{"600000/24h saturated", huge, admitted(huge, 1_000_000, 0)}, struct {
			name  string
			rules []rule.Rule
			at    []int64
		}{"600000/24h, calls every 144 ms", huge, admitted(huge, 1_000_000, 144*time.Millisecond)})
	} else {
		t.Log("600000/24h after 1,000,000 admissions runs with RLCHECK_FULL=1")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := &stepRT{t: epoch}
			l, err := New(c, rt, tc.rules, Options{Key: "mem-" + tc.name, TimeSource: Virtual, MemberPrefix: "p:"})
			require.NoError(t, err)
			pipeline(t, c, l, tc.at, nil)
			used := memoryOf(t, c, l.script) // the head and the rule keys
			t.Logf("%s, %d admissions: %d bytes in %v", tc.name, len(tc.at), used, l.script)
			assert.LessOrEqual(t, used, int64(4096))
		})
	}
	// The exact sets of the same rules, for the record beside them.
	rt := &stepRT{t: epoch}
	l, err := New(c, rt, api, Options{Key: "mem-exact", TimeSource: Virtual, MemberPrefix: "p:", Exact: true})
	require.NoError(t, err)
	pipeline(t, c, l, cases[0].at, nil)
	t.Logf("exact sets, spaced 8.65 s, %d admissions: %d bytes", len(cases[0].at), memoryOf(t, c, l.script))
}

// TestBucketedRetryCountsOnce: when every rule is bucketed, a retry of a
// recorded call (same member, same record time) finds it in the first
// rule's hash and counts nothing again; the same member at another time
// is another limiter's call.
func TestBucketedRetryCountsOnce(t *testing.T) {
	m, c := newMini(t)
	rt := &stepRT{t: epoch}
	rules := []rule.Rule{{Limit: 5, Window: time.Second, Buckets: 4}, {Limit: 50, Window: time.Minute, Buckets: 4}}
	l, err := New(c, rt, rules, Options{Key: "retry", TimeSource: Client, MemberPrefix: "p:", MaxSkew: -1})
	require.NoError(t, err)
	for range 2 {
		wait, _, _, err := l.try(context.Background(), "p:1", false)
		require.NoError(t, err)
		require.Zero(t, wait)
	}
	for _, r := range l.Rules() {
		assert.Equal(t, int64(1), decodeState(t, m.HGet(l.script[0], stateField(r)))[0], "%v counted the retry", r)
	}
	rt.t += int64(time.Millisecond)
	_, _, _, err = l.try(context.Background(), "p:1", false)
	assert.ErrorIs(t, err, ErrMemberClash)
	// A wrong-type key is named, when a call leaves the newest bucket.
	require.NoError(t, m.Set(l.Keys()[1], "not a hash"))
	rt.t += int64(15 * time.Second)
	_, _, _, err = l.try(context.Background(), "p:2", false)
	assert.ErrorIs(t, err, ErrWrongType)
	assert.ErrorContains(t, err, l.Keys()[1])
}

// TestServerTimeKeepsOneWindow: under server time, whose calls are all
// judged at TIME, exact entries are kept for their window plus 1 s, not
// twice the window; caller clocks keep the longer retention
// (TestSweepBoundsMemory) for their late calls.
func TestServerTimeKeepsOneWindow(t *testing.T) {
	m, c := newMini(t)
	rt := &stepRT{t: epoch, onAdvance: func(now int64) { m.SetTime(time.Unix(0, now)) }}
	rt.set(epoch)
	r := rule.Rule{Limit: 1000, Window: 10 * time.Second, Buckets: rule.Exact}
	l, err := New(c, rt, []rule.Rule{r}, Options{Key: "server-keep", MemberPrefix: "p:"})
	require.NoError(t, err)
	const step = 100 * time.Millisecond
	for range 400 {
		rt.set(rt.t + int64(step))
		require.NoError(t, l.Acquire(context.Background()))
	}
	got, _ := m.ZMembers(l.Keys()[0])
	assert.GreaterOrEqual(t, len(got), int(r.Window/step), "entries in the window")
	assert.LessOrEqual(t, len(got), int((r.Window+time.Second)/step)+sweepEvery, "entries kept")
}

// TestBucketHashGetsExpiry: a bucket hash is made by the first call that
// leaves the newest bucket, between the limiter's expiry refreshes, and
// gets its expiry then, or it would outlive its rule for good.
func TestBucketHashGetsExpiry(t *testing.T) {
	m, c := newMini(t)
	rt := &stepRT{t: epoch}
	l, err := New(c, rt, []rule.Rule{{Limit: 10, Window: time.Second, Buckets: 4}}, Options{Key: "bx", TimeSource: Virtual, MemberPrefix: "p:"})
	require.NoError(t, err)
	require.NoError(t, l.Acquire(context.Background()))
	key := l.Keys()[0]
	require.False(t, m.Exists(key), "one bucket: the head holds it")
	rt.t += int64(300 * time.Millisecond) // the next bucket, within the refresh lease
	require.NoError(t, l.Acquire(context.Background()))
	require.True(t, m.Exists(key), "the older bucket moved to its hash")
	assert.Positive(t, m.TTL(key), "the bucket hash has no expiry")
	assert.Positive(t, m.TTL(l.script[0]), "the head has no expiry")
}

// admittedCost is admitted for calls of costs (one per unit of rules).
func admittedCost(rules []rule.Rule, costs [][]int64) []int64 {
	rt := &stepRT{t: epoch}
	c := strategies.NewCombinedBounded(rt, rules...)
	out := make([]int64, len(costs))
	for i := range out {
		_ = c.AcquireCost(context.Background(), costs[i])
		out[i] = rt.t - epoch
	}
	return out
}

// TestRealBoundedMemoryCosts: under the default policy the contract
// 500/1m, 90000 tokens/1m, 10000000 tokens/1d keeps a limiter's keys
// within 4 KB on a real server after its admissions (1,000,000 under
// RLCHECK_FULL=1), saturated, with costs of 1 to 20 tokens, and the
// checker counts no violation of the instants recorded.
func TestRealBoundedMemoryCosts(t *testing.T) {
	t.Parallel()
	c := realClient(t, redistest.Start(t))
	rules, err := rule.ParseList("500/1m, 90000 tokens/1m, 10000000 tokens/1d")
	require.NoError(t, err)
	n := 30_000
	if testrun.Full() {
		n = 1_000_000
	} else {
		t.Log("1,000,000 admissions run with RLCHECK_FULL=1")
	}
	r := rand.New(rand.NewPCG(28, 0))
	costs := make([][]int64, n)
	for i := range costs {
		costs[i] = []int64{1 + r.Int64N(20)}
	}
	at := admittedCost(rules, costs)
	rt := &stepRT{t: epoch}
	l, err := New(c, rt, rules, Options{Key: "mem-costs", TimeSource: Virtual, MemberPrefix: "p:"})
	require.NoError(t, err)
	pipeline(t, c, l, at, costs)
	used := memoryOf(t, c, l.script)
	t.Logf("%d admissions: %d bytes in %v", n, used, l.script)
	assert.LessOrEqual(t, used, int64(4096))

	chk := checker.New(checker.Config{Rules: rules})
	for i, a := range at {
		require.NoError(t, chk.ObserveCost(a, int64(i), costs[i]))
	}
	rep := chk.Report()
	assert.Zero(t, rep.Violations())
}
