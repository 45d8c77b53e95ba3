//go:build unix

package scenarios

import "syscall"

// cpuSeconds is the CPU time this process has used (user and system), so
// benchmarks can report cost apart from how busy the machine is.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
