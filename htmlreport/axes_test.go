package htmlreport_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/htmlreport"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/sendlog"
	"github.com/rlcheck/rlcheck/simulate"
)

type tick struct {
	X     float64 `json:"x"`
	Label string  `json:"label"`
}

// xAxis is what panel p's first chart shows on its time axis: its name
// and the ticks the page computes for the chart's range, or for [lo, hi]
// (seconds from the panel's first send) when lo < hi.
type xAxis struct {
	Label    string  `json:"label"`
	Ticks    []tick  `json:"ticks"`
	FromSec  float64 `json:"fromSec"`
	FromFrac float64 `json:"fromFrac"`
}

func (b *browser) xAxis(t *testing.T, p int, lo, hi float64) xAxis {
	t.Helper()
	var raw string
	b.eval(t, fmt.Sprintf(`(() => {
		const p = window.rlcheckReport.panels[%d], u = p.charts[0];
		let lo = %v, hi = %v;
		if (!(lo < hi)) { lo = u.scales.x.min; hi = u.scales.x.max; }
		return JSON.stringify({label: u.axes[0].label, ticks: p.ticks(lo, hi), fromSec: p.fromSec, fromFrac: p.fromFrac});
	})()`, p, lo, hi), &raw)
	var ax xAxis
	require.NoError(t, json.Unmarshal([]byte(raw), &ax), raw)
	return ax
}

// TestCheckAxisIsWallClock: a log's time axis is the wall clock in UTC, on
// round instants, with the date under the first tick and the zone in its
// name; it was seconds from the first send, running to 24,000 on a long
// log. Zoomed in, the ticks reach microseconds; over any range, however
// wide, there are at most 50.
func TestCheckAxisIsWallClock(t *testing.T) {
	b := newBrowser(t)
	path := filepath.Join(t.TempDir(), "check.html")
	require.NoError(t, htmlreport.Check(path, checkLog(t, 6000), 0, 20))
	b.open(t, path)
	ax := b.xAxis(t, 0, 0, 0)
	assert.Contains(t, ax.Label, "UTC", "the zone is named")
	assert.Contains(t, ax.Label, "2026-01-01 00:00:", "the first send's day and time are named")
	require.NotEmpty(t, ax.Ticks)
	assert.Regexp(t, `^\d\d:\d\d(:\d\d)?\n2026-01-01$`, ax.Ticks[0].Label, "the first tick carries the date")
	for _, tk := range ax.Ticks[1:] {
		assert.Regexp(t, `^\d\d:\d\d(:\d\d)?$`, tk.Label, "a tick of the same day")
	}
	for _, tk := range ax.Ticks {
		ms := math.Round((ax.FromFrac + tk.X*1e9) / 1e6)
		assert.Zero(t, math.Mod(ms, 1000), "tick %q is not on a whole second", tk.Label)
		want := int64(ax.FromSec) + int64(ms/1000)
		assert.Equal(t, fmt.Sprintf("%02d:%02d", want/3600%24, want/60%60), tk.Label[:5], "tick at x=%v", tk.X)
	}
	fine := b.xAxis(t, 0, 1, 1.002)
	require.NotEmpty(t, fine.Ticks)
	for _, tk := range fine.Ticks {
		assert.Regexp(t, `^\d\d:\d\d:\d\d\.\d{6}(\n2026-01-01)?$`, tk.Label, "2 ms wide: microseconds")
	}
	wide := b.xAxis(t, 0, -1e12, 1e12)
	assert.LessOrEqual(t, len(wide.Ticks), 50, "63,000 years wide")
	b.noErrors(t)
}

// TestSimulateAxisCountsFromTheRunStart: a simulation's time axis counts
// seconds since the run's start, on round values.
func TestSimulateAxisCountsFromTheRunStart(t *testing.T) {
	b := newBrowser(t)
	simulateReport(t, b, t.TempDir(), "seed", 2)
	ax := b.xAxis(t, 0, 0, 0)
	assert.Equal(t, "seconds since the run's start", ax.Label)
	require.NotEmpty(t, ax.Ticks)
	for _, tk := range ax.Ticks {
		v, err := strconv.ParseFloat(tk.Label, 64)
		require.NoError(t, err, "tick %q", tk.Label)
		assert.InDelta(t, ax.FromSec+ax.FromFrac/1e9+tk.X, v, 1e-6, "tick %q at x=%v", tk.Label, tk.X)
	}
	b.noErrors(t)
}

