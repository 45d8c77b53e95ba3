package rule_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

// FixedStart and FixedWindow lay out the checker's fixed windows: two sends at one
// instant break a rule of limit 1, and the violation names its window.
func TestFixedStartIsTheCheckersWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	rules := []string{"1/1s fixed", "1/1s fixed at 250ms", "1/1h fixed at 00:30", "1/7s fixed at 3s",
		"1/1d fixed at 00:00 America/New_York", "1/1d fixed at 00:00 Asia/Kolkata", "1/1d fixed at 00:00 America/Havana"}
	// Near the epoch (negative instants too), near DST changes (Havana's
	// clocks skip midnight), and at the int64 range's ends.
	ats := []int64{0, -1, 1, -int64(time.Second), int64(time.Second) - 1, math.MinInt64, math.MaxInt64,
		time.Date(2026, 3, 8, 6, 59, 59, 0, time.UTC).UnixNano(), time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC).UnixNano(),
		time.Date(2026, 3, 8, 5, 0, 0, 0, time.UTC).UnixNano(), time.Date(2026, 11, 1, 4, 30, 0, 0, time.UTC).UnixNano()}
	for range 300 {
		ats = append(ats, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()+rng.Int64N(int64(400*24*time.Hour))-int64(30*24*time.Hour))
	}
	for _, text := range rules {
		r, err := rule.Parse(text)
		require.NoError(t, err)
		for _, at := range ats {
			c := checker.New(checker.Config{Rules: []rule.Rule{r}})
			require.NoError(t, c.ObserveCost(at, 1, []int64{}))
			require.NoError(t, c.ObserveCost(at, 2, []int64{}))
			v := c.Report().Rules[0].First
			require.NotNil(t, v, "%s at %d", r, at)
			got, err := r.FixedStart(at)
			require.NoError(t, err)
			assert.Equal(t, v.Span.From, got, "%s at %d", r, at)
			from, to, err := r.FixedWindow(at)
			require.NoError(t, err)
			assert.Equal(t, *v.Span, checker.Span{From: from, To: to}, "%s at %d", r, at)
		}
	}
	_, err := rule.Rule{Limit: 1, Window: time.Second}.FixedStart(0)
	assert.Error(t, err, "a sliding rule has no fixed windows")
}

// TestFixedSpanOfADateLivedTwice: Goose Bay turned its clock back from
// 00:01 to 23:01 (1987-2010), so 1990-10-28 began at 03:00 UTC and the
// 27th's last hour was lived again after it. Each local day's window runs
// from the first instant of its date to the first instant of the next
// (docs/semantics.md), so that hour is in the 28th's window, and every
// window holds the instant it is asked for; the checker judges by them.
func TestFixedSpanOfADateLivedTwice(t *testing.T) {
	r, err := rule.Parse("1/1d fixed at 00:00 America/Goose_Bay")
	require.NoError(t, err)
	utc := func(d, h, m int) int64 { return time.Date(1990, 10, d, h, m, 0, 0, time.UTC).UnixNano() }
	oct27, oct28, oct29 := utc(27, 3, 0), utc(28, 3, 0), utc(29, 4, 0)
	for at, want := range map[int64][2]int64{
		oct28 - 1:            {oct27, oct28}, // 23:59:59.999999999 ADT on the 27th
		oct28:                {oct28, oct29}, // 00:00 ADT on the 28th
		utc(28, 3, 0) + 30e9: {oct28, oct29}, // 00:00:30 ADT, before the turn back
		utc(28, 3, 30):       {oct28, oct29}, // 23:30 AST on the 27th, lived again
		utc(28, 4, 0):        {oct28, oct29}, // 00:00 AST on the 28th
	} {
		from, to, err := r.FixedWindow(at)
		require.NoError(t, err)
		assert.Equal(t, want, [2]int64{from, to}, "at %s", time.Unix(0, at).UTC())
	}
	for _, zone := range []string{"America/Goose_Bay", "America/St_Johns", "America/Moncton", "America/New_York"} {
		loc, err := time.LoadLocation(zone)
		require.NoError(t, err)
		for year := 1986; year <= 2011; year++ { // the nights around each autumn's turn back
			for day := 20; day <= 40; day++ {
				night := time.Date(year, 10, day, 1, 30, 0, 0, time.UTC).UnixNano()
				for at := night; at < night+int64(4*time.Hour); at += int64(5*time.Minute) + 1 {
					from, to := rule.FixedSpan(at, int64(24*time.Hour), 0, loc)
					require.True(t, from <= at && at < to, "%s at %s: [%d, %d)", zone, time.Unix(0, at).UTC(), from, to)
				}
			}
		}
	}
	// The two sends at 23:30 on the 27th, an hour apart, are in two windows.
	c := checker.New(checker.Config{Rules: []rule.Rule{r}})
	require.NoError(t, c.ObserveCost(utc(28, 2, 30), 1, []int64{}))
	require.NoError(t, c.ObserveCost(utc(28, 3, 30), 2, []int64{}))
	rep := c.Report()
	assert.Zero(t, rep.Violations())
}
