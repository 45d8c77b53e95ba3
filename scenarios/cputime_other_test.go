//go:build !unix

package scenarios

// cpuSeconds is unavailable here; benchmarks then report 0 CPU.
func cpuSeconds() float64 { return 0 }
