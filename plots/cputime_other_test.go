//go:build !unix

package plots

import "time"

// cpuTime is not measured here; benchmarks then report 0 cpu-s/op.
func cpuTime() time.Duration { return 0 }
