package checker

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// BenchmarkObserveBatch measures the checker alone: sends a second apart
// on average (exponential gaps, 150 ms mean) against 10/1s, 500/1m and
// 600000/24h, in runs of 10,000 like the audit path hands out.
func BenchmarkObserveBatch(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1 << 20
	ts := make([]int64, n)
	refs := make([]int64, n)
	var t int64
	for i := range ts {
		t += int64(rng.ExpFloat64() * 150e6)
		ts[i], refs[i] = t, int64(i)
	}
	rules := []rule.Rule{{Limit: 10, Window: time.Second}, {Limit: 500, Window: time.Minute}, {Limit: 600000, Window: 24 * time.Hour}}
	b.ReportAllocs()
	c := New(Config{Rules: rules})
	off := int64(0)
	i := 0
	for b.Loop() {
		j := i % (n / 10000)
		lo, hi := j*10000, (j+1)*10000
		if j == 0 && i > 0 {
			off += t // keep time moving forward across laps
		}
		run := make([]int64, 0, 10000)
		for _, x := range ts[lo:hi] {
			run = append(run, x+off)
		}
		if err := c.ObserveBatch(run, refs[lo:hi]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i*10000), "ns/send")
}

// BenchmarkPerRule measures one rule at a time over 1,048,576 sends with
// exponential gaps of 150 ms mean, in batches of 10,000.
func BenchmarkPerRule(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1 << 20
	ts := make([]int64, n)
	refs := make([]int64, n)
	var t int64
	for i := range ts {
		t += int64(rng.ExpFloat64() * 150e6)
		ts[i], refs[i] = t, int64(i)
	}
	for _, r := range []rule.Rule{{Limit: 10, Window: time.Second}, {Limit: 500, Window: time.Minute}, {Limit: 600000, Window: 24 * time.Hour}} {
		b.Run(r.String(), func(b *testing.B) {
			for b.Loop() {
				c := New(Config{Rules: []rule.Rule{r}})
				for i := 0; i < n; i += 10000 {
					c.ObserveBatch(ts[i:min(n, i+10000)], refs[i:min(n, i+10000)])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/send")
		})
	}
}
