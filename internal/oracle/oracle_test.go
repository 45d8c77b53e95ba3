package oracle

import (
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = int64(time.Millisecond)
const sec = int64(time.Second)

// at builds call sends at the given instants.
func at(ts ...int64) []Send {
	out := make([]Send, len(ts))
	for i, t := range ts {
		out[i] = Send{T: t}
	}
	return out
}

// costly builds sends of the given tokens at the given instants.
func costly(ts []int64, tokens []int64) []Send {
	out := make([]Send, len(ts))
	for i := range ts {
		out[i] = Send{T: ts[i], Costs: map[string]int64{"tokens": tokens[i]}}
	}
	return out
}

// TestBucketExample is docs/semantics.md's example: 2/1s burst 4, four
// sends at 0 s drain it; 0.4 s finds 0.8 and violates; 0.5 s finds 1.0.
func TestBucketExample(t *testing.T) {
	r := Rule{N: 2, W: sec, Kind: Bucket, Burst: 4}
	v := Judge(at(0, 0, 0, 0, 400*ms), r, false)
	assert.Equal(t, []int{4}, v.Violations)
	require.Len(t, v.Levels, 1)
	assert.Equal(t, big.NewRat(4, 5), v.Levels[0], "the level found at 0.4 s")
	assert.Nil(t, v.Max, "a bucket has no window to fill")

	assert.Empty(t, Judge(at(0, 0, 0, 0, 500*ms), r, false).Violations, "0.5 s finds 1.0")
	// The violator at 0.4 s takes nothing, so 0.5 s still finds 1.0.
	assert.Equal(t, []int{4}, Judge(at(0, 0, 0, 0, 400*ms, 500*ms), r, false).Violations)
	// Refill stops at the burst: after a long pause four sends pass, a fifth does not.
	assert.Equal(t, []int{9}, Judge(at(0, 0, 0, 0, 100*sec, 100*sec, 100*sec, 100*sec, 100*sec, 100*sec), r, false).Violations[1:])
}

// TestBucketCosts: a send that costs more than the level violates, one of
// cost 0 never does, and levels stay exact thirds.
func TestBucketCosts(t *testing.T) {
	r := Rule{N: 1, W: 3, Unit: "tokens", Kind: Bucket, Burst: 2}
	v := Judge(costly([]int64{0, 1, 2, 2}, []int64{2, 1, 0, 1}), r, false)
	assert.Equal(t, []int{1, 3}, v.Violations)
	assert.Equal(t, []*big.Rat{big.NewRat(1, 3), big.NewRat(2, 3)}, v.Levels)
}

// TestEdgeExample is docs/semantics.md's edge log: six sends from 0.9 s to
// 1.1 s break 3/1s three times (six in a window) and keep 3/1s fixed.
func TestEdgeExample(t *testing.T) {
	sends := at(900*ms, 950*ms, 990*ms, 1000*ms, 1050*ms, 1100*ms)
	v := Judge(sends, Rule{N: 3, W: sec}, false)
	assert.Equal(t, []int{3, 4, 5}, v.Violations)
	assert.Equal(t, big.NewInt(6), v.Max)
	f := Judge(sends, Rule{N: 3, W: sec, Kind: Fixed}, false)
	assert.Empty(t, f.Violations, "2N-1 sends across one edge are legal")
	assert.Equal(t, big.NewInt(3), f.Max)
	o := Judge(sends, Rule{N: 3, W: sec, Kind: Fixed, Offset: 950 * ms}, false)
	assert.Equal(t, []int{4, 5}, o.Violations, "the window from 0.95 s holds 0.95 to 1.1")
	assert.Equal(t, big.NewInt(5), o.Max)
}

// TestBoundaries: calls spaced exactly W/N apart keep the half-open rule
// and break the closed one; W+1 ns apart they keep both, W-1 ns neither.
func TestBoundaries(t *testing.T) {
	r := Rule{N: 2, W: sec}
	sends := at(0, 500*ms, sec, 1500*ms)
	assert.Empty(t, Judge(sends, r, false).Violations)
	assert.Equal(t, big.NewInt(2), Judge(sends, r, false).Max)
	assert.Equal(t, []int{2, 3}, Judge(sends, r, true).Violations)
	assert.Equal(t, big.NewInt(3), Judge(sends, r, true).Max)
	one := Rule{N: 1, W: sec}
	assert.Empty(t, Judge(at(0, sec+1), one, true).Violations)
	assert.Equal(t, []int{1}, Judge(at(0, sec-1), one, false).Violations)
}

// TestTiesKeepInputOrder: of equal times the later in the input is the
// violator, and unsorted input is judged in time order.
func TestTiesKeepInputOrder(t *testing.T) {
	r := Rule{N: 1, W: sec, Unit: "tokens"}
	v := Judge(costly([]int64{5 * sec, 0, 0}, []int64{1, 0, 1}), r, false)
	assert.Empty(t, v.Violations, "cost 0 then cost 1 at 0 s fit 1 token")
	v = Judge(costly([]int64{0, 0}, []int64{1, 0}), r, false)
	assert.Empty(t, v.Violations, "cost 0 takes no room")
	v = Judge(costly([]int64{0, 0, 0}, []int64{1, 1, 0}), r, false)
	assert.Equal(t, []int{1, 2}, v.Violations, "cost 0 violates a window already over N")
	assert.Equal(t, []int{1, 0}, Order(at(1, 0)))
}

// TestCostAloneOverLimit: a send whose cost alone exceeds N violates on
// its own, and still counts in later windows.
func TestCostAloneOverLimit(t *testing.T) {
	r := Rule{N: 5, W: sec, Unit: "tokens"}
	v := Judge(costly([]int64{0, 10 * ms}, []int64{6, 1}), r, false)
	assert.Equal(t, []int{0, 1}, v.Violations)
	assert.Equal(t, big.NewInt(7), v.Max)
	assert.Equal(t, []int{0, 1}, Judge(costly([]int64{0, 10 * ms}, []int64{6, 1}), Rule{N: 5, W: sec, Unit: "tokens", Kind: Fixed}, false).Violations)
}

// TestFirstCall: windows open at the first send after the last closed, a
// send exactly W after the opener opens the next, and a send too costly
// for any window opens none.
func TestFirstCall(t *testing.T) {
	r := Rule{N: 2, W: sec, Kind: FirstCall}
	v := Judge(at(0, 900*ms, 950*ms, sec, 1100*ms, 1200*ms), r, false)
	assert.Equal(t, []int{2, 5}, v.Violations, "windows [0,1s) and [1s,2s)")
	assert.Equal(t, big.NewInt(3), v.Max)
	// The sliding rule breaks at 1.05 s; first-call windows [0, 1s) and [1s, 2s) do not.
	sends := at(0, 900*ms, sec, 1050*ms)
	assert.Empty(t, Judge(sends, r, false).Violations)
	assert.Equal(t, []int{3}, Judge(sends, Rule{N: 2, W: sec}, false).Violations)
	c := Rule{N: 5, W: sec, Unit: "tokens", Kind: FirstCall}
	v = Judge(costly([]int64{0, 100 * ms, 200 * ms, 1100 * ms}, []int64{9, 5, 1, 1}), c, false)
	assert.Equal(t, []int{0, 2}, v.Violations, "0 opens nothing; 0.1 s opens [0.1 s, 1.1 s)")
	assert.Equal(t, big.NewInt(9), v.Max, "the lone send of 9 counts as a window of its own")
	v = Judge(costly([]int64{0, 100 * ms, 200 * ms}, []int64{10, 1, 1}), Rule{N: 9, W: 1500 * ms, Unit: "tokens", Kind: FirstCall}, false)
	assert.Equal(t, []int{0}, v.Violations)
	assert.Equal(t, big.NewInt(10), v.Max)
}

// TestDaysInZones: New York's days last 23, 24 and 25 hours; a log kept
// within one local day is one window whatever its length in hours.
func TestDaysInZones(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	for _, c := range []struct {
		day   time.Time
		hours int64
	}{
		{time.Date(2024, 3, 10, 0, 0, 0, 0, ny), 23},
		{time.Date(2024, 3, 11, 0, 0, 0, 0, ny), 24},
		{time.Date(2024, 11, 3, 0, 0, 0, 0, ny), 25},
	} {
		start := c.day.UnixNano()
		end := start + c.hours*int64(time.Hour)
		assert.Equal(t, start, DayStart(start, ny))
		assert.Equal(t, start, DayStart(end-1, ny))
		assert.Equal(t, end, DayStart(end, ny))
		r := Rule{N: 2, W: 24 * int64(time.Hour), Kind: Fixed, Zone: ny}
		assert.Empty(t, Judge(at(start, end-1, end), r, false).Violations)
		assert.Equal(t, []int{2}, Judge(at(start, start+1, end-1), r, false).Violations)
	}
}

// TestOddZones: São Paulo skipped its midnight in spring and made the end
// of a date an hour longer in autumn; Apia skipped a day.
func TestOddZones(t *testing.T) {
	sp, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(t, err)
	// 2018-11-04 00:00 -03 became 01:00 -02: the day starts at 03:00 UTC.
	s, ok := FirstInstant(2018, 11, 4, sp)
	require.True(t, ok)
	assert.Equal(t, time.Date(2018, 11, 4, 3, 0, 0, 0, time.UTC).UnixNano(), s)
	assert.Equal(t, s-24*3600*sec, DayStart(s-1, sp), "the 3rd lasted 24 hours")
	// When 2018-02-18 00:00 -02 came, the clock read 2018-02-17 23:00 -03:
	// the 17th lasted 25 hours and the 18th began at 03:00 UTC.
	feb17, _ := FirstInstant(2018, 2, 17, sp)
	feb18, _ := FirstInstant(2018, 2, 18, sp)
	assert.Equal(t, time.Date(2018, 2, 18, 3, 0, 0, 0, time.UTC).UnixNano(), feb18)
	assert.Equal(t, 25*3600*sec, feb18-feb17)
	assert.Equal(t, feb17, DayStart(feb18-1, sp))
	assert.Equal(t, feb18, DayStart(feb18, sp))

	apia, err := time.LoadLocation("Pacific/Apia")
	require.NoError(t, err)
	_, ok = FirstInstant(2011, 12, 30, apia)
	assert.False(t, ok, "Samoa skipped 2011-12-30")
	dec31, ok := FirstInstant(2011, 12, 31, apia)
	require.True(t, ok)
	assert.Equal(t, dec31-24*3600*sec, DayStart(dec31-1, apia), "the 29th ran 24 hours, to the 31st")
}

// TestClockBackAcrossMidnight: Goose Bay left daylight time at 00:01, back
// to 23:01 of the day before, so its dates ran 27, 28, 27, 28. The 28th's
// window runs from its first instant, and holds the hour lived again.
func TestClockBackAcrossMidnight(t *testing.T) {
	gb, err := time.LoadLocation("America/Goose_Bay")
	require.NoError(t, err)
	oct28 := time.Date(1990, 10, 28, 3, 0, 0, 0, time.UTC).UnixNano() // 00:00 ADT
	s, ok := FirstInstant(1990, 10, 28, gb)
	require.True(t, ok)
	assert.Equal(t, oct28, s)
	again := time.Date(1990, 10, 28, 3, 30, 0, 0, time.UTC).UnixNano() // 23:30 AST of the 27th
	assert.Equal(t, 27, time.Unix(0, again).In(gb).Day())
	assert.Equal(t, oct28, DayStart(again, gb))
	assert.Equal(t, oct28, DayStart(oct28+59*sec, gb))
	assert.Less(t, DayStart(oct28-1, gb), oct28)
}

// TestDayStartHoldsItsInstant: in every zone tried, near 0, today and
// near 2^62 ns (in 2116, leap years included), the window found for t
// starts at or before t, at an instant that is its own start.
func TestDayStartHoldsItsInstant(t *testing.T) {
	for _, z := range []string{"UTC", "America/New_York", "America/Chicago", "Australia/Lord_Howe", "Asia/Kathmandu", "America/Goose_Bay", "Pacific/Apia"} {
		loc, err := time.LoadLocation(z)
		require.NoError(t, err)
		for _, base := range []int64{0, time.Date(2040, 12, 30, 0, 0, 0, 0, time.UTC).UnixNano(), 1 << 62} {
			for k := int64(0); k < 200; k++ {
				at := base + k*7*int64(time.Hour) + k*k
				s := DayStart(at, loc)
				require.LessOrEqual(t, s, at, "%s at %d", z, at)
				require.Equal(t, s, DayStart(s, loc), "%s at %d", z, at)
				require.Less(t, DayStart(s-1, loc), s, "%s at %d", z, at)
				require.LessOrEqual(t, at-s, 26*3600*sec, "%s at %d", z, at)
			}
		}
	}
}
