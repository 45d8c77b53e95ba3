package plots

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/internal/fixtures"
	"github.com/rlcheck/rlcheck/rule"
)

// TestSeriesFixtureSequential: the asyncio sequential log has two 5/1s
// violations, and the timeline marks both at their sends' instants.
func TestSeriesFixtureSequential(t *testing.T) {
	times := fixtures.MustTimes(t, "asyncio-sequential.txt")
	s, err := TimelineSeries(TimelineInput{Times: times, Rules: fixtureRules}, 960)
	if err != nil {
		t.Fatal(err)
	}
	var want []Marker
	cfg := checker.Config{Rules: fixtureRules, OnViolation: func(r int, v checker.Violation) {
		if r == 0 {
			want = append(want, Marker{At: v.Send.At, Count: v.Count, Send: v.Index, Merged: 1})
		}
	}}
	if _, err := checker.Check(times, cfg); err != nil {
		t.Fatal(err)
	}
	if len(want) != 2 || s.Rules[0].Violations != 2 || s.Rules[1].Violations != 0 {
		t.Fatalf("violations %d and %d, checker listed %d; the fixture has 2 and 0", s.Rules[0].Violations, s.Rules[1].Violations, len(want))
	}
	if s.Rules[0].First != want[0] {
		t.Errorf("first violation %+v, want %+v", s.Rules[0].First, want[0])
	}
	if !slices.Equal(s.Rules[0].Markers, want) {
		t.Errorf("markers %+v, want %+v", s.Rules[0].Markers, want)
	}
	if len(s.Rules[1].Markers) != 0 {
		t.Errorf("12/3s markers %+v, want none", s.Rules[1].Markers)
	}
	cols := newPixelColumns(s.From, s.To, 960)
	for _, m := range s.Rules[0].Markers {
		if top := columnTop(s.Rules[0].Steps, cols, cols.of(m.At)); top < m.Count {
			t.Errorf("marker at %d ns, height %d, sits above the line (%d in its column)", m.At, m.Count, top)
		}
	}

	comb, err := TimelineSeries(TimelineInput{Times: fixtures.MustTimes(t, "asyncio-combined.txt"), Rules: fixtureRules}, 960)
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range comb.Rules {
		if rs.Violations != 0 || len(rs.Markers) != 0 {
			t.Errorf("combined %s: %d violations, %d markers, want none", rs.Rule, rs.Violations, len(rs.Markers))
		}
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
		if err != nil {
			t.Fatal(err)
		}
		cols := newPixelColumns(s.From, s.To, columns)
		for ri, r := range rules {
			rs := s.Rules[ri]
			exact := collect(times, r.Window, b)
			checkReduced(t, trial, r, cols, exact, rs.Steps)

			var peak int64
			for _, st := range exact {
				peak = max(peak, st.Count)
			}
			rep, _ := checker.Check(times, checker.Config{Rules: []rule.Rule{r}, Boundary: b})
			if rs.Peak != peak || (!rep.Rules[0].MaxSaturated && rs.Peak != rep.Rules[0].MaxInWindow) {
				t.Errorf("trial %d %s: peak %d, exact %d, checker %d", trial, r, rs.Peak, peak, rep.Rules[0].MaxInWindow)
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
	if len(want) != len(have) {
		t.Fatalf("trial %d %s: %d columns have steps, reduced series covers %d", trial, r, len(want), len(have))
	}
	for c, w := range want {
		h := have[c]
		if h == nil {
			t.Fatalf("trial %d %s: column %d lost", trial, r, c)
		}
		if h.first != w.first || h.last != w.last || h.low.Count != w.low.Count || h.high.Count != w.high.Count {
			t.Fatalf("trial %d %s: column %d reduced to %+v, exact %+v", trial, r, c, *h, *w)
		}
		if h.n > 4 || (w.n <= 4 && h.n != w.n) {
			t.Fatalf("trial %d %s: column %d keeps %d of %d steps", trial, r, c, h.n, w.n)
		}
	}
	// The reduced series is the exact one with steps left out, in order.
	j := 0
	for _, p := range got {
		for j < len(pts) && pts[j] != p {
			j++
		}
		if j == len(pts) {
			t.Fatalf("trial %d %s: point %+v is not an exact step, or out of order", trial, r, p)
		}
		j++
	}
}

func checkMarkers(t *testing.T, trial int, r rule.Rule, b rule.Boundary, cols pixelColumns, times []int64, rs RuleSeries) {
	t.Helper()
	var all []checker.Violation
	cfg := checker.Config{Rules: []rule.Rule{r}, Boundary: b, OnViolation: func(_ int, v checker.Violation) { all = append(all, v) }}
	if _, err := checker.Check(times, cfg); err != nil {
		t.Fatal(err)
	}
	if int64(len(all)) != rs.Violations {
		t.Fatalf("trial %d %s: %d violations, checker %d", trial, r, rs.Violations, len(all))
	}
	if len(all) > 0 && (rs.First.At != all[0].Send.At || rs.First.Send != all[0].Index) {
		t.Fatalf("trial %d %s: first violation %+v, checker %+v", trial, r, rs.First, all[0])
	}
	var merged int64
	for _, m := range rs.Markers {
		merged += m.Merged
	}
	if merged != rs.Violations {
		t.Fatalf("trial %d %s: markers stand for %d violations, want %d", trial, r, merged, rs.Violations)
	}
	if len(all) <= MaxMarkers {
		if len(rs.Markers) != len(all) {
			t.Fatalf("trial %d %s: %d markers for %d violations", trial, r, len(rs.Markers), len(all))
		}
		for i, v := range all {
			if m := rs.Markers[i]; m.At != v.Send.At || m.Count != v.Count || m.Send != v.Index {
				t.Fatalf("trial %d %s: marker %d %+v, violation %+v", trial, r, i, m, v)
			}
		}
		return
	}
	// Merged: one marker per column, at the column's highest violation.
	highest := map[int]int64{}
	for _, v := range all {
		c := cols.of(v.Send.At)
		highest[c] = max(highest[c], v.Count)
	}
	if len(rs.Markers) != len(highest) {
		t.Fatalf("trial %d %s: %d markers for %d columns with violations", trial, r, len(rs.Markers), len(highest))
	}
	for _, m := range rs.Markers {
		if c := cols.of(m.At); highest[c] != m.Count {
			t.Fatalf("trial %d %s: column %d marker at %d, highest violation %d", trial, r, c, m.Count, highest[c])
		}
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
	if err != nil {
		t.Fatal(err)
	}
	rs := s.Rules[0]
	if rs.Violations != 4999 || len(rs.Markers) != 10 {
		t.Fatalf("%d violations in %d markers, want 4999 in 10 (one per column)", rs.Violations, len(rs.Markers))
	}
	checkMarkers(t, 0, r, rule.HalfOpen, newPixelColumns(s.From, s.To, 10), times, rs)
}

func TestSeriesErrors(t *testing.T) {
	if _, err := TimelineSeries(TimelineInput{Rules: fixtureRules}, 10); !errors.Is(err, ErrNoSends) {
		t.Errorf("no sends: %v", err)
	}
	if _, err := TimelineSeries(TimelineInput{Times: []int64{1}}, 10); err == nil {
		t.Error("no rules: accepted")
	}
	var oe *checker.OrderError
	if _, err := TimelineSeries(TimelineInput{Times: []int64{5, 3}, Rules: fixtureRules}, 10); !errors.As(err, &oe) {
		t.Errorf("out of order: %v", err)
	}
}

func TestPixelColumns(t *testing.T) {
	c := newPixelColumns(100, 200, 10)
	for _, tt := range []struct {
		at   int64
		want int
	}{{50, 0}, {100, 0}, {109, 0}, {110, 1}, {199, 9}, {200, 9}, {300, 9}} {
		if got := c.of(tt.at); got != tt.want {
			t.Errorf("of(%d) = %d, want %d", tt.at, got, tt.want)
		}
	}
	// Epoch nanoseconds times a column count overflow int64; the math must not.
	big := newPixelColumns(1<<62, 1<<62+int64(24*time.Hour), 1000)
	if got := big.of(1<<62 + int64(12*time.Hour)); got != 500 {
		t.Errorf("half way through a day: column %d, want 500", got)
	}
	for _, c := range []pixelColumns{c, newPixelColumns(3, 1003, 7), newPixelColumns(-50, 13, 64), big} {
		for col := 1; col < c.n; col++ {
			at := c.start(col)
			if c.of(at) != col || c.of(at-1) != col-1 {
				t.Fatalf("%+v: column %d starts at %d, but of(%d) = %d and of(%d) = %d", c, col, at, at, c.of(at), at-1, c.of(at-1))
			}
		}
	}
	if got := newPixelColumns(7, 7, 10).of(7); got != 0 {
		t.Errorf("zero span: column %d", got)
	}
}
