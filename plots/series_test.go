package plots

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/internal/fixtures"
	"github.com/rlcheck/rlcheck/rule"
)

// TestSeriesFixtureSequential: the asyncio sequential log has two 5/1s
// violations, and the timeline marks both at their sends' instants.
func TestSeriesFixtureSequential(t *testing.T) {
	times := fixtures.MustTimes(t, "asyncio-sequential.txt")
	s, err := TimelineSeries(TimelineInput{Times: times, Rules: fixtureRules}, 960)
	require.NoError(t, err)
	var want []Marker
	cfg := checker.Config{Rules: fixtureRules, OnViolation: func(r int, v checker.Violation) {
		if r == 0 {
			want = append(want, Marker{At: v.Send.At, Count: v.Count, Send: v.Index, Merged: 1})
		}
	}}
	_, err = checker.Check(times, cfg)
	require.NoError(t, err)
	// The fixture has 2 violations of 5/1s and none of 12/3s.
	require.Len(t, want, 2, "violations the checker listed")
	require.Equal(t, []int64{2, 0}, []int64{s.Rules[0].Violations, s.Rules[1].Violations}, "violations per rule")
	assert.Equal(t, want[0], s.Rules[0].First, "first violation")
	assert.Equal(t, want, s.Rules[0].Markers, "markers")
	assert.Empty(t, s.Rules[1].Markers, "12/3s markers")
	cols := newPixelColumns(s.From, s.To, 960)
	for _, m := range s.Rules[0].Markers {
		top := columnTop(s.Rules[0].Steps, cols, cols.of(m.At))
		assert.GreaterOrEqual(t, top, m.Count, "marker at %d ns, height %d, sits above the line (%d in its column)", m.At, m.Count, top)
	}

	comb, err := TimelineSeries(TimelineInput{Times: fixtures.MustTimes(t, "asyncio-combined.txt"), Rules: fixtureRules}, 960)
	require.NoError(t, err)
	for _, rs := range comb.Rules {
		assert.Zero(t, rs.Violations, "combined %s: violations", rs.Rule)
		assert.Empty(t, rs.Markers, "combined %s: markers", rs.Rule)
	}
}

// columnTop is the highest point the line reaches in pixel column c.
func columnTop(pts []Point, cols pixelColumns, c int) int64 {
	var v int64
	for _, p := range pts {
		if cols.of(p.At) == c {
			v = max(v, p.Count)
		}
	}
	return v
}

// TestSeriesDownsampling compares the reduced series with the exact steps
// column by column: extremes, edges and every violation survive.
func TestSeriesDownsampling(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 12 {
		w := time.Duration(100 + rng.IntN(5000))
		rules := []rule.Rule{{Limit: 3 + rng.IntN(20), Window: w}, {Limit: 40 + rng.IntN(40), Window: 7 * w}}
		b := rule.Boundary(trial % 2)
		n := 500 + rng.IntN(20000)
		times := randomTimes(rng, n, int64(w)/3)
		columns := 7 + rng.IntN(300)
		in := TimelineInput{Times: times, Rules: rules, Boundary: b}
		s, err := TimelineSeries(in, columns)
		require.NoError(t, err)
		cols := newPixelColumns(s.From, s.To, columns)
		for ri, r := range rules {
			rs := s.Rules[ri]
			exact := collect(times, r.Window, b)
			checkReduced(t, trial, r, cols, exact, rs.Steps)

			var peak int64
			for _, st := range exact {
				peak = max(peak, st.Count)
			}
			rep, err := checker.Check(times, checker.Config{Rules: []rule.Rule{r}, Boundary: b})
			require.NoError(t, err)
			assert.Equal(t, peak, rs.Peak, "trial %d %s: peak against the exact steps", trial, r)
			if !rep.Rules[0].MaxSaturated {
				assert.Equal(t, rep.Rules[0].MaxInWindow, rs.Peak, "trial %d %s: peak against the checker's", trial, r)
			}
			checkMarkers(t, trial, r, b, cols, times, rs)
		}
	}
}

