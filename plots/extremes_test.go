package plots

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

const year = 365 * 24 * time.Hour

// extremeLogs are send instants at the edges of what check accepts: the
// ends of the int64 range, a single send, equal instants, spans of 1 ns and
// of 292 years (about all an int64 of nanoseconds holds) and more.
var extremeLogs = []struct {
	name  string
	times []int64
}{
	{"the issue's: 0.8 s before the end of the int64 range", []int64{9223372036_000_000_000, 9223372036_800_000_000}},
	{"int64 max alone", []int64{math.MaxInt64}},
	{"int64 min alone", []int64{math.MinInt64}},
	{"int64 min and max", []int64{math.MinInt64, math.MaxInt64}},
	{"the last nanoseconds", []int64{math.MaxInt64 - 1, math.MaxInt64, math.MaxInt64}},
	{"the first nanoseconds", []int64{math.MinInt64, math.MinInt64, math.MinInt64 + 1}},
	{"a single send", []int64{1767225600_000_000_000}},
	{"all equal", []int64{1767225600_000_000_000, 1767225600_000_000_000, 1767225600_000_000_000, 1767225600_000_000_000}},
	{"a span of 1 ns", []int64{1767225600_000_000_000, 1767225600_000_000_001}},
	{"a span of 292 years", []int64{0, int64(292 * year)}},
	{"292 years up to int64 max", []int64{math.MaxInt64 - int64(292*year), math.MaxInt64 - int64(year), math.MaxInt64}},
	{"across zero from int64 min", []int64{math.MinInt64, -1, 0, 1, math.MaxInt64 / 2}},
}

var extremeRules = []rule.Rule{
	{Limit: 1, Window: time.Second},
	{Limit: 2, Window: time.Nanosecond},
	{Limit: 2, Window: 24 * time.Hour},
	{Limit: 1, Window: math.MaxInt64},
}

// bounded runs f, which must return well within limit; past it the test
// binary stops with a panic, so that a loop that grows memory without
// bound (as the wall-clock ticks once did near the int64 end) cannot take
// the machine with it.
func bounded(t *testing.T, what string, limit time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		panic(fmt.Sprintf("%s: still running after %v: it loops on this input", what, limit))
	}
}

// TestWallTicksBoundedAtExtremes: whatever range an axis is asked for, up
// to the whole int64 range, the ticks come back, at most 50 of them,
// in order, inside the range, on the axis' wall-clock instants.
func TestWallTicksBoundedAtExtremes(t *testing.T) {
	for _, lg := range extremeLogs {
		from, to := lg.times[0], lg.times[len(lg.times)-1]
		axis := newTimeAxis(from, to-from)
		xMax := max(axis.x(to), 1)
		for _, loc := range []*time.Location{time.UTC, time.FixedZone("E14", 14*3600), time.FixedZone("W12", -12*3600)} {
			var ticks []Tick
			bounded(t, lg.name, 10*time.Second, func() {
				for _, tk := range (wallTicks{axis: axis, loc: loc}).Ticks(0, xMax) {
					ticks = append(ticks, Tick{tk.Value, tk.Label})
				}
			})
			assert.LessOrEqual(t, len(ticks), 50, "%s, %s: ticks", lg.name, loc)
			for i, tk := range ticks {
				assert.GreaterOrEqual(t, tk.Value, 0.0, "%s, %s: tick %q before the axis", lg.name, loc, tk.Label)
				assert.LessOrEqual(t, tk.Value, xMax*(1+1e-9), "%s, %s: tick %q past the axis", lg.name, loc, tk.Label)
				if i > 0 {
					assert.Greater(t, tk.Value, ticks[i-1].Value, "%s, %s: ticks out of order: %v", lg.name, loc, ticks)
				}
			}
		}
	}
}

// Tick is a plot.Tick, copied out of the bounded call.
type Tick struct {
	Value float64
	Label string
}

// TestNiceTicksBounded: a range far from zero, where k+1 == k in floats,
// or with no finite width, still yields a bounded list.
func TestNiceTicksBounded(t *testing.T) {
	for _, r := range [][2]float64{{1e17, 1e17 + 100}, {0, math.Inf(1)}, {-math.MaxFloat64, math.MaxFloat64}, {math.NaN(), 1}} {
		var n int
		bounded(t, fmt.Sprint(r), 10*time.Second, func() { n = len(niceTicks{n: 10}.Ticks(r[0], r[1])) })
		assert.LessOrEqual(t, n, 50, "%v: ticks", r)
	}
}

