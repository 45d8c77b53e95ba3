// Package audit measures what the rate limiters Go services and fleets
// commonly use let through against a strict sliding-window contract (or a
// provider's fixed windows or bucket, and in units for cost rules): the
// in-process libraries (golang.org/x/time/rate, go.uber.org/ratelimit,
// throttled's memory store), the Redis libraries (redis_rate, throttled,
// ulule/limiter) and the Redis designs users write by hand
// (internal/specimens/handwritten), on adversarial workloads run by the simulator.
// It searches for a setting that the checker finds clean on every workload
// and seed, says so when a design has none, and searches for each design's
// worst arrival schedule, written as a scenario the simulator replays.
//
// It is the library behind `rlcheck audit`.
package audit
