package strategies

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

func mustParse(t *testing.T, s string) rule.Rule {
	t.Helper()
	r, err := rule.Parse(s)
	require.NoError(t, err)
	return r
}

// TestBooksOfEveryKind: NewBook keeps each kind in its exact book, while
// the bookkeeping that approximates or keeps sliding windows only still
// stops at once rather than keep another kind as a sliding rule.
func TestBooksOfEveryKind(t *testing.T) {
	for s, want := range map[string]Book{
		"5000/1h fixed": &FixedBook{}, "10/1s burst 20": &TokenBucket{}, "100/1m first-call": &FirstCallBook{},
	} {
		r := mustParse(t, s)
		assert.IsType(t, want, NewBook(r), s)
		msg := "strategies: rule " + s + ": this bookkeeping keeps sliding rules only (NewBook keeps every kind)"
		assert.PanicsWithValue(t, msg, func() { NewSlidingLog(r) }, s)
		assert.PanicsWithValue(t, msg, func() { NewBucketWindow(r, 4) }, s)
		assert.PanicsWithValue(t, msg, func() { NewWindowCounter(r) }, s)
		assert.PanicsWithValue(t, msg, func() { NewFixedWindow(r) }, s)
	}
	assert.IsType(t, &SlidingLog{}, NewBook(Widen(1, mustParse(t, "100/1m first-call"))[0]))
	assert.IsType(t, &SlidingLog{}, NewBook(rule.Rule{Limit: 5, Window: 1e9, Unit: "tokens"}))
}

func TestFixedBookAtExactInstants(t *testing.T) {
	// 3 per 10 ns from offset 4: the windows are [4, 14), [14, 24), ...
	b := NewBook(rule.Rule{Limit: 3, Window: 10, Kind: rule.Fixed, Offset: 4})
	for range 3 {
		assert.Zero(t, b.WaitTime(13))
		b.Record(13)
	}
	assert.Equal(t, time.Duration(1), b.WaitTime(13), "full until the next window starts")
	for range 3 { // 2N-1 and more across one edge are the provider's own rule
		assert.Zero(t, b.WaitTime(14))
		b.Record(14)
	}
	assert.Equal(t, time.Duration(10), b.WaitTime(14))
	// A margin of 2 closes each window 2 ns early: nothing in [22, 24).
	m := NewBook(rule.Rule{Limit: 3, Window: 10, Kind: rule.Fixed, Offset: 4, Margin: 2})
	assert.Zero(t, m.WaitTime(21))
	assert.Equal(t, time.Duration(2), m.WaitTime(22))
	assert.Zero(t, m.WaitTime(24))
	// A cost fits or waits for the next window.
	c := NewBook(rule.Rule{Limit: 10, Window: 10, Kind: rule.Fixed, Unit: "tokens"}).(CostBook)
	c.RecordCost(3, 7)
	assert.Zero(t, c.WaitTimeCost(5, 3))
	assert.Equal(t, time.Duration(5), c.WaitTimeCost(5, 4))
	assert.Zero(t, c.WaitTimeCost(5, 0))
}

// TestFixedBookZoneDays: a daily rule in a zone counts local days, 23
// hours long on the day the clocks go forward.
func TestFixedBookZoneDays(t *testing.T) {
	r := mustParse(t, "1/1d fixed at 00:00 America/New_York")
	loc, err := r.Location()
	require.NoError(t, err)
	b := NewBook(r)
	one := time.Date(2025, 3, 9, 1, 0, 0, 0, loc).UnixNano() // a 23-hour day
	b.Record(one)
	next := time.Date(2025, 3, 10, 0, 0, 0, 0, loc).UnixNano()
	assert.Equal(t, time.Duration(next-one), b.WaitTime(one))
	assert.Equal(t, 22*time.Hour, b.WaitTime(one), "01:00 to midnight on a day of 23 hours")
	assert.Zero(t, b.WaitTime(next))
}

// TestTokenBucketAtExactInstants is the example of docs/semantics.md:
// 2/1s burst 4, four calls at 0 s drain it; at 0.4 s it holds 0.8, at
// 0.5 s one.
func TestTokenBucketAtExactInstants(t *testing.T) {
	b := NewBook(mustParse(t, "2/1s burst 4"))
	for range 4 {
		assert.Zero(t, b.WaitTime(0))
		b.Record(0)
	}
	assert.Equal(t, 100*time.Millisecond, b.WaitTime(4e8))
	assert.Zero(t, b.WaitTime(5e8))
	b.Record(5e8)
	assert.Equal(t, 500*time.Millisecond, b.WaitTime(5e8))
	// A cost waits for its whole refill, rounded up to the nanosecond.
	c := NewBook(rule.Rule{Limit: 3, Window: 10, Kind: rule.Bucket, Burst: 5, Unit: "tokens"}).(CostBook)
	c.RecordCost(0, 5)
	assert.Equal(t, time.Duration(7), c.WaitTimeCost(0, 2), "2 units of 3 per 10 ns take 6.67 ns")
	assert.Zero(t, c.WaitTimeCost(7, 2))
	// A margin of 10 ns keeps 3 of the 5 units in reserve.
	m := NewBook(rule.Rule{Limit: 3, Window: 10, Kind: rule.Bucket, Burst: 5, Margin: 10})
	m.Record(0)
	m.Record(0)
	assert.Equal(t, time.Duration(4), m.WaitTime(0), "from 0 to 1 unit above the reserve")
}