func checkReduced(t *testing.T, trial int, r rule.Rule, cols pixelColumns, exact []Step, got []Point) {
	t.Helper()
	type span struct {
		first, last, low, high Point
		n                      int
	}
	summarize := func(pts []Point) map[int]*span {
		m := map[int]*span{}
		for _, p := range pts {
			c := cols.of(p.At)
			sp, ok := m[c]
			if !ok {
				sp = &span{first: p, low: p, high: p}
				m[c] = sp
			}
			sp.last = p
			sp.n++
			if p.Count < sp.low.Count {
				sp.low = p
			}
			if p.Count > sp.high.Count {
				sp.high = p
			}
		}
		return m
	}
	pts := make([]Point, len(exact))
	for i, s := range exact {
		pts[i] = Point{s.At, s.Count}
	}
	want, have := summarize(pts), summarize(got)
	require.Len(t, have, len(want), "trial %d %s: columns the reduced series covers, against those with steps", trial, r)
	for c, w := range want {
		h := have[c]
		require.NotNil(t, h, "trial %d %s: column %d lost", trial, r, c)
		// first, last and the extremes' heights survive the reduction
		require.Equal(t, [4]any{w.first, w.last, w.low.Count, w.high.Count}, [4]any{h.first, h.last, h.low.Count, h.high.Count},
			"trial %d %s: column %d reduced to %+v, exact %+v", trial, r, c, *h, *w)
		require.LessOrEqual(t, h.n, 4, "trial %d %s: column %d keeps %d of %d steps", trial, r, c, h.n, w.n)
		if w.n <= 4 {
			require.Equal(t, w.n, h.n, "trial %d %s: column %d keeps %d of %d steps", trial, r, c, h.n, w.n)
		}
	}
	// The reduced series is the exact one with steps left out, in order.
	j := 0
	for _, p := range got {
		for j < len(pts) && pts[j] != p {
			j++
		}
		require.Less(t, j, len(pts), "trial %d %s: point %+v is not an exact step, or out of order", trial, r, p)
		j++
	}
}

func checkMarkers(t *testing.T, trial int, r rule.Rule, b rule.Boundary, cols pixelColumns, times []int64, rs RuleSeries) {
	t.Helper()
	var all []checker.Violation
	cfg := checker.Config{Rules: []rule.Rule{r}, Boundary: b, OnViolation: func(_ int, v checker.Violation) { all = append(all, v) }}
	_, err := checker.Check(times, cfg)
	require.NoError(t, err)
	require.Equal(t, int64(len(all)), rs.Violations, "trial %d %s: violations against the checker's", trial, r)
	if len(all) > 0 {
		require.Equal(t, [2]int64{all[0].Send.At, int64(all[0].Index)}, [2]int64{rs.First.At, int64(rs.First.Send)},
			"trial %d %s: first violation (at, send) %+v, checker %+v", trial, r, rs.First, all[0])
	}
	var merged int64
	for _, m := range rs.Markers {
		merged += m.Merged
	}
	require.Equal(t, rs.Violations, merged, "trial %d %s: violations the markers stand for", trial, r)
	if len(all) <= MaxMarkers {
		require.Len(t, rs.Markers, len(all), "trial %d %s: a marker per violation", trial, r)
		for i, v := range all {
			m := rs.Markers[i]
			require.Equal(t, [3]int64{v.Send.At, v.Count, int64(v.Index)}, [3]int64{m.At, m.Count, int64(m.Send)},
				"trial %d %s: marker %d (at, count, send) %+v, violation %+v", trial, r, i, m, v)
		}
		return
	}
	// Merged: one marker per column, at the column's highest violation.
	highest := map[int]int64{}
	for _, v := range all {
		c := cols.of(v.Send.At)
		highest[c] = max(highest[c], v.Count)
	}
	require.Len(t, rs.Markers, len(highest), "trial %d %s: a marker per column with violations", trial, r)
	for _, m := range rs.Markers {
		c := cols.of(m.At)
		require.Equal(t, highest[c], m.Count, "trial %d %s: column %d: marker height against the highest violation", trial, r, c)
	}
}

