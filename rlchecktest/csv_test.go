package rlchecktest_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rlchecktest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// TestWriteCSVIsReadByCheck: the recorded sends, with a cost column per
// unit, are a log that check reads by its defaults (ts_ns by its name, in
// ns by its suffix) and judges: three calls of 40 tokens at once break
// 2/1s once and 100 tokens/1s once.
func TestWriteCSVIsReadByCheck(t *testing.T) {
	var rec rlchecktest.Recorder
	for range 3 {
		require.NoError(t, rec.RecordCost([]int64{40}, func() error { return nil }))
	}
	var log bytes.Buffer
	require.NoError(t, rec.WriteCSV(&log, "tokens"))
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, "ts_ns,tokens", lines[0])
	assert.Regexp(t, `^1[0-9]{18},40$`, lines[1], "epoch nanoseconds, then the cost")

	rules, err := rule.ParseList("2/1s, 100 tokens/1s")
	require.NoError(t, err)
	res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: &log}}, logcheck.Config{Rules: rules,
		Read: sendlog.Options{Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens"}}}})
	require.NoError(t, err)
	got := map[string]int64{}
	for _, r := range res.Groups[0].Report.Rules {
		got[r.Rule.String()] = r.Violations
	}
	assert.Equal(t, map[string]int64{"2/1s": 1, "100 tokens/1s": 1}, got)
}

// TestWriteCSVWithoutCosts: without units the log is the send times alone,
// whatever was recorded; with units, a send recorded without its costs is
// an error that says how to record it.
func TestWriteCSVWithoutCosts(t *testing.T) {
	var rec rlchecktest.Recorder
	require.NoError(t, rec.Record(func() error { return nil }))
	require.NoError(t, rec.RecordCost([]int64{5}, func() error { return nil }))
	var log bytes.Buffer
	require.NoError(t, rec.WriteCSV(&log))
	assert.Regexp(t, `^ts_ns\n[0-9]+\n[0-9]+\n$`, log.String())
	err := rec.WriteCSV(&bytes.Buffer{}, "tokens")
	assert.ErrorContains(t, err, "rlchecktest: send 1 (at ")
	assert.ErrorContains(t, err, "has 0 costs for 1 units [tokens]: record it with RecordCost")
	assert.ErrorContains(t, rec.WriteCSV(&bytes.Buffer{}, "a,b"), `unit "a,b" cannot name a CSV column`)
}
