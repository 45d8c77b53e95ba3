package redislimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// TestLeasesCapTheFleet: three limiters of one key, as three processes,
// admit 60 callers of random hold times on a virtual clock, half by
// Acquire and Release, half by Reserve and Settle: the calls in flight
// across all three never pass the cap, and reach it.
func TestLeasesCapTheFleet(t *testing.T) {
	const limit = 3
	_, c := newMini(t)
	sch := virtual.NewSched(virtual.Config{Rand: rand.New(rand.NewPCG(7, 7))})
	rules := []rule.Rule{{Limit: 1000, Window: time.Second}, {Limit: 100000, Window: time.Second, Unit: "tokens"}}
	var lims []*Limiter
	for i := range 3 {
		l, err := New(c, sch, rules, Options{Key: "fleet", TimeSource: Virtual, MemberPrefix: fmt.Sprintf("w%d:", i),
			InProcess: true, MaxInFlight: limit, LeasePoll: time.Millisecond})
		require.NoError(t, err)
		lims = append(lims, l)
	}
	var times []int64
	for i := range 60 {
		times = append(times, int64(i)*int64(3*time.Millisecond))
	}
	inFlight, most, done := 0, 0, 0
	sch.Arrivals(times, func(i int64) {
		l := lims[i%3]
		hold := time.Duration(1+sch.Rand().IntN(20)) * time.Millisecond
		var res *strategies.Reservation
		if i%2 == 0 {
			require.NoError(t, l.Acquire(context.Background()))
		} else {
			var err error
			res, err = l.Reserve(context.Background(), []int64{500})
			require.NoError(t, err)
		}
		inFlight++
		most = max(most, inFlight)
		require.NoError(t, sch.Sleep(context.Background(), hold))
		inFlight--
		if res != nil {
			require.NoError(t, res.Settle([]int64{120}))
		} else {
			l.Release()
		}
		done++
	})
	sch.Run()
	require.Equal(t, 60, done)
	require.Equal(t, limit, most, "calls in flight at once across the fleet")
}

// TestLeaseOfADeadCallerEnds: a call whose process never releases it
// holds its place under the cap until its lease ends, to the µs, and no
// longer; a reservation settled after its lease ended changes nothing,
// its estimate standing for good.
func TestLeaseOfADeadCallerEnds(t *testing.T) {
	_, c := newMini(t)
	rt := &stepRT{t: epoch}
	rules := []rule.Rule{{Limit: 10, Window: time.Hour, Unit: "tokens"}}
	opts := Options{Key: "dead", TimeSource: Virtual, MaxInFlight: 1, LeaseTime: time.Second}
	dead, err := New(c, rt, rules, opts)
	require.NoError(t, err)
	live, err := New(c, rt, rules, opts)
	require.NoError(t, err)
	res, err := dead.Reserve(context.Background(), []int64{6})
	require.NoError(t, err)
	member, tail := live.costArgs("probe:1", []int64{1})
	rt.set(epoch + int64(time.Second) - 1000)
	o, err := live.tryLeased(context.Background(), member, false, tail, true)
	require.NoError(t, err)
	require.Equal(t, -1, o.rule, "the in-flight cap refuses a µs before the lease ends")
	require.Equal(t, time.Microsecond, o.wait)
	rt.set(epoch + int64(time.Second))
	o, err = live.tryLeased(context.Background(), member, false, tail, true)
	require.NoError(t, err)
	require.Zero(t, o.wait, "the lease has ended")
	require.NoError(t, res.Settle([]int64{0}), "a late settlement is no error")
	_, err = live.AcquireCostAt(context.Background(), []int64{4})
	require.NoError(t, err)
	// One more unit does not fit: the window holds 10 until its hour ends.
	member, tail = live.costArgs("probe:2", []int64{1})
	o, err = live.tryLeased(context.Background(), member, false, tail, true)
	require.NoError(t, err)
	require.Positive(t, o.wait, "the late settlement gave nothing back: 6 + 4 fill the 10")
}

// TestSettleIsIdempotent: the settlement's script run corrects the rules
// once; run again (a retry after a lost reply) it changes nothing.
func TestSettleIsIdempotent(t *testing.T) {
	_, c := newMini(t)
	rt := &stepRT{t: epoch}
	l, err := New(c, rt, []rule.Rule{{Limit: 10, Window: time.Hour, Unit: "tokens"}}, Options{Key: "idem", TimeSource: Virtual})
	require.NoError(t, err)
	a, err := l.acquire(context.Background(), []int64{8}, true)
	require.NoError(t, err)
	ok, err := l.settleRun(context.Background(), a, []int64{2})
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = l.settleRun(context.Background(), a, []int64{2})
	require.NoError(t, err)
	require.False(t, ok, "a second run settles nothing")
	_, err = l.AcquireCostAt(context.Background(), []int64{8})
	require.NoError(t, err, "2 + 8 fit in 10")
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err = l.AcquireCostAt(ctx, []int64{1})
	require.Error(t, err, "the window is full: the settlement gave back 6 once, not twice")
}

// TestRealReservedMemory: 1,000 reservations of 500/1m, 90000 tokens/1m,
// 10000000 tokens/1d, each settled, keep the limiter's keys, its lease
// set included, within 4 KB on a real server, as admissions do
// (TestRealBoundedMemoryCosts): a settled lease leaves nothing behind.
func TestRealReservedMemory(t *testing.T) {
	c := realClient(t, redistest.Start(t))
	rules, err := rule.ParseList("500/1m, 90000 tokens/1m, 10000000 tokens/1d")
	require.NoError(t, err)
	rt := &stepRT{t: epoch}
	l, err := New(c, rt, rules, Options{Key: "mem-reserve", TimeSource: Virtual, MemberPrefix: "p:"})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(29, 0))
	for range 1000 {
		rt.set(rt.t + int64(120*time.Millisecond))
		est := 100 + r.Int64N(2000)
		res, err := l.Reserve(context.Background(), []int64{est})
		require.NoError(t, err)
		require.NoError(t, res.Settle([]int64{r.Int64N(2 * est)}))
	}
	used := memoryOf(t, c, l.leasedKeys)
	t.Logf("1000 reservations settled: %d bytes in %v", used, l.leasedKeys)
	require.LessOrEqual(t, used, int64(4096))
}
