package scenarios

import (
	"testing"

	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// BenchmarkAPIContract runs 1,000,000 callers of api-contract.yaml per
// strategy; calls/s is callers simulated per second of wall time.
func BenchmarkAPIContract(b *testing.B) {
	s, err := Shipped("api-contract")
	if err != nil {
		b.Fatal(err)
	}
	s.Callers = 1_000_000
	if testing.Short() {
		s.Callers = 100_000
	}
	for _, name := range s.Strategies {
		st, _ := catalog.Lookup(name)
		b.Run(name, func(b *testing.B) {
			cpu := cpuSeconds()
			var steps int64
			for b.Loop() {
				r, err := simulate.RunStrategy(&s.Scenario, st, s.Seed, simulate.Options{})
				if err != nil {
					b.Fatal(err)
				}
				steps += r.Sched.Steps
			}
			b.ReportMetric(float64(s.Callers)*float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
			// Caller steps (resumptions) per call: the work the strategy
			// makes the scheduler do, whatever the machine.
			b.ReportMetric(float64(steps)/float64(s.Callers)/float64(b.N), "steps/call")
			// The target is per step (docs/benchmarks.md): wall and CPU time
			// over the caller steps.
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
			b.ReportMetric((cpuSeconds()-cpu)*1e9/float64(steps), "cpu-ns/step")
		})
	}
}
