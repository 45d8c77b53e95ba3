package redislimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// TestNewRefusesKinds: a rule the script cannot keep exactly is refused
// by name rather than kept as a sliding rule.
func TestNewRefusesKinds(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	t.Cleanup(func() { _ = c.Close() })
	for s, want := range map[string]string{
		"10/1s first-call":                    "the script keeps sliding, fixed and bucket rules only so far (strategies.NewCombined keeps every kind)",
		"10/1d fixed at 00:00 America/Denver": "the script keeps no time zone's days so far (strategies.NewCombined does)",
		"10/1500ns fixed":                     "a fixed rule's window and offset must be whole microseconds in Redis",
		"1000000000/1000h burst 5000000000":   "burst or limit times the window in microseconds passes 2^53, beyond the script's exact integers",
	} {
		r, err := rule.Parse(s)
		require.NoError(t, err)
		_, err = New(c, clock.NewReal(), []rule.Rule{{Limit: 5, Window: 1e9}, r}, Options{Key: "k"})
		assert.EqualError(t, err, "redislimit: rule "+r.String()+": "+want)
	}
	_, err := New(c, clock.NewReal(), strategies.Widen(time.Second, rule.Rule{Limit: 5, Window: time.Second, Kind: rule.Fixed}), Options{Key: "k"})
	assert.EqualError(t, err, "redislimit: rule 5/1s fixed: a margin of 1s leaves no room in the window")
}

// kindWorkload draws fixed and bucket rules (a sliding one beside them at
// times) in whole microseconds, a bucket's window a multiple of its limit
// so that its refills land on whole microseconds too, and arrivals with
// ties, gaps of a window and instants at fixed windows' edges.
func kindWorkload(seed uint64) (rules []rule.Rule, arrivals []int64, margin time.Duration) {
	r := rand.New(rand.NewPCG(seed, 0x6b1d))
	n := 1 + r.IntN(4)
	fixed := rule.Rule{Limit: n, Window: time.Duration(1+r.IntN(500)) * time.Millisecond, Kind: rule.Fixed}
	fixed.Offset = time.Duration(r.Int64N(int64(fixed.Window)/1000)) * time.Microsecond
	m := 1 + r.IntN(4)
	bucket := rule.Rule{Limit: m, Window: time.Duration(m*(1+r.IntN(200))) * time.Millisecond, Kind: rule.Bucket, Burst: 2 + r.IntN(2*m)}
	rules = []rule.Rule{fixed, bucket}
	if r.IntN(2) == 0 {
		rules = append(rules, rule.Rule{Limit: 2 + r.IntN(5), Window: time.Duration(1+r.IntN(900)) * time.Millisecond})
	}
	r.Shuffle(len(rules), func(i, j int) { rules[i], rules[j] = rules[j], rules[i] })
	if r.IntN(2) == 0 {
		margin = time.Duration(r.IntN(1000)) * time.Microsecond // below a refill: the burst keeps room
	}
	t := int64(0)
	for range 20 + r.IntN(30) {
		switch r.IntN(6) {
		case 0:
		case 1:
			t += int64(rules[r.IntN(len(rules))].Window)
		case 2, 3: // at the next edge of the fixed rule, or within a margin before it
			w, o := int64(fixed.Window), int64(fixed.Offset)
			next := t + w - ((epoch+t-o)%w+w)%w
			if r.IntN(2) == 0 {
				next -= int64(r.IntN(1000)) * 1000
			}
			t = max(t, next)
		default:
			t += int64(r.IntN(300_000)) * 1000
		}
		arrivals = append(arrivals, t)
	}
	return rules, arrivals, margin
}

// driveKinds sends arrivals through l, one caller, and returns the send
// instants (ns after epoch).
func driveKinds(t *testing.T, rt *stepRT, l strategies.Limiter, arrivals []int64) []int64 {
	t.Helper()
	var sends []int64
	for _, a := range arrivals {
		if rt.t < epoch+a {
			rt.set(epoch + a)
		}
		require.NoError(t, l.Acquire(context.Background()))
		sends = append(sends, rt.t-epoch)
	}
	return sends
}