// gcra is the generic cell rate algorithm for a bucket N/W burst B when N
// divides W: the theoretical arrival time tat, T = W/N apart per unit.
type gcra struct{ t, burst, tat int64 }

func (g *gcra) wait(now, c int64) int64 {
	return max(0, max(g.tat, now)+c*g.t-g.burst*g.t-now)
}

func (g *gcra) take(now, c int64) { g.tat = max(g.tat, now) + c*g.t }

// TestTokenBucketIsGCRA: where N divides W, the level kept in integers
// and GCRA's theoretical arrival time give every call the same wait: the
// level is B - (max(tat, now) - now)/T.
func TestTokenBucketIsGCRA(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 3))
		n, tt, burst := 1+rng.Int64N(5), 1+rng.Int64N(6), 1+rng.Int64N(8)
		r := rule.Rule{Limit: int(n), Window: time.Duration(n * tt), Kind: rule.Bucket, Burst: int(burst), Unit: "u"}
		b, g := NewBook(r).(CostBook), &gcra{t: tt, burst: burst}
		now := rng.Int64N(100)
		for range 60 {
			now += []int64{0, 1, tt, rng.Int64N(3 * tt)}[rng.IntN(4)]
			c := rng.Int64N(burst + 1)
			require.Equal(t, g.wait(now, c), int64(b.WaitTimeCost(now, c)), "seed %d at %d cost %d", seed, now, c)
			now += g.wait(now, c)
			b.RecordCost(now, c)
			g.take(now, c)
		}
	}
}

func TestFirstCallBookAtExactInstants(t *testing.T) {
	b := NewBook(rule.Rule{Limit: 2, Window: 10, Kind: rule.FirstCall})
	assert.Zero(t, b.WaitTime(7))
	b.Record(7) // opens [7, 17)
	b.Record(9)
	assert.Equal(t, time.Duration(8), b.WaitTime(9))
	assert.Zero(t, b.WaitTime(17), "the window ends at 17")
	b.Record(30) // opens [30, 40), not [27, 37)
	b.Record(30)
	assert.Equal(t, time.Duration(9), b.WaitTime(31))
}

// delayedViolations admits random arrivals greedily through r's book
// (widened by margin), delays each admission by a draw from
// [lo, lo+spread], and counts the checker's violations among the
// arrivals at the provider, over seeds.
func delayedViolations(t *testing.T, r rule.Rule, lo, spread, margin int64, seeds int) int64 {
	var n int64
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		adm := admitGreedily(NewBook(Widen(time.Duration(margin), r)[0]), randomArrivals(rng, 120, int64(r.Window), 3))
		at := make([]int64, len(adm))
		for i, a := range adm {
			at[i] = a + lo + rng.Int64N(spread+1)
		}
		slices.Sort(at)
		rep, err := checker.Check(at, checker.Config{Rules: []rule.Rule{r}})
		require.NoError(t, err)
		n += rep.Violations()
	}
	return n
}

// TestKindBooksKeepTheProviderWithAMargin: a fixed book with a margin as
// wide as the longest delay, and a bucket with one as wide as the delays'
// spread, keep the rule among the arrivals; with no margin both break it.
func TestKindBooksKeepTheProviderWithAMargin(t *testing.T) {
	fixed := rule.Rule{Limit: 4, Window: 40, Kind: rule.Fixed, Offset: 7}
	assert.Positive(t, delayedViolations(t, fixed, 0, 6, 0, 200))
	assert.Zero(t, delayedViolations(t, fixed, 0, 6, 6, 200))
	bucket := rule.Rule{Limit: 4, Window: 40, Kind: rule.Bucket, Burst: 3}
	assert.Positive(t, delayedViolations(t, bucket, 5, 6, 0, 200))
	assert.Zero(t, delayedViolations(t, bucket, 5, 6, 6, 200))
	first := rule.Rule{Limit: 4, Window: 40, Kind: rule.FirstCall}
	assert.Zero(t, delayedViolations(t, first, 5, 6, 6, 200))
}
