// Package clock is the small runtime every strategy runs on: the time, a way
// to sleep, and a FIFO mutex and semaphore that park on that runtime.
//
// Strategies are written once against Runtime. Real (this package) drives
// them with the wall clock and real goroutines; the clock/virtual package drives
// the very same code on a deterministic virtual clock. Strategy code must
// never block on a sync.Mutex or a bare channel: only on what Runtime gives.
package clock