// TestSimulateDistributionPerStrategy: the violations per run across seeds
// get one chart per strategy, each on its own scale of runs: sequential's
// spread is no longer flattened beside combined's every run at zero.
func TestSimulateDistributionPerStrategy(t *testing.T) {
	b := newBrowser(t)
	scn, err := scenarios.Shipped("seed")
	require.NoError(t, err)
	scn.Strategies = []string{"sequential", "combined"}
	const seeds = 60
	runs, err := simulate.RunSeeds(&scn.Scenario, seeds, simulate.Options{})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "seed.html")
	require.NoError(t, htmlreport.Simulate(path, runs))
	b.open(t, path)
	var n int
	b.eval(t, `document.querySelectorAll("#distribution .dist").length`, &n)
	require.Equal(t, 2, n, "charts of the distribution")
	for i, st := range runs.Strategies {
		var total, most, yMax int
		b.eval(t, fmt.Sprintf(`window.rlcheckReport.distCharts[%d].data[1].reduce((a, b) => a + b, 0)`, i), &total)
		b.eval(t, fmt.Sprintf(`Math.max(...window.rlcheckReport.distCharts[%d].data[1])`, i), &most)
		b.eval(t, fmt.Sprintf(`Math.floor(window.rlcheckReport.distCharts[%d].scales.y.max)`, i), &yMax)
		assert.Equal(t, seeds, total, "%s: runs", st.Name)
		assert.GreaterOrEqual(t, yMax, most, "%s: the tallest bar fits", st.Name)
		assert.LessOrEqual(t, yMax, int(float64(most)*1.2)+1, "%s: its own scale", st.Name)
	}
	b.noErrors(t)
}

// TestYAxisFitsItsLabels: a chart's y axis is as wide as its longest tick
// label, so that a tokens chart's title ("tokens in window") does not
// overlap "100,000"; it overlapped at the fixed width before.
func TestYAxisFitsItsLabels(t *testing.T) {
	b := newBrowser(t)
	path := filepath.Join(t.TempDir(), "llm.html")
	rules, err := rule.ParseList("5/1m, 100000 tokens/1m")
	require.NoError(t, err)
	f, err := os.Open("../testdata/costs/llm.csv")
	require.NoError(t, err)
	defer f.Close()
	res, err := logcheck.Run([]logcheck.Input{{Name: "llm.csv", R: f}}, logcheck.Config{
		Rules: rules, KeepTimes: true, List: htmlreport.CheckList(0, path),
		Read: sendlog.Options{KeyCol: "key", Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens", Field: "tokens"}}},
	})
	require.NoError(t, err)
	require.NoError(t, htmlreport.Check(path, res, 0, 20))
	b.open(t, path)
	var raw string
	b.eval(t, `(() => {
		const out = [];
		for (const p of window.rlcheckReport.panels) for (const u of p.charts) {
			const a = u.axes[1], vals = a._values || [];
			const longest = vals.reduce((x, v) => (String(v).length > x.length ? String(v) : x), "");
			u.ctx.font = a.font[0];
			out.push({size: a._size, need: a.ticks.size + a.gap + u.ctx.measureText(longest).width / devicePixelRatio, longest});
		}
		return JSON.stringify(out);
	})()`, &raw)
	var axes []struct {
		Size, Need float64
		Longest    string
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &axes), raw)
	require.NotEmpty(t, axes)
	wide := false
	for _, a := range axes {
		assert.GreaterOrEqual(t, a.Size, a.Need, "y axis of %q labels", a.Longest)
		wide = wide || len(a.Longest) >= 6
	}
	assert.True(t, wide, "some chart's labels are as long as a tokens count")
}
