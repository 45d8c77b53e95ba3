package strategies

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
)

func TestBucketWindowAtExactInstants(t *testing.T) {
	// 2 per 10 ns in 5 buckets of 2 ns: the window (t-10, t] touches the
	// buckets floor((t-10)/2) to floor(t/2).
	r := rule.Rule{Limit: 2, Window: 10}
	b := NewBucketWindow(r, 5)
	assert.Zero(t, b.WaitTime(100))
	b.Record(100) // bucket 50
	b.Record(103) // bucket 51
	// At 109 the bound spans buckets 49..54 and holds both: wait until bucket
	// 50 leaves it, at floor((t-10)/2) = 51, t = 112.
	assert.Equal(t, time.Duration(3), b.WaitTime(109))
	assert.Equal(t, time.Duration(1), b.WaitTime(111))
	// The exact log would admit at 110, when 100 leaves (110-10, 110]; the
	// bucket holding 100 still touches that window's start.
	assert.Zero(t, b.WaitTime(112))
	b.Record(112)
	assert.Equal(t, int64(2), b.Total())
	// An instant whose window starts before the kept buckets waits for them.
	assert.Equal(t, time.Duration(51*2+10-101), b.WaitTime(101))
}

func TestBucketWindowUnevenWidth(t *testing.T) {
	// 7 ns in 3 buckets: g = 3, and one window touches at most 4 buckets.
	b := NewBucketWindow(rule.Rule{Limit: 1, Window: 7}, 3)
	assert.Equal(t, int64(3), b.width)
	assert.Len(t, b.counts, 4)
}

// admitGreedily runs one caller per arrival through bk, in arrival order,
// each sleeping its wait and asking again, and returns the admissions.
func admitGreedily(bk Book, arrivals []int64) []int64 {
	var out []int64
	var last int64
	for _, a := range arrivals {
		t := max(a, last)
		for w := bk.WaitTime(t); w > 0; w = bk.WaitTime(t) {
			t += int64(w)
		}
		bk.Record(t)
		out, last = append(out, t), t
	}
	return out
}

// randomArrivals draws arrivals with ties and gaps of exactly the window
// and exactly a bucket width among random ones.
func randomArrivals(rng *rand.Rand, n int, w, g int64) []int64 {
	ts := make([]int64, n)
	t := rng.Int64N(3 * w)
	for i := range ts {
		switch rng.IntN(6) {
		case 0: // a tie
		case 1:
			t += w
		case 2:
			t += g
		case 3:
			t += rng.Int64N(2 * w)
		default:
			t += rng.Int64N(g + 1)
		}
		ts[i] = t
	}
	return ts
}

// bucketViolations runs seeds of random rules and arrivals through
// bucketed windows (shave leaves that many of the oldest buckets out of
// the bound) and counts what the checker finds, half-open and closed.
func bucketViolations(t *testing.T, seeds int, shave int64) (halfOpen, closed int64) {
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		r := rule.Rule{Limit: 1 + rng.IntN(6), Window: time.Duration(1 + rng.IntN(40))}
		k := 1 + rng.IntN(8)
		bk := NewBucketWindow(r, k)
		bk.shave = shave
		sends := admitGreedily(bk, randomArrivals(rng, 200, int64(r.Window), bk.width))
		for _, bd := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
			rep, err := checker.Check(sends, checker.Config{Rules: []rule.Rule{r}, Boundary: bd})
			require.NoError(t, err)
			if bd == rule.HalfOpen {
				halfOpen += rep.Violations()
			} else {
				closed += rep.Violations()
			}
		}
	}
	return halfOpen, closed
}

// TestBucketWindowNeverOverfills is the property of docs/windows.md: the
// k+1 buckets a window touches bound its count, so admissions never
// overfill a half-open or a closed window.
func TestBucketWindowNeverOverfills(t *testing.T) {
	seeds := 3000
	if testing.Short() {
		seeds = 500
	}
	h, c := bucketViolations(t, seeds, 0)
	assert.Zero(t, h, "half-open violations")
	assert.Zero(t, c, "closed violations")
}

