// Package simulate runs rate-limiting strategies over a described workload
// on the deterministic virtual clock of package clock/virtual, and hands
// every send to the checker; it also searches for each strategy's margin.
//
// Every caller of a run is a coroutine of a virtual.Sched, one seed fixes
// every random choice (arrivals, lateness, operation costs, call
// durations), so the same scenario and seed give the same sends, byte for
// byte.
//
// The simulator never counts violations itself: Run passes the sends to
// checker.Check.
package simulate
