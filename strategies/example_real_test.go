package strategies_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// The combined limiter on the wall clock: three calls per 200 ms, so seven
// callers go in three waves. Real timers wake a little late, never early,
// so each wave starts no sooner than its window allows.
func ExampleNewRealCombined() {
	lim := strategies.NewRealCombined(rule.Rule{Limit: 3, Window: 200 * time.Millisecond}, rule.Rule{Limit: 10, Window: time.Minute})
	start := time.Now()
	for i := range 7 {
		if err := lim.Acquire(context.Background()); err != nil {
			fmt.Println(err)
			return
		}
		wave := time.Duration(i/3) * 200 * time.Millisecond
		fmt.Printf("call %d: wave %d, not before %v: %v\n", i, i/3, wave, time.Since(start) >= wave)
	}
	// Output:
	// call 0: wave 0, not before 0s: true
	// call 1: wave 0, not before 0s: true
	// call 2: wave 0, not before 0s: true
	// call 3: wave 1, not before 200ms: true
	// call 4: wave 1, not before 200ms: true
	// call 5: wave 1, not before 200ms: true
	// call 6: wave 2, not before 400ms: true
}

// The gate holds one of its slots for the whole call, so no more than two
// calls are ever in flight; a context that has already ended runs nothing.
func ExampleGated_Do() {
	gate := strategies.NewRealGated(2, rule.Rule{Limit: 100, Window: time.Second})
	var inFlight, most atomic.Int64
	done := make(chan error)
	for range 6 {
		go func() {
			done <- gate.Do(context.Background(), func() error {
				n := inFlight.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(20 * time.Millisecond)
				inFlight.Add(-1)
				return nil
			})
		}()
	}
	for range 6 {
		if err := <-done; err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println("at most 2 in flight:", most.Load() <= 2)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := gate.Do(ctx, func() error { panic("not reached") })
	fmt.Println(err)
	// Output:
	// at most 2 in flight: true
	// context canceled
}
