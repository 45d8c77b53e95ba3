package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// verdict is check's JSON report without the parts that describe the input.
func verdict(t *testing.T, res *report.Result) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, report.Write(&buf, []*report.Result{res}, report.Options{Format: "json"}))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	delete(doc, "files")
	delete(doc, "out_of_order") // the CSV is shuffled; the table has no order
	return doc
}

// The generated query, run by DuckDB, reports what rlcheck check reports:
// counts, maxima and first violations, on logs with ties and gaps of
// exactly one window, under both boundaries. Sends at one instant are
// interchangeable in the counts, so only the places are left out where
// DuckDB's order of ties may differ (no tiebreak column).
func TestGeneratedMatchesCheck(t *testing.T) {
	ctx := context.Background()
	rules := []rule.Rule{
		{Limit: 1, Window: time.Second},
		{Limit: 3, Window: time.Second},
		{Limit: 5, Window: 3 * time.Second},
		{Limit: 12, Window: 10 * time.Second},
		{Limit: 5000, Window: time.Hour},
	}
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 7))
		times := randomTimes(rng, 1500, time.Second)
		path := writeCSV(t, times, rng)
		b, err := Open(ctx, 1)
		require.NoError(t, err)
		_, err = b.Load(ctx, path)
		require.NoError(t, err)
		boundary := rule.HalfOpen
		if seed%2 == 1 {
			boundary = rule.Closed
		}
		got, err := b.Generated(ctx, rules, boundary, false, true)
		require.NoError(t, err)
		only, err := b.Generated(ctx, rules, boundary, true, false)
		require.NoError(t, err)
		noMax, err := b.Generated(ctx, rules, boundary, false, false)
		require.NoError(t, err)
		b.Close()
		f, err := os.Open(path)
		require.NoError(t, err)
		want, err := logcheck.Run([]logcheck.Input{{Name: path, R: f}}, logcheck.Config{Rules: rules, Boundary: boundary, Sort: true,
			Read: sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts_ns", Unit: sendlog.UnitNanos}})
		f.Close()
		require.NoError(t, err)
		g, w := verdict(t, got), verdict(t, want)
		for _, doc := range []map[string]any{g, w} {
			for _, r := range doc["rules"].([]any) {
				r := r.(map[string]any)
				delete(r["max_window_start"].(map[string]any), "line")
				if fv, ok := r["first_violation"].(map[string]any); ok {
					delete(fv, "line")
					delete(fv["window_start"].(map[string]any), "line")
				}
			}
		}
		assert.Equal(t, w, g, "seed %d, %s", seed, boundary)
		for i, r := range got.Groups[0].Report.Rules {
			n := noMax.Groups[0].Report.Rules[i]
			assert.Equal(t, r.Violations, n.Violations, "seed %d, rule %s, without --max-window", seed, r.Rule)
			assert.Equal(t, r.First, n.First, "seed %d, rule %s, without --max-window", seed, r.Rule)
			assert.Zero(t, n.MaxInWindow, "seed %d, rule %s, without --max-window", seed, r.Rule)
		}
		for i, r := range want.Groups[0].Report.Rules {
			assert.Equal(t, r.Violations, only.Groups[0].Report.Rules[i].Violations, "seed %d, rule %s, counts only", seed, r.Rule)
		}
		if boundary == rule.HalfOpen {
			for _, r := range got.Groups[0].Report.Rules {
				assert.Equal(t, bruteViolations(times, r.Rule), r.Violations, "seed %d, rule %s", seed, r.Rule)
			}
		}
	}
}