func TestSeriesMergesManyViolations(t *testing.T) {
	// Every send of a burst of ties breaks 1/1s, far beyond MaxMarkers.
	times := make([]int64, 5000)
	for i := range times {
		times[i] = int64(i/50) * int64(time.Millisecond)
	}
	r := rule.Rule{Limit: 1, Window: time.Second}
	s, err := TimelineSeries(TimelineInput{Times: times, Rules: []rule.Rule{r}}, 10)
	require.NoError(t, err)
	rs := s.Rules[0]
	require.Equal(t, int64(4999), rs.Violations, "violations")
	require.Len(t, rs.Markers, 10, "markers (one per column)")
	checkMarkers(t, 0, r, rule.HalfOpen, newPixelColumns(s.From, s.To, 10), times, rs)
}

func TestSeriesErrors(t *testing.T) {
	_, err := TimelineSeries(TimelineInput{Rules: fixtureRules}, 10)
	assert.ErrorIs(t, err, ErrNoSends, "no sends")
	_, err = TimelineSeries(TimelineInput{Times: []int64{1}}, 10)
	assert.Error(t, err, "no rules: accepted")
	var oe *checker.OrderError
	_, err = TimelineSeries(TimelineInput{Times: []int64{5, 3}, Rules: fixtureRules}, 10)
	assert.ErrorAs(t, err, &oe, "out of order")
}

func TestPixelColumns(t *testing.T) {
	c := newPixelColumns(100, 200, 10)
	for _, tt := range []struct {
		at   int64
		want int
	}{{50, 0}, {100, 0}, {109, 0}, {110, 1}, {199, 9}, {200, 9}, {300, 9}} {
		assert.Equal(t, tt.want, c.of(tt.at), "of(%d)", tt.at)
	}
	// Epoch nanoseconds times a column count overflow int64; the math must not.
	big := newPixelColumns(1<<62, 1<<62+int64(24*time.Hour), 1000)
	assert.Equal(t, 500, big.of(1<<62+int64(12*time.Hour)), "half way through a day")
	for _, c := range []pixelColumns{c, newPixelColumns(3, 1003, 7), newPixelColumns(-50, 13, 64), big} {
		for col := 1; col < c.n; col++ {
			at := c.start(col)
			require.Equal(t, col, c.of(at), "%+v: column %d starts at %d", c, col, at)
			require.Equal(t, col-1, c.of(at-1), "%+v: column %d starts at %d, the instant before", c, col, at)
		}
	}
	assert.Zero(t, newPixelColumns(7, 7, 10).of(7), "zero span: column")
}

// TestBandMergesAdjacentColumns: violations in neighbouring pixel columns
// shade one run, a gap of an empty column starts another, and the runs
// cover every violation.
func TestBandMergesAdjacentColumns(t *testing.T) {
	axis := newTimeAxis(0, int64(10*time.Second))
	cols := newPixelColumns(0, 10e9, 100) // 0.1 s a column
	ms := []Marker{{At: 1.05e9}, {At: 1.1e9}, {At: 1.25e9}, {At: 5e9}, {At: 5.01e9}, {At: 10e9}}
	b := newBand(ms, axis, cols, 7)
	require.Len(t, b.spans, 3)
	assert.InDelta(t, 1.0, b.spans[0][0], 1e-9)
	assert.InDelta(t, 1.3, b.spans[0][1], 1e-9)
	assert.InDelta(t, 5.0, b.spans[1][0], 1e-9)
	assert.InDelta(t, 5.1, b.spans[1][1], 1e-9)
	assert.InDelta(t, 9.9, b.spans[2][0], 1e-9, "the last send is in the last column")
	assert.InDelta(t, 10.0, b.spans[2][1], 1e-9)
	assert.Equal(t, 7.0, b.top)
}