// TestBucketWindowWeakenedByOneBucketOverfills shows the property test has
// teeth: a bound over k buckets instead of k+1 leaves out the oldest one,
// whose sends may still be in the window, and the checker finds it.
func TestBucketWindowWeakenedByOneBucketOverfills(t *testing.T) {
	h, c := bucketViolations(t, 500, 1)
	assert.Positive(t, h, "half-open violations of the weakened bound")
	assert.Positive(t, c, "closed violations of the weakened bound")
}

// TestBucketWindowGivesUpAtMostOneBucket: at saturation (arrivals a
// little faster than the limit allows) the bucketed window admits at least
// k/(k+1) of what the exact log admits in the same time, give or take a
// few buckets at the end.
func TestBucketWindowGivesUpAtMostOneBucket(t *testing.T) {
	r := rule.Rule{Limit: 1000, Window: time.Hour}
	arrivals := make([]int64, 24000)
	for i := range arrivals {
		arrivals[i] = int64(i) * int64(3*time.Second)
	}
	for _, k := range []int{4, 16, 64} {
		exact := admitGreedily(NewSlidingLog(r), arrivals)
		bucketed := admitGreedily(NewBucketWindow(r, k), arrivals)
		horizon := exact[len(exact)-1]
		n := 0
		for _, s := range bucketed {
			if s <= horizon {
				n++
			}
		}
		// The rate is k/(k+1) of the exact log's; a few buckets' share of
		// the limit (Limit/k each) may still wait at the horizon.
		want := float64(len(exact))*float64(k)/float64(k+1) - 4*float64(r.Limit)/float64(k)
		assert.GreaterOrEqual(t, float64(n), want, "k=%d: %d sends against the exact log's %d", k, n, len(exact))
		assert.Less(t, n, len(exact), "k=%d gives up some capacity", k)
	}
}

func TestBucketWindowMemoryIsFlat(t *testing.T) {
	r := rule.Rule{Limit: 600000, Window: 24 * time.Hour}
	b := NewBucketWindow(r, 64)
	for i := range int64(1_000_000) {
		now := i * int64(100*time.Millisecond)
		if b.WaitTime(now) == 0 {
			b.Record(now)
		}
	}
	assert.Len(t, b.counts, 65)
	assert.LessOrEqual(t, b.Total(), int64(r.Limit))
}

func TestNewBookFollowsThePolicy(t *testing.T) {
	for _, tt := range []struct {
		in     string
		bucket bool
	}{
		{"10/s", false}, {"500/min", true}, {"10000/day", true}, {"500/min:exact", false}, {"10/s:b4", true},
	} {
		r, err := rule.Parse(tt.in)
		require.NoError(t, err)
		_, ok := NewBook(r).(*BucketWindow)
		assert.Equal(t, tt.bucket, ok, tt.in)
	}
}

// TestNewCombinedBucketsLargeLimits: the in-memory combined limiter keeps
// an open rule exact up to ExactInMemoryUpTo and buckets a larger one (a
// log of 600000/day would hold 4.8 MB), unless the rule names its way.
func TestNewCombinedBucketsLargeLimits(t *testing.T) {
	for _, tt := range []struct {
		in     string
		bucket bool
	}{
		{"10/s", false}, {"10000/day", false}, {"65536/day", false}, {"65537/day", true},
		{"600000/day", true}, {"600000/day:exact", false}, {"10/s:b4", true},
	} {
		r, err := rule.Parse(tt.in)
		require.NoError(t, err)
		c := NewCombined(clock.NewReal(), r)
		_, ok := c.books[0].(*BucketWindow)
		assert.Equal(t, tt.bucket, ok, tt.in)
	}
}

func TestFixedWindowOverfillsAcrossABoundary(t *testing.T) {
	r := rule.Rule{Limit: 2, Window: 10}
	f := NewFixedWindow(r)
	sends := admitGreedily(f, []int64{18, 19, 20, 21, 22})
	assert.Equal(t, []int64{18, 19, 20, 21, 30}, sends)
	rep, err := checker.Check(sends, checker.Config{Rules: []rule.Rule{r}})
	require.NoError(t, err)
	assert.Equal(t, int64(2), rep.Violations(), "20 and 21 find 18 and 19 in their window")
}
