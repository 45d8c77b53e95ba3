package checker

import (
	"runtime"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// BenchmarkCheckerBytes reports the heap a checker holds after one send,
// for one rule and for six of every kind (docs/benchmarks.md, memory per
// key): what a key past the sends it may hold without one costs.
func BenchmarkCheckerBytes(b *testing.B) {
	six, err := rule.ParseList("10/1s, 500/1m, 10000/24h, 90000 tokens/1m, 100/1h fixed, 5/1s burst 10")
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		rules []rule.Rule
	}{{"1-rule", []rule.Rule{{Limit: 5, Window: time.Second}}}, {"6-rules", six}} {
		b.Run(tc.name, func(b *testing.B) {
			const n = 10_000
			var before, after runtime.MemStats
			for b.Loop() {
				runtime.GC()
				runtime.ReadMemStats(&before)
				cs := make([]*Checker, n)
				for i := range cs {
					cs[i] = New(Config{Rules: tc.rules})
					if err := cs[i].ObserveCost(int64(i), 1, make([]int64, len(rule.Units(tc.rules)))); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(cs)
			}
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/checker")
		})
	}
}
