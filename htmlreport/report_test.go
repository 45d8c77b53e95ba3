package htmlreport_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/htmlreport"
	"github.com/rlcheck/rlcheck/internal/genlog"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/realrun"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/sendlog"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/workload"
)

// checkLog checks a generated log of three keys, keeping what the HTML
// report needs, as rlcheck check --html does.
func checkLog(t *testing.T, lines int) *report.Result {
	t.Helper()
	var csv bytes.Buffer
	require.NoError(t, genlog.WriteCSV(&csv, genlog.Config{Lines: lines, Keys: 3, MeanGap: 30 * time.Millisecond, Seed: 1, Start: 1767225600_000_000_000}))
	rules, err := rule.ParseList("10/1s,500/1m")
	require.NoError(t, err)
	res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: &csv}}, logcheck.Config{
		Rules: rules, Read: sendlog.Options{KeyCol: "key"}, KeepTimes: true,
		List: htmlreport.CheckList(0, "r.html"), MaxDisorder: time.Second, MaxBuffered: logcheck.DefaultMaxBuffered,
	})
	require.NoError(t, err)
	return res
}

func TestCheckInBrowser(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	res := checkLog(t, 6000)
	require.Len(t, res.Groups, 3)
	type want struct {
		violations int64
		firstCount int64
	}
	wants := make([][]want, len(res.Groups))
	for g := range res.Groups {
		for _, rr := range res.Groups[g].Report.Rules {
			w := want{violations: rr.Violations}
			if len(rr.Listed) > 0 {
				w.firstCount = int64(len(rr.Listed[0].Window))
			}
			wants[g] = append(wants[g], w)
		}
	}
	path := filepath.Join(dir, "check.html")
	require.NoError(t, htmlreport.Check(path, res, 0, 20))
	for g := range res.Groups {
		for _, rr := range res.Groups[g].Report.Rules {
			assert.Empty(t, rr.Listed, "trimmed to the --list asked for")
		}
	}
	b.open(t, path)
	for g := range wants {
		for r, w := range wants[g] {
			assert.EqualValues(t, w.violations, b.violationsShown(t, g, r), "key %d rule %d", g, r)
		}
	}
	require.Positive(t, wants[0][0].violations)
	mode, sends := b.zoomFirst(t, 0, 0)
	assert.Equal(t, "detail", mode, "zoomed into the first violation, the chart shows every send")
	assert.EqualValues(t, wants[0][0].firstCount, sends, "the sends of its window are listed")
	assert.EqualValues(t, 11, sends, "10/1s: ten sends and the one too many")
	b.screenshot(t, dir, "check.png", filepath.Join("..", "docs", "img", "html-check.png"))
	b.noErrors(t)
}

// simulateReport runs a shipped scenario over seeds, writes its report
// into dir and opens it in b, checking the violations shown per strategy
// and rule at the provider and among the records.
func simulateReport(t *testing.T, b *browser, dir, name string, seeds int) *simulate.RunsResult {
	t.Helper()
	scn, err := scenarios.Shipped(name)
	require.NoError(t, err)
	runs, err := simulate.RunSeeds(&scn.Scenario, seeds, simulate.Options{})
	require.NoError(t, err)
	path := filepath.Join(dir, name+".html")
	require.NoError(t, htmlreport.Simulate(path, runs))
	b.open(t, path)
	for p, st := range runs.Strategies {
		for r, rr := range st.First.Rules {
			assert.EqualValues(t, rr.Violations, b.violationsShown(t, p, r), "%s rule %s", st.Name, rr.Rule)
			if runs.SendPath {
				assert.EqualValues(t, rr.RecordViolations, b.recordViolationsShown(t, p, r), "%s rule %s among records", st.Name, rr.Rule)
			}
		}
	}
	return runs
}

func TestSimulateFleetInBrowser(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	runs := simulateReport(t, b, dir, "fleet", 5)
	var names []string
	for _, st := range runs.Strategies {
		names = append(names, st.Name)
	}
	assert.Equal(t, names, panelNames(t, b), "every strategy's timeline")
	require.Equal(t, "local-per-worker", runs.Strategies[0].Name)
	first := runs.Strategies[0].First
	rep, err := checker.Check(first.Sends, checker.Config{Rules: runs.Rules, List: 1})
	require.NoError(t, err)
	require.NotEmpty(t, rep.Rules[0].Listed, "local-per-worker breaks 10/s")
	mode, sends := b.zoomFirst(t, 0, 0)
	assert.Equal(t, "detail", mode)
	assert.Len(t, rep.Rules[0].Listed[0].Window, sends, "the sends of the first violation's window")
	assert.Equal(t, 11, sends, "10/s broken by an eleventh send")
	assert.Equal(t, 4, b.layers(t, 0, 0), "no send path: no record layer")
	b.screenshot(t, dir, "fleet.png", "")
	b.noErrors(t)
}

