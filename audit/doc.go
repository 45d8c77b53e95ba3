// Package audit measures what the rate limiters Go services commonly use
// (golang.org/x/time/rate, go.uber.org/ratelimit; see strategies/libs) let
// through against a strict sliding-window contract, on adversarial
// workloads run by the simulator, and searches for a setting that the
// checker finds clean on every workload and seed.
//
// It is the library behind `rlcheck audit`.
package audit
