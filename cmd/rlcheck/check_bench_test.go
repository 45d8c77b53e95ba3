package main

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/audit"
	"github.com/rlcheck/rlcheck/rule"
)

// benchCSV builds n lines of ts_ns,key like scripts/genlog does.
func benchCSV(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	b.WriteString("ts_ns,key\n")
	t := int64(1767225600_000_000_000)
	for range n {
		t += int64(rng.ExpFloat64() * 150e6)
		b.WriteString(strconv.FormatInt(t, 10))
		b.WriteString(",k")
		b.WriteString(strconv.Itoa(rng.IntN(100)))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// BenchmarkCheckCSV measures the whole check of an in-memory CSV log
// (parse and check against three rules); MB/s is of input bytes.
func BenchmarkCheckCSV(b *testing.B) {
	const lines = 1_000_000
	data := benchCSV(lines)
	rules, _ := rule.ParseList("10/1s,500/1m,600000/24h")
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		res, err := audit.Run([]audit.Input{{Name: "bench.csv", R: bytes.NewReader(data)}}, audit.Config{Rules: rules, MaxDisorder: 5 * time.Second})
		if err != nil || res.Sends != lines {
			b.Fatal(err, res)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