// TestSimulateSendPathInBrowser: with a send path, the limiter's own records
// are a layer of their own, with their own violation counts.
func TestSimulateSendPathInBrowser(t *testing.T) {
	b := newBrowser(t)
	runs := simulateReport(t, b, t.TempDir(), "provider-edge", 3)
	require.True(t, runs.SendPath)
	for p, st := range runs.Strategies {
		for r := range st.First.Rules {
			assert.Equal(t, 6, b.layers(t, p, r), "%s: usage and violations among the records too", st.Name)
		}
	}
	b.noErrors(t)
}

// TestRunInBrowser: a real-clock run's report, 20 times faster than real
// time.
func TestRunInBrowser(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	scn, err := scenarios.Shipped("seed")
	require.NoError(t, err)
	sc, err := realrun.Scale(&scn.Scenario, 20)
	require.NoError(t, err)
	pred, err := realrun.Predict(predictOnSimulator, sc, 5, nil)
	require.NoError(t, err)
	res, err := realrun.Run(context.Background(), sc, realrun.Options{})
	require.NoError(t, err)
	path := filepath.Join(dir, "run.html")
	require.NoError(t, htmlreport.Run(path, &realrun.Report{Scenario: sc, Speed: 20, Prediction: pred, Runs: []*realrun.Result{res}}))
	b.open(t, path)
	for p, st := range res.Strategies {
		for r, rr := range st.Rules {
			assert.EqualValues(t, rr.Violations, b.violationsShown(t, p, r), "%s rule %s", st.Name, rr.Rule)
		}
	}
	b.noErrors(t)
}

// TestLargeLogInBrowser checks the report of a long log, given by -log
// (the benchmark log: go run ./scripts/genlog -lines 10000000), with the
// benchmark's rules: under 5 MB, and the right counts in the browser.
// Without it it skips.
func TestLargeLogInBrowser(t *testing.T) {
	res := checkLargeLog(t, true)
	path := filepath.Join(t.TempDir(), "large.html")
	start := time.Now()
	require.NoError(t, htmlreport.Check(path, res, 0, 20))
	t.Logf("report written in %v", time.Since(start))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Less(t, st.Size(), int64(5<<20), "bytes")
	t.Logf("%d bytes", st.Size())
	b := newBrowser(t)
	b.open(t, path)
	for r, rr := range res.Groups[0].Report.Rules {
		assert.EqualValues(t, rr.Violations, b.violationsShown(t, 0, r), "rule %s", rr.Rule)
		t.Logf("rule %s: %d violations", rr.Rule, rr.Violations)
	}
	mode, sends := b.zoomFirst(t, 0, 0)
	assert.Equal(t, "detail", mode)
	assert.Equal(t, 11, sends)
	b.noErrors(t)
}

// TestCheckCostsInBrowser: a cost rule's panel draws the tokens in its
// window: the violations shown are the checker's, the chart's axis and the
// table say tokens, and the table gives each violation's tokens.
func TestCheckCostsInBrowser(t *testing.T) {
	b := newBrowser(t)
	var csv bytes.Buffer
	require.NoError(t, genlog.WriteCSV(&csv, genlog.Config{Lines: 3000, Keys: 1, MeanGap: 30 * time.Millisecond, Seed: 2, Start: 1767225600_000_000_000, MaxTokens: 400}))
	rules, err := rule.ParseList("10/1s,9000 tokens/1m")
	require.NoError(t, err)
	res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: &csv}}, logcheck.Config{
		Rules: rules, Read: sendlog.Options{Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens"}}}, KeepTimes: true,
		List: htmlreport.CheckList(0, "r.html"),
	})
	require.NoError(t, err)
	tokens := res.Groups[0].Report.Rules[1]
	require.Positive(t, tokens.Violations)
	firstUnits := tokens.Listed[0].Units
	path := filepath.Join(t.TempDir(), "costs.html")
	require.NoError(t, htmlreport.Check(path, res, 0, 20))
	b.open(t, path)
	assert.EqualValues(t, tokens.Violations, b.violationsShown(t, 0, 1))
	var head, cell string
	b.eval(t, `document.querySelector("#viol-0-1 thead th:nth-child(4)").textContent`, &head)
	b.eval(t, `document.querySelector("#viol-0-1 tbody tr td:nth-child(4)").textContent`, &cell)
	assert.Equal(t, "tokens in window", head)
	assert.Equal(t, strconv.FormatInt(firstUnits, 10), strings.ReplaceAll(cell, ",", ""))
	b.noErrors(t)
}