// kindsAgainstBooks runs seeds of kindWorkload through the script on c
// and through the in-memory combined limiter, and requires the same send
// instants of both, which break no rule.
func kindsAgainstBooks(t *testing.T, c redis.Scripter, seeds int) {
	for seed := range uint64(seeds) {
		rules, arrivals, margin := kindWorkload(seed)
		kept := strategies.Widen(margin, rules...)
		rt := &stepRT{t: epoch}
		want := driveKinds(t, rt, strategies.NewCombined(rt, kept...), arrivals)
		abs := make([]int64, len(want))
		for i, s := range want {
			abs[i] = epoch + s
		}
		rep, err := checker.Check(abs, checker.Config{Rules: rules})
		require.NoError(t, err)
		require.Zero(t, rep.Violations(), "seed %d: the books break %v", seed, rules)
		for _, src := range []TimeSource{Client, Virtual} {
			rt := &stepRT{t: epoch}
			l, err := New(c, rt, kept, Options{Key: fmt.Sprintf("kinds%d%v", seed, src), TimeSource: src, MaxSkew: -1})
			require.NoError(t, err)
			got := driveKinds(t, rt, l, arrivals)
			require.Equal(t, want, got, "seed %d %v rules %v margin %v: the script against the books", seed, src, rules, margin)
		}
	}
}

// TestKindsMatchTheBooks: fixed and bucket rules in the script admit at
// the instants the in-memory books do, on miniredis and a real server.
func TestKindsMatchTheBooks(t *testing.T) {
	t.Parallel()
	_, c := newMini(t)
	kindsAgainstBooks(t, c, int(seeds(20, 60)))
	kindsAgainstBooks(t, realClient(t, redistest.Start(t)), int(seeds(20, 60)))
}

// TestKindCostsMatchTheBooks: a bucket and a fixed rule metering tokens
// charge the same costs in the script as in memory, and a cost above a
// bucket's burst is refused at once.
func TestKindCostsMatchTheBooks(t *testing.T) {
	_, c := newMini(t)
	rules := []rule.Rule{
		{Limit: 4, Window: 40 * time.Millisecond, Kind: rule.Bucket, Burst: 9, Unit: "tokens"},
		{Limit: 12, Window: 100 * time.Millisecond, Kind: rule.Fixed, Offset: 7 * time.Millisecond, Unit: "tokens"},
		{Limit: 3, Window: 50 * time.Millisecond},
	}
	r := rand.New(rand.NewPCG(5, 5))
	mem, redisRT := &stepRT{t: epoch}, &stepRT{t: epoch}
	in := strategies.NewCombined(mem, rules...)
	l, err := New(c, redisRT, rules, Options{Key: "kc", TimeSource: Virtual})
	require.NoError(t, err)
	at := int64(0)
	for range 200 {
		at += int64(r.IntN(20_000)) * 1000
		cost := []int64{int64(r.IntN(10))}
		mem.set(max(mem.t, epoch+at))
		redisRT.set(max(redisRT.t, epoch+at))
		require.NoError(t, in.AcquireCost(context.Background(), cost))
		require.NoError(t, l.AcquireCost(context.Background(), cost))
		require.Equal(t, mem.t, redisRT.t, "a call of %v", cost)
	}
	var ce *strategies.CostError
	assert.ErrorAs(t, l.AcquireCost(context.Background(), []int64{10}), &ce)
}

// TestKindBucketWaitsRoundUp: a refill that ends between two microseconds
// is waited for to the later one (3 per 40 ms: 13,333.3 µs a unit).
func TestKindBucketWaitsRoundUp(t *testing.T) {
	_, c := newMini(t)
	rt := &stepRT{t: epoch}
	l, err := New(c, rt, []rule.Rule{{Limit: 3, Window: 40 * time.Millisecond, Kind: rule.Bucket, Burst: 1}}, Options{Key: "up", TimeSource: Virtual})
	require.NoError(t, err)
	require.NoError(t, l.Acquire(context.Background()))
	require.NoError(t, l.Acquire(context.Background()))
	assert.Equal(t, int64(13_334*time.Microsecond), rt.t-epoch)
}
