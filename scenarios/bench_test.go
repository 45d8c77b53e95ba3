package scenarios

import (
	"testing"

	"github.com/rlcheck/rlcheck/simulate"
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
		st, _ := simulate.Lookup(name)
		b.Run(name, func(b *testing.B) {
			cpu := cpuSeconds()
			for b.Loop() {
				if _, err := simulate.RunStrategy(&s.Scenario, st, s.Seed, simulate.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(s.Callers)*float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
		})
	}
}
