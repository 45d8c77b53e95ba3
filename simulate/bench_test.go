package simulate

import (
	"context"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

var contract = []rule.Rule{{Limit: 10, Window: time.Second}, {Limit: 500, Window: time.Minute}, {Limit: 10000, Window: 24 * time.Hour}}

// BenchmarkCombinedAdmitted drives combined over 10/s, 500/min and
// 10,000/day on the virtual runtime with one caller per call, for exactly
// one day's quota; admitted/s counts calls let through per second of wall
// time. Arrivals every 100 ms outpace 500/min, so callers queue on the
// lock and wait; every 150 ms they do not.
func BenchmarkCombinedAdmitted(b *testing.B) {
	for _, every := range []time.Duration{100 * time.Millisecond, 150 * time.Millisecond} {
		b.Run("every="+every.String(), func(b *testing.B) {
			const calls = 10_000
			s := &Scenario{
				Name: "bench", Rules: contract, Strategies: []string{"combined"},
				Callers: calls, Workers: 1, Arrivals: Arrivals{Kind: Interval, Every: every},
			}
			st, _ := Lookup("combined")
			var admitted int
			cpu := cpuSeconds()
			for b.Loop() {
				r, err := RunStrategy(s, st, 1, Options{})
				if err != nil {
					b.Fatal(err)
				}
				admitted += len(r.Sends)
			}
			b.ReportMetric(float64(admitted)/b.Elapsed().Seconds(), "admitted/s")
			b.ReportMetric(float64(admitted)/(cpuSeconds()-cpu), "admitted/cpu-s")
		})
	}
}

// BenchmarkCombinedLoop is one caller acquiring back to back: the cost of
// the decision logic plus one park per wait, with no caller start-up.
func BenchmarkCombinedLoop(b *testing.B) {
	const calls = 1_000_000
	var admitted int
	cpu := cpuSeconds()
	for b.Loop() {
		sch := NewSched(SchedConfig{})
		lim := strategies.NewCombined(sch, contract...)
		sch.Go(0, func() {
			for range calls {
				if lim.Acquire(context.Background()) == nil {
					admitted++
				}
			}
		})
		sch.Run()
	}
	b.ReportMetric(float64(admitted)/b.Elapsed().Seconds(), "admitted/s")
	b.ReportMetric(float64(admitted)/(cpuSeconds()-cpu), "admitted/cpu-s")
}