// TestSeriesAgreesWithCheckerAtExtremes: the timeline's violations and
// peak are the checker's on every extreme log, every rule and boundary:
// near the int64 end, s+W overflowed and sends left their windows at once.
func TestSeriesAgreesWithCheckerAtExtremes(t *testing.T) {
	for _, lg := range extremeLogs {
		for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
			var s Series
			var err error
			bounded(t, lg.name, 10*time.Second, func() {
				s, err = TimelineSeries(TimelineInput{Times: lg.times, Rules: extremeRules, Boundary: b}, 960)
			})
			require.NoError(t, err, lg.name)
			rep, err := checker.Check(lg.times, checker.Config{Rules: extremeRules, Boundary: b})
			require.NoError(t, err, lg.name)
			for i, rr := range rep.Rules {
				var over int64 // Occupancy's steps of sends over the limit
				bounded(t, lg.name, 10*time.Second, func() {
					for st := range Occupancy(lg.times, extremeRules[i].Window, b) {
						if st.Send >= 0 && st.Count > int64(extremeRules[i].Limit) {
							over++
						}
					}
				})
				assert.Equal(t, rr.Violations, over, "%s, %v %s: Occupancy's violations", lg.name, extremeRules[i], b)
				assert.Equal(t, rr.Violations, s.Rules[i].Violations, "%s, %v %s: violations", lg.name, extremeRules[i], b)
				assert.Equal(t, rr.MaxInWindow, s.Rules[i].Peak, "%s, %v %s: peak", lg.name, extremeRules[i], b)
				assert.True(t, slices.IsSortedFunc(s.Rules[i].Steps, func(a, b Point) int { return cmpInt(a.At, b.At) }),
					"%s, %v %s: steps out of order: %v", lg.name, extremeRules[i], b, s.Rules[i].Steps)
			}
		}
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestTimelineDrawsExtremes draws every extreme log, on a wall-clock axis
// and on an axis of offsets: each returns, and writes its file.
func TestTimelineDrawsExtremes(t *testing.T) {
	TestWallTicksBoundedAtExtremes(t) // a looping ticker stops here, before any drawing
	if t.Failed() {
		return
	}
	dir := t.TempDir()
	for i, lg := range extremeLogs {
		for _, wall := range []bool{true, false} {
			path := filepath.Join(dir, fmt.Sprintf("extreme-%d-%v.svg", i, wall))
			var err error
			bounded(t, lg.name, 2*time.Minute, func() {
				err = Timeline(path, TimelineInput{Title: lg.name, Times: lg.times, Rules: extremeRules[:2], WallClock: wall})
			})
			assert.NoError(t, err, "%s, wall clock %v", lg.name, wall)
			assert.FileExists(t, path, "%s, wall clock %v", lg.name, wall)
		}
	}
}

// FuzzTimelineAgainstChecker: on any three instants and any rule, the
// timeline counts the checker's violations and peak, and its wall-clock
// ticks stay bounded and in order.
func FuzzTimelineAgainstChecker(f *testing.F) {
	for _, lg := range extremeLogs {
		ts := append(slices.Clone(lg.times), lg.times[0], lg.times[0])
		f.Add(ts[0], ts[1], ts[2], int64(time.Second), uint8(1), false)
	}
	f.Add(int64(math.MaxInt64-800_000_000), int64(math.MaxInt64-1), int64(math.MaxInt64), int64(time.Second), uint8(1), true)
	f.Fuzz(func(t *testing.T, a, b, c, w int64, limit uint8, closed bool) {
		times := []int64{a, b, c}
		slices.Sort(times)
		r := rule.Rule{Limit: int(limit%4) + 1, Window: time.Duration(max(w, 1))}
		bd := rule.HalfOpen
		if closed {
			bd = rule.Closed
		}
		s, err := TimelineSeries(TimelineInput{Times: times, Rules: []rule.Rule{r}, Boundary: bd}, 960)
		require.NoError(t, err)
		rep, err := checker.Check(times, checker.Config{Rules: []rule.Rule{r}, Boundary: bd})
		require.NoError(t, err)
		require.Equal(t, rep.Rules[0].Violations, s.Rules[0].Violations, "%v %v %s: violations", times, r, bd)
		require.Equal(t, rep.Rules[0].MaxInWindow, s.Rules[0].Peak, "%v %v %s: peak", times, r, bd)
		axis := newTimeAxis(times[0], times[2]-times[0])
		var n int
		bounded(t, fmt.Sprint(times), 10*time.Second, func() {
			n = len(wallTicks{axis: axis, loc: time.UTC}.Ticks(0, max(axis.x(times[2]), 1)))
		})
		require.LessOrEqual(t, n, 50, "%v: ticks", times)
	})
}
