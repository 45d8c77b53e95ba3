package plots

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/fixtures"
	"github.com/rlcheck/rlcheck/rule"
)

var fixtureRules = []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}}

// TestRenderTimeline is a smoke test: every chart renders in both formats.
// Pixels are not compared; the series tests check what is drawn.
func TestRenderTimeline(t *testing.T) {
	dir := outDir(t)
	seq := fixtures.MustTimes(t, "asyncio-sequential.txt")
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, "timeline-sequential"+ext)
		in := TimelineInput{Title: "sequential: window usage (asyncio fixture)", Times: seq, Rules: fixtureRules, Strategy: "sequential"}
		require.NoError(t, Timeline(path, in))
		wall := in
		wall.Title = "sequential, wall-clock axis"
		wall.WallClock = true
		wall.Times = make([]int64, len(seq))
		for i, v := range seq {
			wall.Times[i] = v + time.Date(2026, 11, 30, 4, 34, 38, 0, time.UTC).UnixNano()
		}
		require.NoError(t, Timeline(filepath.Join(dir, "timeline-wall"+ext), wall))
		assertNonEmpty(t, path)
	}
}

func TestRenderRejectsUnknownExtension(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"chart.pdf", "chart", "chart.png.txt"} {
		err := Timeline(filepath.Join(dir, name), TimelineInput{Times: []int64{0}, Rules: fixtureRules})
		assert.ErrorContains(t, err, ".png or .svg", "%s: want an unknown-format error", name)
		assert.NoFileExists(t, filepath.Join(dir, name), "%s: a file was written", name)
	}
	assert.NoError(t, Timeline(filepath.Join(dir, "UPPER.PNG"), TimelineInput{Times: []int64{0}, Rules: fixtureRules}), "UPPER.PNG")
}

func assertNonEmpty(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.NotZero(t, st.Size(), "%s is empty", path)
}

// sampleSummary is made-up input for the smoke tests, shaped like a
// simulator run over the fixture rules.
func sampleSummary() Summary {
	names := []string{"sequential", "combined", "gated", "gated-rates-first", "redis", "some-new-strategy"}
	s := Summary{Title: "30 callers, 5/1s + 12/3s", Rules: fixtureRules}
	for i, n := range names {
		r := StrategyResult{
			Name:       n,
			Duration:   7*time.Second + time.Duration(i)*3*time.Millisecond,
			Violations: []int64{int64(2 * (i % 2)), int64(i / 4)},
			Waited:     []time.Duration{time.Duration(i+1) * 700 * time.Millisecond, 31 * time.Second},
		}
		for run := range 40 {
			r.RunViolations = append(r.RunViolations, int64((run*(i+1))%(i+3)))
		}
		s.Strategies = append(s.Strategies, r)
	}
	return s
}

func TestRenderSummaryCharts(t *testing.T) {
	dir := outDir(t)
	s := sampleSummary()
	charts := map[string]func(string, Summary) error{
		"comparison": Comparison, "distribution": Distribution, "waits": Waits,
	}
	for _, name := range []string{"comparison", "distribution", "waits"} {
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, name+ext)
			require.NoError(t, charts[name](path, s), name)
			assertNonEmpty(t, path)
			assert.Error(t, charts[name](filepath.Join(dir, name+".jpg"), s), "%s: .jpg accepted", name)
		}
	}
}

// TestRenderLargeLog draws the benchmark's 10-million-send log only when
// -keep is given, for a person to look at.
func TestRenderLargeLog(t *testing.T) {
	if *keep == "" {
		t.Skip("needs -keep DIR")
	}
	in := TimelineInput{Title: "generated log, 10M sends in a day", Times: benchLog(10_000_000), Rules: append(benchRules[:3:3], dayRule), WallClock: true}
	for _, ext := range []string{".png", ".svg"} {
		require.NoError(t, Timeline(filepath.Join(*keep, "timeline-10m"+ext), in))
	}
}