// TestCheckEveryKindInBrowser: a report of a fixed rule, a bucket and a
// cost rule per key draws every rule's chart and table row for every key,
// the keys in the report's order (worst first), and shows each rule's
// violations as the check counted them.
func TestCheckEveryKindInBrowser(t *testing.T) {
	b := newBrowser(t)
	var csv bytes.Buffer
	require.NoError(t, genlog.WriteCSV(&csv, genlog.Config{Lines: 4000, Keys: 3, MeanGap: 30 * time.Millisecond, Seed: 3, Start: 1767225600_000_000_000, MaxTokens: 400}))
	rules, err := rule.ParseList("8/1s fixed,5/1s burst 10,9000 tokens/1m")
	require.NoError(t, err)
	res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: &csv}}, logcheck.Config{
		Rules: rules, Read: sendlog.Options{KeyCol: "key", Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens"}}}, KeepTimes: true,
		List: htmlreport.CheckList(0, "r.html"), MaxDisorder: time.Second, MaxBuffered: logcheck.DefaultMaxBuffered,
	})
	require.NoError(t, err)
	require.Len(t, res.Groups, 3)
	var keys []string
	for _, g := range res.Groups {
		keys = append(keys, g.Key)
	}
	path := filepath.Join(t.TempDir(), "kinds.html")
	require.NoError(t, htmlreport.Check(path, res, 0, 20))
	b.open(t, path)
	names := panelNames(t, b)
	require.Len(t, names, len(keys))
	for p, key := range keys {
		assert.Contains(t, names[p], key, "panel %d is key %s: the report's order", p, key)
		for r, rr := range res.Groups[p].Report.Rules {
			assert.EqualValues(t, rr.Violations, b.violationsShown(t, p, r), "key %s rule %s", key, rr.Rule)
			assert.Positive(t, b.layers(t, p, r), "key %s rule %s is charted", key, rr.Rule)
			var left int
			b.eval(t, fmt.Sprintf(`(() => { const u = window.rlcheckReport.panels[%d].charts[%d]; return u.data[0].length - 1 - u.series[1].idxs[1]; })()`, p, r), &left)
			assert.Zero(t, left, "key %s rule %s: the line is drawn to the last send", key, rr.Rule)
		}
	}
	for r := range rules {
		assert.Positive(t, res.Groups[0].Report.Rules[r].Violations, "the worst key breaks %s", rules[r])
	}
	b.noErrors(t)
}

// TestLoneChartDrawnToTheEnd: a panel of one chart, whose whole log fits
// the exact detail, draws its line and marks to the last send: the detail
// holds more points than the overview, and a chart that took it inside
// its own scale change drew only the overview's count of them.
func TestLoneChartDrawnToTheEnd(t *testing.T) {
	b := newBrowser(t)
	var csv bytes.Buffer
	require.NoError(t, genlog.WriteCSV(&csv, genlog.Config{Lines: 4000, Keys: 1, MeanGap: 30 * time.Millisecond, Seed: 4, Start: 1767225600_000_000_000}))
	for _, rules := range []string{"5/1s", "5/1s burst 10"} {
		rs, err := rule.ParseList(rules)
		require.NoError(t, err)
		res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: bytes.NewReader(csv.Bytes())}}, logcheck.Config{
			Rules: rs, KeepTimes: true, List: htmlreport.CheckList(0, "r.html"),
		})
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "lone.html")
		require.NoError(t, htmlreport.Check(path, res, 0, 20))
		b.open(t, path)
		var left int
		b.eval(t, `(() => { const u = window.rlcheckReport.panels[0].charts[0]; return u.data[0].length - 1 - Math.min(...u.series.slice(1).map((s) => s.idxs[1])); })()`, &left)
		assert.Zero(t, left, "%s: every layer is drawn to the last send", rules)
		b.noErrors(t)
	}
}

// predictOnSimulator is the prediction the command sets beside a real
// run (the command's wiring is internal to it).
func predictOnSimulator(s *workload.Scenario, seeds int, o realrun.PredictOptions) ([]realrun.SeedCounts, error) {
	rr, err := simulate.RunSeeds(s, seeds, simulate.Options{Strategies: o.Strategies})
	if err != nil {
		return nil, err
	}
	out := make([]realrun.SeedCounts, len(rr.Strategies))
	for i, st := range rr.Strategies {
		out[i].Name = st.Name
		for _, r := range st.Rules {
			out[i].PerRule = append(out[i].PerRule, r.PerRun)
		}
	}
	return out, nil
}
