// Package simulate runs rate-limiting strategies on a deterministic virtual
// clock over a described workload, and hands every send to the checker.
//
// The virtual runtime (Sched) is a single-threaded discrete-event scheduler
// on integer nanoseconds: every simulated caller is a coroutine, exactly one
// runs at a time, and events are ordered by (time, sequence) so ties go in
// insertion order. It models an asyncio-like event loop: when the loop has
// nothing ready and must wait for a timer, it wakes late by a seeded random
// lateness, then runs every timer already due; each caller step costs a
// seeded operation time. One seed fixes every random choice, so the same
// scenario and seed give the same sends, byte for byte.
//
// The simulator never counts violations itself: Run passes the sends to
// checker.Check.
package simulate
