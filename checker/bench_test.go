package checker

import (
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/internal/genlog"
	"github.com/rlcheck/rlcheck/rule"
)

// n is the number of sends in the checker benchmarks.
const n = 1 << 20

var benchRules = []rule.Rule{{Limit: 10, Window: time.Second}, {Limit: 500, Window: time.Minute}, {Limit: 600000, Window: 24 * time.Hour}}

// benchSends are the send times of the benchmark log (genlog.Default) and
// their indexes as refs.
func benchSends() (ts, refs []int64) {
	ts = genlog.Times(genlog.Default(n))
	refs = make([]int64, n)
	for i := range refs {
		refs[i] = int64(i)
	}
	return ts, refs
}

// BenchmarkObserveBatch measures the checker alone: sends a second apart
// on average (exponential gaps, 150 ms mean) against 10/1s, 500/1m and
// 600000/24h, in runs of 10,000 like the audit path hands out. Each lap of
// the log starts where the previous one ended, so time moves forward
// however long the benchmark runs.
func BenchmarkObserveBatch(b *testing.B) {
	ts, refs := benchSends()
	span := ts[n-1] - ts[0]
	b.ReportAllocs()
	c := New(Config{Rules: benchRules})
	run := make([]int64, 10000)
	off := int64(0)
	i := 0
	for b.Loop() {
		j := i % (n / 10000)
		lo, hi := j*10000, (j+1)*10000
		if j == 0 && i > 0 {
			off += span
		}
		for k, x := range ts[lo:hi] {
			run[k] = x + off
		}
		if err := c.ObserveBatch(run, refs[lo:hi]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i*10000), "ns/send")
}

// BenchmarkObserve measures the one-send-at-a-time path (one checker per
// key takes its sends this way) on the same log and rules.
func BenchmarkObserve(b *testing.B) {
	ts, _ := benchSends()
	span := ts[n-1] - ts[0]
	b.ReportAllocs()
	c := New(Config{Rules: benchRules})
	off := int64(0)
	i := 0
	for b.Loop() {
		j := i % n
		if j == 0 && i > 0 {
			off += span
		}
		if err := c.Observe(ts[j]+off, int64(j)); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/send")
}

// BenchmarkPerRule measures one rule at a time over 1,048,576 sends with
// exponential gaps of 150 ms mean, in batches of 10,000.
func BenchmarkPerRule(b *testing.B) {
	ts, refs := benchSends()
	for _, r := range benchRules {
		b.Run(r.String(), func(b *testing.B) {
			for b.Loop() {
				c := New(Config{Rules: []rule.Rule{r}})
				for i := 0; i < n; i += 10000 {
					if err := c.ObserveBatch(ts[i:min(n, i+10000)], refs[i:min(n, i+10000)]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/send")
		})
	}
}
