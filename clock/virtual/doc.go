// Package virtual is a clock.Runtime on virtual time: a deterministic
// discrete-event scheduler that runs strategy code written for the real
// clock, unchanged, one caller at a time.
//
// A Sched keeps integer-nanosecond instants. Every caller (Go, Arrivals)
// is a coroutine; exactly one runs at a time, and events are ordered by
// (instant, sequence), so ties go in insertion order. Sleep, the FIFO mutex
// and the semaphore park the caller on the scheduler, never on the wall
// clock. The loop models an asyncio-like event loop: when nothing is ready
// and it must wait for a timer, it wakes late by a drawn lateness, and each
// caller step costs a drawn operation time (Config). One random source
// (Config.Rand) makes every choice, so the same inputs give the same run.
//
// WithDeadline gives a caller a virtual deadline; past it a parked caller
// gets ErrDeadline (context.DeadlineExceeded).
//
// Starting coroutines is most of a small run's cost, so a Pool keeps the
// coroutines and slices of finished runs for the next: a zero Pool for the
// runs of one goroutine, TakePool and GivePool for runs on any goroutine.
//
// The simulate package builds on it: it draws arrivals from a scenario,
// runs each strategy's callers here and hands the sends to the checker.
package virtual
