package simulate

import (
	"iter"
	"testing"
)

// The two ways to hand control between a scheduler and one simulated
// caller, measured as round trips (resume, then park again); see
// docs/benchmarks.md.

func BenchmarkSwitchIterPull(b *testing.B) {
	next, stop := iter.Pull(func(yield func(struct{}) bool) {
		for yield(struct{}{}) {
		}
	})
	defer stop()
	for b.Loop() {
		next()
	}
}

func BenchmarkSwitchGoroutineBaton(b *testing.B) {
	resume, parked := make(chan struct{}), make(chan struct{})
	go func() {
		for range resume {
			parked <- struct{}{}
		}
		close(parked)
	}()
	for b.Loop() {
		resume <- struct{}{}
		<-parked
	}
	close(resume)
	<-parked
}

// BenchmarkSpawnIterPull is the cost of starting and finishing one caller
// coroutine, the price of a caller that never parks.
func BenchmarkSpawnIterPull(b *testing.B) {
	for b.Loop() {
		next, _ := iter.Pull(func(yield func(struct{}) bool) {})
		next()
	}
}
