package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/genlog"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rule"
)

// BenchmarkCheckCSV measures the whole check of an in-memory CSV log
// (parse and check against three rules); MB/s is of input bytes.
func BenchmarkCheckCSV(b *testing.B) {
	const lines = 1_000_000
	var buf bytes.Buffer
	genlog.WriteCSV(&buf, genlog.Default(lines))
	data := buf.Bytes()
	rules, err := rule.ParseList("10/1s,500/1m,600000/24h")
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		res, err := logcheck.Run([]logcheck.Input{{Name: "bench.csv", R: bytes.NewReader(data)}}, logcheck.Config{Rules: rules, MaxDisorder: 5 * time.Second})
		require.NoError(b, err)
		require.Equal(b, int64(lines), res.Sends, "sends read")
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
